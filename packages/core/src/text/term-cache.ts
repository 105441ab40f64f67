/**
 * A bounded cache from surface token to analysed term, looked up straight from a range of the
 * source text: a hit compares characters in place and allocates nothing, which is what makes
 * analysis fast (most tokens of a text are words seen before).
 *
 * Open addressing with linear probing over one array of (hash, key, term) triples, so a lookup
 * touches one cache line plus the key's characters: with a large vocabulary the cost of
 * analysis is memory latency, not computation. When `limit` entries are reached the cache
 * starts over empty, which keeps memory bounded on endless streams of new tokens.
 */
export class TermCache {
  /** Slot s: hash at [3s] (0 = empty), key at [3s + 1], term at [3s + 2] (null = dropped). */
  private slots: Array<number | string | null> = [];
  private mask = 0;
  private size = 0;
  private readonly maxCapacity: number;

  constructor(private readonly limit: number) {
    let capacity = 1;
    while (capacity < limit * 2) capacity *= 2;
    this.maxCapacity = capacity;
    this.allocate(Math.min(4096, capacity));
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
    const slots = this.slots;
    const mask = this.mask;
    const length = end - start;
    let slot = hash & mask;
    for (;;) {
      const at = slot * 3;
      const stored = slots[at];
      if (stored === 0) return undefined;
      if (stored === hash) {
        const key = slots[at + 1] as string;
        // startsWith compares natively, as fast as a loop and simpler.
        if (key.length === length && text.startsWith(key, start)) return slots[at + 2] as string | null;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** Caches `term` (null: dropped) for `key`, not already present, whose `hashRange` is `hash`. */
  set(key: string, hash: number, term: string | null): void {
    if (this.size >= this.limit) this.allocate(this.slots.length / 3);
    else if (this.size * 2 >= this.mask + 1 && this.mask + 1 < this.maxCapacity) this.rehash();
    this.insert(key, hash, term);
  }

  private insert(key: string, hash: number, term: string | null): void {
    const slots = this.slots;
    let slot = hash & this.mask;
    while (slots[slot * 3] !== 0) slot = (slot + 1) & this.mask;
    slots[slot * 3] = hash;
    slots[slot * 3 + 1] = key;
    slots[slot * 3 + 2] = term;
    this.size++;
  }

  private allocate(capacity: number): void {
    const slots = new Array<number | string | null>(capacity * 3);
    for (let at = 0; at < slots.length; at += 3) {
      slots[at] = 0;
      slots[at + 1] = '';
      slots[at + 2] = null;
    }
    this.slots = slots;
    this.mask = capacity - 1;
    this.size = 0;
  }

  private rehash(): void {
    const old = this.slots;
    this.allocate(((this.mask + 1) * 2) | 0);
    for (let at = 0; at < old.length; at += 3) {
      if (old[at] !== 0) this.insert(old[at + 1] as string, old[at] as number, old[at + 2] as string | null);
    }
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
 * so V8 stores it unboxed (a small integer) in the slot array, and never 0 (the empty mark).
 */
export function finishHash(state: number): number {
  let hash = state ^ (state >>> 16);
  hash = Math.imul(hash, 0x85ebca6b);
  hash = (hash ^ (hash >>> 13)) & 0x3fffffff;
  return hash === 0 ? 1 : hash;
}
