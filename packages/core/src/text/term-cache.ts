/**
 * A bounded cache from surface token to analysed term, looked up straight from a range of the
 * source text: a hit compares characters in place and allocates nothing, which is what makes
 * analysis fast (most tokens of a text are words seen before).
 *
 * Open addressing with linear probing over a typed array of (hash, entry) pairs, the keys and
 * terms side by side in one dense array: with a large vocabulary the cost of analysis is
 * memory latency, so a lookup touches few cache lines, and growing or clearing the cache only
 * allocates typed arrays, which are cheap (large pre-filled JS arrays are not). When `limit`
 * entries are reached the cache starts over empty, which keeps memory bounded on endless
 * streams of new tokens.
 */
export class TermCache {
  /** Slot s: hash at [2s] (0 = empty), entry number + 1 at [2s + 1]. */
  private table: Int32Array;
  /** Entry e: key at [2e], term at [2e + 1] (null = dropped). */
  private entries: Array<string | null> = [];
  private mask: number;
  private size = 0;
  private readonly maxCapacity: number;

  constructor(private readonly limit: number) {
    let capacity = 1;
    while (capacity < limit * 2) capacity *= 2;
    this.maxCapacity = capacity;
    const initial = Math.min(4096, capacity);
    this.table = new Int32Array(initial * 2);
    this.mask = initial - 1;
  }

  /** Number of cached tokens. */
  get count(): number {
    return this.size;
  }

  /**
   * The term cached for `text[start, end)`, whose `hashRange` is `hash`: a string, null for a
   * dropped token, undefined if not cached.
   */
  get(text: string, start: number, end: number, hash: number): string | null | undefined {
    const table = this.table;
    const mask = this.mask;
    const length = end - start;
    let slot = hash & mask;
    for (;;) {
      const stored = table[slot * 2];
      if (stored === 0) return undefined;
      if (stored === hash) {
        const entry = (table[slot * 2 + 1]! - 1) * 2;
        const key = this.entries[entry] as string;
        // startsWith compares natively, as fast as a loop and simpler.
        if (key.length === length && text.startsWith(key, start)) return this.entries[entry + 1];
      }
      slot = (slot + 1) & mask;
    }
  }

  /** Caches `term` (null: dropped) for `key`, not already present, whose `hashRange` is `hash`. */
  set(key: string, hash: number, term: string | null): void {
    const capacity = this.mask + 1;
    if (this.size >= this.limit) {
      this.table = new Int32Array(capacity * 2);
      this.entries = [];
      this.size = 0;
    } else if (this.size * 2 >= capacity && capacity < this.maxCapacity) {
      this.grow(capacity * 2);
    }
    this.entries.push(key, term);
    this.size++;
    this.place(hash, this.size);
  }

  private place(hash: number, entryPlusOne: number): void {
    const table = this.table;
    let slot = hash & this.mask;
    while (table[slot * 2] !== 0) slot = (slot + 1) & this.mask;
    table[slot * 2] = hash;
    table[slot * 2 + 1] = entryPlusOne;
  }

  private grow(capacity: number): void {
    const old = this.table;
    this.table = new Int32Array(capacity * 2);
    this.mask = capacity - 1;
    for (let at = 0; at < old.length; at += 2) if (old[at] !== 0) this.place(old[at]!, old[at + 1]!);
  }
}

/** FNV-1a offset basis and prime: the scanner hashes ASCII tokens with them as it reads them. */
export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;

/** The cache hash of `text[start, end)`: FNV-1a over its UTF-16 code units, finished. */
export function hashRange(text: string, start: number, end: number): number {
  let hash = FNV_OFFSET;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  return finishHash(hash);
}

/**
 * Finishes a raw FNV-1a state into a cache hash: mixed so the low bits spread, cut to 30 bits
 * (a small integer in V8 wherever it is passed around) and never 0, the empty-slot mark.
 */
export function finishHash(state: number): number {
  let hash = state ^ (state >>> 16);
  hash = Math.imul(hash, 0x85ebca6b);
  hash = (hash ^ (hash >>> 13)) & 0x3fffffff;
  return hash === 0 ? 1 : hash;
}
