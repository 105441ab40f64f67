export { crc32 } from './crc32.js';
export { LruCache } from './lru-cache.js';
export { sha256Hex } from './sha256.js';
