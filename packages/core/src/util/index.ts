export { sha256Hex, syncDirectory, writeFileDurably } from './durable-files.js';
export { LruCache } from './lru-cache.js';
