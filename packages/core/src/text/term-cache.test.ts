import { describe, expect, it } from 'vitest';
import { hashRange, TermCache } from './term-cache.js';

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

  it('hashes are never 0 and fit in 30 bits', () => {
    for (const text of ['', 'a', 'hello', 'مرحبا', '😀']) {
      const hash = hashRange(text, 0, text.length);
      expect(hash).not.toBe(0);
      expect(hash >>> 30).toBe(0);
    }
  });
});
