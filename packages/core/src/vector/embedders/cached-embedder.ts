import { throwIfAborted, ZerdaError } from '../../errors/index.js';
import { LruCache } from '../../util/index.js';
import type { Embedder } from '../embedder.js';

export interface CachedEmbedderOptions {
  /** Most query embeddings kept (default 1000); the least recently used go first. 0 caches nothing. */
  maxEntries?: number;
}

export interface CacheStats {
  hits: number;
  misses: number;
  /** Entries held now. */
  size: number;
}

/**
 * Wraps an embedder with a bounded, per-instance LRU cache of query embeddings: repeated queries
 * are embedded once. Documents (`embed`) pass straight through, since they are rarely
 * embedded twice and would only push queries out. Callers get their own copy of a cached
 * vector, so changing it cannot corrupt the cache.
 */
export class CachedEmbedder implements Embedder {
  readonly inner: Embedder;
  readonly #cache: LruCache<string, Float32Array>;
  #hits = 0;
  #misses = 0;

  constructor(inner: Embedder, options: CachedEmbedderOptions = {}) {
    this.inner = inner;
    this.#cache = new LruCache(options.maxEntries ?? 1000);
  }

  get dimension(): number {
    return this.inner.dimension;
  }

  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<Float32Array[]> {
    return this.inner.embed(texts, options);
  }

  async embedQuery(text: string, options: { signal?: AbortSignal } = {}): Promise<Float32Array> {
    throwIfAborted(options.signal);
    const cached = this.#cache.get(text);
    if (cached !== undefined) {
      this.#hits++;
      return cached.slice();
    }
    this.#misses++;
    const vector = this.inner.embedQuery
      ? await this.inner.embedQuery(text, options)
      : (await this.inner.embed([text], options))[0];
    if (!(vector instanceof Float32Array)) {
      throw new ZerdaError({ message: `the wrapped embedder returned no Float32Array for the query` });
    }
    this.#cache.set(text, vector.slice());
    return vector;
  }

  /** Empties the cache (the counters are kept). */
  clear(): void {
    this.#cache.clear();
  }

  stats(): CacheStats {
    return { hits: this.#hits, misses: this.#misses, size: this.#cache.size };
  }
}
