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

  it('grows, then starts over when its limit is reached', () => {
    const cache = new TermCache(5000);
    for (let i = 0; i < 5000; i++) cache.set(`k${i}`, hashRange(`k${i}`, 0, `k${i}`.length), `v${i}`);
    expect(cache.count).toBe(5000);
    for (let i = 0; i < 5000; i += 97)
      expect(cache.get(`k${i}`, 0, `k${i}`.length, hashRange(`k${i}`, 0, `k${i}`.length))).toBe(`v${i}`);
    cache.set('new', hashRange('new', 0, 3), 'entry');
    expect(cache.count).toBe(1);
    expect(cache.get('new', 0, 3, hashRange('new', 0, 3))).toBe('entry');
    expect(cache.get('k1', 0, 2, hashRange('k1', 0, 2))).toBeUndefined();
  });

  it('hashes are never 0 and fit in 30 bits', () => {
    for (const text of ['', 'a', 'hello', 'مرحبا', '😀']) {
      const hash = hashRange(text, 0, text.length);
      expect(hash).not.toBe(0);
      expect(hash >>> 30).toBe(0);
    }
  });
});
