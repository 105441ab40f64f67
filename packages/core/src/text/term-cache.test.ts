import { describe, expect, it } from 'vitest';
import { hashRange, PACKED_KEY, packedHash, TermCache } from './term-cache.js';
import { NOT_PACKED, scanTokens, TokenSpans } from './tokenizer.js';

describe('TermCache', () => {
  it('finds entries by a range of a larger text', () => {
    const cache = new TermCache(100);
    cache.set('cat', hashRange('cat', 0, 3), 'CAT');
    cache.set('the', hashRange('the', 0, 3), null);
    const text = 'the cat sat';
    expect(cache.get(text, 4, 7, hashRange(text, 4, 7))).toBe('CAT');
    expect(cache.get(text, 0, 3, hashRange(text, 0, 3))).toBeNull();
    expect(cache.get(text, 8, 11, hashRange(text, 8, 11))).toBeUndefined();
  });

  it('tells apart keys whose hashes collide', () => {
    const cache = new TermCache(100);
    cache.set('ab', 7, 'first');
    cache.set('cd', 7, 'second');
    cache.set('abc', 7, 'third');
    expect(cache.get('ab', 0, 2, 7)).toBe('first');
    expect(cache.get('cd', 0, 2, 7)).toBe('second');
    expect(cache.get('abc', 0, 3, 7)).toBe('third');
    expect(cache.get('ef', 0, 2, 7)).toBeUndefined();
  });

  it('grows, then starts over in a new key space when asked once its limit is reached', () => {
    const cache = new TermCache(5000);
    for (let i = 0; i < 4999; i++) cache.set(`k${i}`, hashRange(`k${i}`, 0, `k${i}`.length), `v${i}`);
    const space = cache.space;
    expect(cache.startOverIfFull()).toBe(false);
    // Past the limit within one text: kept, so that the text's keys share one numbering.
    for (let i = 4999; i < 6000; i++) cache.set(`k${i}`, hashRange(`k${i}`, 0, `k${i}`.length), `v${i}`);
    expect(cache.count).toBe(6000);
    for (let i = 0; i < 6000; i += 97)
      expect(cache.get(`k${i}`, 0, `k${i}`.length, hashRange(`k${i}`, 0, `k${i}`.length))).toBe(`v${i}`);
    expect(cache.space).toBe(space);
    expect(cache.startOverIfFull()).toBe(true);
    expect(cache.space).not.toBe(space);
    expect(cache.count).toBe(0);
    expect(cache.set('new', hashRange('new', 0, 3), 'entry')).toBe(1);
    expect(cache.get('new', 0, 3, hashRange('new', 0, 3))).toBe('entry');
    expect(cache.get('k1', 0, 2, hashRange('k1', 0, 2))).toBeUndefined();
  });

  it('numbers entries from 0 in insertion order, the sign telling dropped tokens', () => {
    const cache = new TermCache(100);
    const text = 'the cat';
    expect(cache.set('cat', hashRange('cat', 0, 3), 'CAT')).toBe(1);
    expect(cache.set('the', hashRange('the', 0, 3), null)).toBe(-2);
    expect(cache.find(text, 4, 7, hashRange(text, 4, 7))).toBe(1);
    expect(cache.find(text, 0, 3, hashRange(text, 0, 3))).toBe(-2);
    expect(cache.find(text, 0, 2, hashRange(text, 0, 2))).toBe(0);
    expect(cache.term(0)).toBe('CAT');
    expect(cache.term(1)).toBeNull();
  });

  it('keeps keys of 1 to 12 ASCII characters packed in their slot, and others in the pool', () => {
    const cache = new TermCache(100);
    const keys = [
      'a',
      'abcdefgh',
      'abcdefghi',
      'abcdefghijkl',
      'abcdefghijklm',
      'é',
      'ab\u0000',
      '\u0000ab',
      'ab',
      'AB',
      'x-1.5',
      '',
    ];
    const packedKeys = new Set(['a', 'abcdefgh', 'abcdefghi', 'abcdefghijkl', 'ab', 'AB', 'x-1.5']);
    keys.forEach((key, i) => {
      const hash = hashRange(key, 0, key.length);
      const packable = packedKeys.has(key);
      expect((hash & PACKED_KEY) !== 0, key).toBe(packable);
      expect(cache.set(key, hash, `term ${i}`)).toBe(i + 1);
    });
    // Each key finds its own entry, from a range of a larger text too: 'ab' is not '\0ab' or 'ab\0'.
    keys.forEach((key, i) => {
      const text = ` ${key} `;
      expect(cache.get(text, 1, key.length + 1, hashRange(text, 1, key.length + 1))).toBe(`term ${i}`);
    });
    expect(cache.get('abcdefg', 0, 7, hashRange('abcdefg', 0, 7))).toBeUndefined();
    expect(cache.get('bcdefghi', 0, 8, hashRange('bcdefghi', 0, 8))).toBeUndefined();
    expect(cache.get('bcdefghijkl', 0, 11, hashRange('bcdefghijkl', 0, 11))).toBeUndefined();
    expect(cache.get('bcdefghijklm', 0, 12, hashRange('bcdefghijklm', 0, 12))).toBeUndefined();
  });

  it('finds a packed key from the words the tokenizer packs, as from its text', () => {
    const text = "short words and possessives: john's john twelve-chars characters internationalisation";
    const spans = new TokenSpans();
    scanTokens(text, false, spans);
    const cache = new TermCache(100);
    for (let t = 0; t < spans.count; t++) {
      const token = spans.text(text, t, false);
      const packed = spans.data[t * 5 + 1]!;
      const hash = hashRange(token, 0, token.length);
      const entry = cache.get(token, 0, token.length, hash) ?? null;
      if (entry === null) cache.set(token, hash, token.toUpperCase());
      if ((packed & NOT_PACKED) === 0) {
        const [word0, word1, word2] = spans.data.subarray(t * 5 + 2, t * 5 + 5);
        expect(packedHash(word0!, word1!, word2!)).toBe(hash);
        expect(cache.term(cache.findPacked(word0!, word1!, word2!, hash) - 1)).toBe(token.toUpperCase());
      } else {
        // Too long, or a possessive removed ('john' of "john's", packed by its text instead).
        expect(token.length > 12 || token === 'john').toBe(true);
      }
    }
    // "john's" and "john" are one key.
    const distinct = ['short', 'words', 'and', 'possessives', 'john', 'twelve', 'chars', 'characters'];
    expect(cache.count).toBe(distinct.length + 1);
  });

  it('keeps packed and pool keys findable as the table grows', () => {
    const cache = new TermCache(10_000);
    const keys = Array.from({ length: 6000 }, (_, i) =>
      i % 3 === 0 ? `k${i}` : i % 3 === 1 ? `a-much-longer-key-${i}` : `clé${i}`,
    );
    for (const key of keys) cache.set(key, hashRange(key, 0, key.length), key.toUpperCase());
    for (const key of keys)
      expect(cache.get(key, 0, key.length, hashRange(key, 0, key.length))).toBe(key.toUpperCase());
    expect(cache.get('k1', 0, 2, hashRange('k1', 0, 2))).toBeUndefined();
  });

  it('prefetches slots of any kind without changing what is found', () => {
    const cache = new TermCache(100);
    const keys = ['cat', 'catalogue', 'café'];
    for (const key of keys) cache.set(key, hashRange(key, 0, key.length), key);
    const hashes = Int32Array.from([...keys, 'missing', 'missing-long-key'], (key) =>
      hashRange(key, 0, key.length),
    );
    expect(typeof cache.prefetch(hashes, hashes.length)).toBe('number');
    for (const key of keys) expect(cache.get(key, 0, key.length, hashRange(key, 0, key.length))).toBe(key);
  });

  it('hashes are never 0 and fit in 30 bits', () => {
    for (const text of ['', 'a', 'hello', 'hello world', 'مرحبا', '😀']) {
      const hash = hashRange(text, 0, text.length);
      expect(hash).not.toBe(0);
      expect(hash >>> 30).toBe(0);
    }
  });
});
