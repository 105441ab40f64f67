import { InvalidArgumentError } from '../errors/index.js';

/**
 * A bounded least-recently-used cache. A `Map` keeps insertion order, so re-inserting a key on
 * access makes the first key the least recently used one: every operation is O(1).
 * `maxEntries = 0` caches nothing.
 */
export class LruCache<K, V> {
  readonly maxEntries: number;
  readonly #map = new Map<K, V>();

  constructor(maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 0) {
      throw new InvalidArgumentError({
        argument: 'maxEntries',
        value: maxEntries,
        message: 'must be an integer >= 0',
      });
    }
    this.maxEntries = maxEntries;
  }

  get size(): number {
    return this.#map.size;
  }

  /** The value for `key`, which becomes the most recently used; `undefined` if absent. */
  get(key: K): V | undefined {
    if (!this.#map.has(key)) return undefined;
    const value = this.#map.get(key) as V;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  /** The value for `key` without touching its recency. */
  peek(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Stores `value` as the most recently used entry, evicting the least recently used beyond the bound. */
  set(key: K, value: V): this {
    if (this.maxEntries === 0) return this;
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.maxEntries) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
    return this;
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }

  /** Keys from least to most recently used. */
  keys(): IterableIterator<K> {
    return this.#map.keys();
  }
}
