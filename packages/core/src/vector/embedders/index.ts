export { LruCache } from '../../util/lru-cache.js';
export { CachedEmbedder, type CachedEmbedderOptions, type CacheStats } from './cached-embedder.js';
export { HashEmbedder, type HashEmbedderOptions, type HashEmbedderWeights } from './hash-embedder.js';
