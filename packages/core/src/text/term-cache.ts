import { InvalidArgumentError } from '../errors/index.js';
import type { TermKeys } from './analyzer.js';

/**
 * A bounded cache from surface token to analysed term, looked up straight from a range of the
 * source text: a hit compares characters in place and allocates nothing, which is what makes
 * analysis fast (most tokens of a text are words seen before).
 *
 * Open addressing with linear probing over a typed array of slots holding each key's entry number
 * and the key: a key of 1 to 12 ASCII characters (nearly every token) is packed into three
 * integers kept in its slot (see `isPackable`), so a hit reads one slot and compares three
 * numbers; any other key lies in a character pool, its slot holding its hash and where it lies.
 * With a large vocabulary the cost of analysis is memory latency: a rare word's slot, and its
 * characters in the pool, are rarely in cache, so a packed key saves a miss and a loop over
 * characters (see also `prefetch`).
 * Growing or clearing the cache only allocates typed arrays, which are cheap (large pre-filled
 * JS arrays are not). Entries are numbered from 0 in insertion order; the numbers serve as term
 * keys (see `Analyzer.analyzeKeys`) until the cache starts over, which `startOverIfFull` does
 * once `limit` entries are reached and which changes `space`: memory stays bounded on endless
 * streams of new tokens, and the caller chooses when (between texts, so that the keys of one text
 * share one numbering).
 */
export class TermCache {
  /**
   * Slot s: at [4s] entry number + 1, negated for a dropped token (0 = empty); then for a packed
   * key its three words (see `isPackable`), each non-negative, at [4s + 1 .. 4s + 3]; for any
   * other key its hash with the sign bit set (`POOL_KEY`) at [4s + 1], its offset in `chars` at
   * [4s + 2] and its length at [4s + 3].
   */
  private table: Int32Array;
  /** The UTF-16 code units of the keys that are not packed, one after another in entry order. */
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
    if ((hash & PACKED_KEY) !== 0) {
      const words = packedWords(text, start, end);
      return this.findPacked(words[0]!, words[1]!, words[2]!, hash);
    }
    const table = this.table;
    const mask = this.mask;
    const length = end - start;
    const marked = hash | POOL_KEY;
    let slot = hash & mask;
    for (;;) {
      const at = slot * 4;
      if (table[at] === 0) return 0;
      if (table[at + 1] === marked && table[at + 3] === length) {
        // A loop the compiler inlines: cheaper than a call for words of a few characters.
        const chars = this.chars;
        const offset = table[at + 2]! - start;
        let i = start;
        while (i < end && text.charCodeAt(i) === chars[offset + i]) i++;
        if (i === end) return table[at]!;
      }
      slot = (slot + 1) & mask;
    }
  }

  /**
   * As `find`, for a packable key given as its three words (see `isPackable`) with their
   * `packedHash`: the key is equal when the words are, so no character is compared.
   */
  findPacked(word0: number, word1: number, word2: number, hash: number): number {
    const table = this.table;
    const mask = this.mask;
    let slot = hash & mask;
    for (;;) {
      const at = slot * 4;
      const found = table[at]!;
      if (found === 0) return 0;
      if (table[at + 1] === word0 && table[at + 2] === word1 && table[at + 3] === word2) return found;
      slot = (slot + 1) & mask;
    }
  }

  /**
   * Reads the slots the `count` hashes at `hashes` start their probes at, and for keys kept in the
   * character pool their first character there, before the lookups that need them: the reads do
   * not depend on each other, so the processor overlaps their cache misses (a rare word's slot is
   * rarely in cache), where the lookups, one after another, would wait for each in turn. Returns
   * a value made from what was read, for the caller to keep so that the reads are not elided.
   */
  prefetch(hashes: Int32Array, count: number): number {
    const table = this.table;
    const chars = this.chars;
    const mask = this.mask;
    let sink = 0;
    for (let t = 0; t < count; t++) {
      const hash = hashes[t]!;
      const at = (hash & mask) * 4;
      sink ^=
        (hash & PACKED_KEY) === 0 ? chars[Math.min(table[at + 2]! >>> 0, chars.length - 1)]! : table[at + 1]!;
    }
    return sink;
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
    this.terms.push(term);
    this.size++;
    const found = term === null ? -this.size : this.size;
    if ((hash & PACKED_KEY) !== 0) {
      const words = packedWords(key, 0, key.length);
      this.place(hash, found, words[0]!, words[1]!, words[2]!);
      return found;
    }
    const offset = this.charsUsed;
    if (offset + key.length > this.chars.length) {
      const grown = new Uint16Array(Math.max(this.chars.length * 2, offset + key.length));
      grown.set(this.chars);
      this.chars = grown;
    }
    const chars = this.chars;
    for (let i = 0; i < key.length; i++) chars[offset + i] = key.charCodeAt(i);
    this.charsUsed = offset + key.length;
    this.place(hash, found, hash | POOL_KEY, offset, key.length);
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

  private place(hash: number, found: number, key1: number, key2: number, key3: number): void {
    const table = this.table;
    const mask = this.mask;
    let slot = hash & mask;
    while (table[slot * 4] !== 0) slot = (slot + 1) & mask;
    const at = slot * 4;
    table[at] = found;
    table[at + 1] = key1;
    table[at + 2] = key2;
    table[at + 3] = key3;
  }

  private grow(capacity: number): void {
    const old = this.table;
    this.table = new Int32Array(capacity * 4);
    this.mask = capacity - 1;
    for (let at = 0; at < old.length; at += 4) {
      const found = old[at]!;
      if (found === 0) continue;
      const key1 = old[at + 1]!;
      const key2 = old[at + 2]!;
      const key3 = old[at + 3]!;
      // A pool key keeps its hash; a packed key's is made again from its words.
      const hash = key1 < 0 ? key1 & HASH_BITS : packedHash(key1, key2, key3);
      this.place(hash, found, key1, key2, key3);
    }
  }
}

let spaces = 0;
function nextSpace(): number {
  spaces = (spaces + 1) | 0;
  return spaces;
}

/** FNV-1a offset basis and prime, for keys that are not packed. */
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/** The longest key that is packed: 12 ASCII characters, a byte each, in three 32-bit words. */
export const PACKED_MAX_LENGTH = 12;
/**
 * Set in the hash of a packed key and clear in every other hash, so that a packed key is never
 * compared with a key in the character pool. Hashes keep to 30 bits (small integers in V8
 * wherever they are passed around), so the flag is bit 29 and the hash bits are below it.
 */
export const PACKED_KEY = 0x20000000;
const HASH_BITS = 0x1fffffff;
/** Marks a pool key's slot: its hash with the sign bit set, which no packed word has. */
const POOL_KEY = 1 << 31;

/**
 * The cache hash of `text[start, end)`: `packedHash` of its halves for a short ASCII key, else
 * FNV-1a over its UTF-16 code units, finished. Never 0 (the empty-slot mark).
 */
export function hashRange(text: string, start: number, end: number): number {
  if (isPackable(text, start, end)) {
    const words = packedWords(text, start, end);
    return packedHash(words[0]!, words[1]!, words[2]!);
  }
  let hash = FNV_OFFSET;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash = (hash ^ (hash >>> 13)) & HASH_BITS;
  return hash === 0 ? 1 : hash;
}

/**
 * The hash of a packed key from its words: mixed so the low bits (the slot) depend on every
 * character, with `PACKED_KEY` set.
 */
export function packedHash(word0: number, word1: number, word2: number): number {
  let hash = word0 ^ Math.imul(word1, 0x9e3779b1) ^ Math.imul(word2, 0x7feb352d);
  hash = Math.imul(hash ^ (hash >>> 15), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return ((hash ^ (hash >>> 16)) & HASH_BITS) | PACKED_KEY;
}

/**
 * Whether `text[start, end)` is packed: 1 to 12 characters, each from 1 to 127. A key's characters
 * are shifted in a byte at a time, the last one lowest, through three 32-bit words (word0 holds
 * the last four characters), so the words are the key's bytes behind leading zeros; since no
 * character is 0, those zeros tell the length and equal words mean equal keys. No byte reaches
 * 0x80, so no word is negative, which tells a packed key's slot from a pool key's. The tokenizer
 * packs tokens this way as it reads them (see `TokenSpans`).
 */
function isPackable(text: string, start: number, end: number): boolean {
  if (end - start < 1 || end - start > PACKED_MAX_LENGTH) return false;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code === 0 || code > 0x7f) return false;
  }
  return true;
}

const scratchWords = new Int32Array(3);

/** The three words of a packable `text[start, end)`, in one shared array (read them at once). */
function packedWords(text: string, start: number, end: number): Int32Array {
  let word0 = 0;
  let word1 = 0;
  let word2 = 0;
  for (let i = start; i < end; i++) {
    word2 = (word2 << 8) | (word1 >>> 24);
    word1 = (word1 << 8) | (word0 >>> 24);
    word0 = (word0 << 8) | text.charCodeAt(i);
  }
  scratchWords[0] = word0;
  scratchWords[1] = word1;
  scratchWords[2] = word2;
  return scratchWords;
}

/**
 * A copy of `token` that does not share memory with the text it was sliced from: V8 keeps the
 * whole parent string alive behind a slice of 13 or more characters, and the cached terms
 * derived from tokens (often the token itself, which indexes keep) must not pin whole documents.
 */
export function detach(token: string): string {
  return token.length < 13 ? token : ` ${token}`.slice(1);
}

/** Bound on `StringTermKeys`' cache, as the analysers' (it starts over when full). */
const STRING_KEYS_LIMIT = 200_000;

/**
 * Keys, as `Analyzer.analyzeKeys` hands them out, for the terms of an analyser that has only
 * `analyze`: an index then maps a term it has seen to its id through an array, the term found in
 * place in this cache (by two numbers when short and ASCII), where a Map would hash every token's
 * new string again.
 */
export class StringTermKeys {
  private readonly cache = new TermCache(STRING_KEYS_LIMIT);
  private readonly termOfKey = (key: number): string => this.cache.term(key) as string;

  /** Writes the keys of `terms` to `out`, as `analyzeKeys` would for the text they came from. */
  keysOf(terms: readonly string[], out: TermKeys): void {
    const cache = this.cache;
    cache.startOverIfFull();
    const count = terms.length;
    let keys = out.keys;
    if (keys.length < count) out.keys = keys = new Int32Array(Math.max(count, keys.length * 2));
    for (let i = 0; i < count; i++) {
      const term = terms[i];
      if (typeof term !== 'string') {
        throw new InvalidArgumentError({
          argument: 'analyzer',
          value: term,
          message: `analyze() returned a term that is not a string, at position ${i}`,
        });
      }
      const hash = hashRange(term, 0, term.length);
      let found = cache.find(term, 0, term.length, hash);
      if (found === 0) {
        const kept = detach(term);
        found = cache.set(kept, hash, kept);
      }
      keys[i] = found - 1;
    }
    out.count = count;
    out.space = cache.space;
    out.term = this.termOfKey;
  }
}
