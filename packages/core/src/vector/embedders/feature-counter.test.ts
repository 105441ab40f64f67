import { describe, expect, it } from 'vitest';
import { FeatureCounter } from './feature-counter.js';

describe('FeatureCounter', () => {
  it('counts hashes across growth, in insertion order, and resets', () => {
    const counter = new FeatureCounter();
    const expected = new Map<number, number>();
    for (let i = 0; i < 5000; i++) {
      // Spread over the whole 32-bit range, with repeats and colliding low bits.
      const hash = (Math.imul(i % 3000, 0x9e3779b1) >>> 0) | 0x400;
      counter.add(hash);
      expected.set(hash >>> 0, (expected.get(hash >>> 0) ?? 0) + 1);
    }
    const seen: Array<[number, number]> = [];
    counter.forEach((hash, count) => {
      seen.push([hash, count]);
    });
    expect(seen).toEqual([...expected]);
    expect(counter.size).toBe(expected.size);
    counter.reset();
    expect(counter.size).toBe(0);
    counter.add(7);
    counter.add(7);
    const after: Array<[number, number]> = [];
    counter.forEach((hash, count) => {
      after.push([hash, count]);
    });
    expect(after).toEqual([[7, 2]]);
  });
});
