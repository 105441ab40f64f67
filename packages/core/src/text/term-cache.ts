/**
 * A bounded cache from surface token to analysed term, looked up straight from a range of the
 * source text: a hit compares characters in place and allocates nothing, which is what makes
 * analysis fast (most tokens of a text are words seen before).
 *
 * Open addressing with linear probing over a typed array of slots holding each key's hash, entry
 * number and where its characters lie in a character pool: with a large vocabulary the cost of
 * analysis is memory latency, and a hit reads one slot and the key's characters, no object.
 * Growing or clearing the cache only allocates typed arrays, which are cheap (large pre-filled
 * JS arrays are not). Entries are numbered from 0 in insertion order; the numbers serve as term
 * keys (see `Analyzer.analyzeKeys`) until the cache starts over, which `startOverIfFull` does
 * once `limit` entries are reached and which changes `space`: memory stays bounded on endless
 * streams of new tokens, and the caller chooses when (between texts, so that the keys of one text
 * share one numbering).
 */
export class TermCache {
  /**
   * Slot s: hash at [4s] (0 = empty); at [4s + 1] entry number + 1, negated for a dropped token;
   * the key's offset in `chars` at [4s + 2] and its length at [4s + 3].
   */
  private table: Int32Array;
  /** The keys' UTF-16 code units, one after another in entry order. */
  private chars = new Uint16Array(4096);
  private charsUsed = 0;
  /** Term of each entry (null = dropped). */
  private terms: Array<string | null> = [];
  private mask: number;
  private size = 0;
  private readonly maxCapacity: number;
  /** The current numbering of entries: unique among all caches, changed when the cache starts over. */
  space = nextSpace();

  constructor(private readonly limit: number) {
    let capacity = 1;
    while (capacity < limit * 2) capacity *= 2;
    this.maxCapacity = capacity;
    const initial = Math.min(4096, capacity);
    this.table = new Int32Array(initial * 4);
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
    const found = this.find(text, start, end, hash);
    return found === 0 ? undefined : this.terms[(found < 0 ? -found : found) - 1]!;
  }

  /**
   * The entry of `text[start, end)`, whose `hashRange` is `hash`, as a signed number: entry + 1
   * for a term, -(entry + 1) for a dropped token, 0 if not cached.
   */
  find(text: string, start: number, end: number, hash: number): number {
    const table = this.table;
    const mask = this.mask;
    const length = end - start;
    let slot = hash & mask;
    for (;;) {
      const at = slot * 4;
      const stored = table[at];
      if (stored === 0) return 0;
      if (stored === hash && table[at + 3] === length) {
        // A loop the compiler inlines: cheaper than a call for words of a few characters.
        const chars = this.chars;
        const offset = table[at + 2]! - start;
        let i = start;
        while (i < end && text.charCodeAt(i) === chars[offset + i]) i++;
        if (i === end) return table[at + 1]!;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** The term of entry `entry` (null: dropped). */
  term(entry: number): string | null {
    return this.terms[entry]!;
  }

  /**
   * Caches `term` (null: dropped) for `key`, not already present, whose `hashRange` is `hash`;
   * returns the new entry as `find` would.
   */
  set(key: string, hash: number, term: string | null): number {
    const capacity = this.mask + 1;
    // Beyond `maxCapacity` only when one text holds more than `limit` new tokens.
    if (this.size * 2 >= capacity) this.grow(capacity * 2);
    const offset = this.charsUsed;
    if (offset + key.length > this.chars.length) {
      const grown = new Uint16Array(Math.max(this.chars.length * 2, offset + key.length));
      grown.set(this.chars);
      this.chars = grown;
    }
    const chars = this.chars;
    for (let i = 0; i < key.length; i++) chars[offset + i] = key.charCodeAt(i);
    this.charsUsed = offset + key.length;
    this.terms.push(term);
    this.size++;
    const found = term === null ? -this.size : this.size;
    this.place(hash, found, offset, key.length);
    return found;
  }

  /** Empties the cache if it holds `limit` entries or more; true if it did (the numbering changed). */
  startOverIfFull(): boolean {
    if (this.size < this.limit) return false;
    const capacity = Math.min(this.mask + 1, this.maxCapacity);
    this.table = new Int32Array(capacity * 4);
    this.mask = capacity - 1;
    this.chars = new Uint16Array(Math.min(this.chars.length, this.limit * 16));
    this.charsUsed = 0;
    this.terms = [];
    this.size = 0;
    this.space = nextSpace();
    return true;
  }

  private place(hash: number, found: number, offset: number, length: number): void {
    const table = this.table;
    const mask = this.mask;
    let slot = hash & mask;
    while (table[slot * 4] !== 0) slot = (slot + 1) & mask;
    const at = slot * 4;
    table[at] = hash;
    table[at + 1] = found;
    table[at + 2] = offset;
    table[at + 3] = length;
  }

  private grow(capacity: number): void {
    const old = this.table;
    this.table = new Int32Array(capacity * 4);
    this.mask = capacity - 1;
    for (let at = 0; at < old.length; at += 4) {
      if (old[at] !== 0) this.place(old[at]!, old[at + 1]!, old[at + 2]!, old[at + 3]!);
    }
  }
}

let spaces = 0;
function nextSpace(): number {
  spaces = (spaces + 1) | 0;
  return spaces;
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
