import { describe, expect, it } from 'vitest';
import { AbortedError, InvalidArgumentError } from '../../errors/index.js';
import type { Embedder } from '../embedder.js';
import { CachedEmbedder, LruCache } from './index.js';

/** Counts calls; the vector encodes the text's length, so results are checkable. */
class CountingEmbedder implements Embedder {
  readonly dimension = 2;
  embedCalls = 0;
  queryCalls = 0;
  constructor(withQuery = true) {
    if (!withQuery) this.embedQuery = undefined;
  }
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.embedCalls++;
    return texts.map((t) => Float32Array.of(t.length, 1));
  }
  embedQuery?: (text: string) => Promise<Float32Array> = async (text) => {
    this.queryCalls++;
    return Float32Array.of(text.length, 2);
  };
}

describe('LruCache', () => {
  it('evicts the least recently used entry; get refreshes, peek and has do not', () => {
    const cache = new LruCache<string, number>(3);
    cache.set('a', 1).set('b', 2).set('c', 3);
    expect(cache.get('a')).toBe(1); // a is now the most recent
    cache.set('d', 4); // evicts b
    expect([...cache.keys()]).toEqual(['c', 'a', 'd']);
    expect(cache.peek('c')).toBe(3);
    expect(cache.has('c')).toBe(true);
    cache.set('e', 5); // c is still the oldest: peek and has did not refresh it
    expect([...cache.keys()]).toEqual(['a', 'd', 'e']);
    cache.set('a', 10); // re-setting refreshes and replaces
    cache.set('f', 6);
    expect([...cache.keys()]).toEqual(['e', 'a', 'f']);
    expect(cache.get('a')).toBe(10);
    expect(cache.size).toBe(3);
    expect(cache.delete('e')).toBe(true);
    expect(cache.get('missing')).toBeUndefined();
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it('holds an undefined value as a value', () => {
    const cache = new LruCache<string, undefined | number>(2);
    cache.set('u', undefined).set('x', 1);
    cache.get('u');
    cache.set('y', 2); // x is evicted, not u
    expect([...cache.keys()]).toEqual(['u', 'y']);
  });

  it('caches nothing with maxEntries 0 and rejects bad bounds', () => {
    const cache = new LruCache<string, number>(0);
    cache.set('a', 1);
    expect(cache.size).toBe(0);
    expect(() => new LruCache(-1)).toThrow(InvalidArgumentError);
    expect(() => new LruCache(1.5)).toThrow(InvalidArgumentError);
  });
});

describe('CachedEmbedder', () => {
  it('caches query embeddings: hit, miss and LRU eviction order', async () => {
    const inner = new CountingEmbedder();
    const cached = new CachedEmbedder(inner, { maxEntries: 2 });
    expect(cached.dimension).toBe(2);
    expect(Array.from(await cached.embedQuery('aa'))).toEqual([2, 2]);
    await cached.embedQuery('bbb');
    await cached.embedQuery('aa'); // hit: 'aa' becomes the most recent
    expect(cached.stats()).toEqual({ hits: 1, misses: 2, size: 2 });
    await cached.embedQuery('c'); // evicts 'bbb', the least recently used
    await cached.embedQuery('aa'); // still cached
    expect(inner.queryCalls).toBe(3);
    await cached.embedQuery('bbb'); // was evicted: embedded again
    expect(inner.queryCalls).toBe(4);
    expect(cached.stats()).toEqual({ hits: 2, misses: 4, size: 2 });
  });

  it('passes documents through uncached', async () => {
    const inner = new CountingEmbedder();
    const cached = new CachedEmbedder(inner);
    await cached.embed(['x', 'y']);
    await cached.embed(['x', 'y']);
    expect(inner.embedCalls).toBe(2);
    expect(cached.stats()).toEqual({ hits: 0, misses: 0, size: 0 });
  });

  it('falls back to embed for embedders without embedQuery', async () => {
    const inner = new CountingEmbedder(false);
    const cached = new CachedEmbedder(inner);
    expect(Array.from(await cached.embedQuery('abcd'))).toEqual([4, 1]);
    await cached.embedQuery('abcd');
    expect(inner.embedCalls).toBe(1);
  });

  it('gives each caller its own copy, so mutation cannot corrupt the cache', async () => {
    const cached = new CachedEmbedder(new CountingEmbedder());
    const first = await cached.embedQuery('abc');
    first[0] = 99;
    const second = await cached.embedQuery('abc');
    expect(Array.from(second)).toEqual([3, 2]);
    second[1] = 42;
    expect(Array.from(await cached.embedQuery('abc'))).toEqual([3, 2]);
  });

  it('keeps caches per instance, and clear() empties one', async () => {
    const inner = new CountingEmbedder();
    const one = new CachedEmbedder(inner);
    const two = new CachedEmbedder(inner);
    await one.embedQuery('q');
    await two.embedQuery('q');
    expect(inner.queryCalls).toBe(2);
    expect(one.stats().size).toBe(1);
    one.clear();
    expect(one.stats()).toEqual({ hits: 0, misses: 1, size: 0 });
    expect(two.stats().size).toBe(1);
    await two.embedQuery('q');
    expect(two.stats().hits).toBe(1);
  });

  it('honours an aborted signal before any work', async () => {
    const inner = new CountingEmbedder();
    const cached = new CachedEmbedder(inner);
    const controller = new AbortController();
    controller.abort();
    await expect(cached.embedQuery('q', { signal: controller.signal })).rejects.toSatisfy(
      AbortedError.isInstance,
    );
    expect(inner.queryCalls).toBe(0);
  });

  it('rejects a bad bound', () => {
    expect(() => new CachedEmbedder(new CountingEmbedder(), { maxEntries: -5 })).toThrow(
      InvalidArgumentError,
    );
  });
});

describe('CachedEmbedder over HashEmbedder', () => {
  it('returns the same vectors as the embedder it wraps', async () => {
    const { HashEmbedder } = await import('./index.js');
    const inner = new HashEmbedder({ dimension: 64 });
    const cached = new CachedEmbedder(inner, { maxEntries: 10 });
    const query = 'hybrid retrieval with fusion';
    expect(await cached.embedQuery(query)).toEqual(inner.embedSync(query));
    expect(await cached.embedQuery(query)).toEqual(inner.embedSync(query));
    expect(await cached.embed([query])).toEqual([inner.embedSync(query)]);
    expect(cached.stats()).toEqual({ hits: 1, misses: 1, size: 1 });
  });
});
