import { describe, expect, it } from 'vitest';
import { comparableChunk, expectedSimilarity, seededUnitVectors, seededVectors } from './fixtures.js';

describe('conformance fixtures', () => {
  it('scores each metric as Zerda defines it', () => {
    expect(expectedSimilarity('cosine', [1, 0], [3, 3])).toBeCloseTo(Math.SQRT1_2, 12);
    expect(expectedSimilarity('cosine', [1, 0], [0, 0])).toBe(0);
    expect(expectedSimilarity('dot', [1, 2], [3, -4])).toBe(-5);
    expect(expectedSimilarity('l2', [0, 0], [3, 4])).toBe(1 / 6);
  });

  it('makes the same vectors for the same seed, float32-exact, and unit vectors of length 1', () => {
    expect(seededVectors(3, 4, 5)).toEqual(seededVectors(3, 4, 5));
    expect(seededVectors(3, 4, 5)).not.toEqual(seededVectors(4, 4, 5));
    for (const vector of seededVectors(3, 4, 5))
      for (const value of vector) expect(Math.fround(value)).toBe(value);
    for (const vector of seededUnitVectors(3, 4, 5)) expect(Math.hypot(...vector)).toBeCloseTo(1, 12);
  });

  it('compares chunks with an empty metadata object the same as none', () => {
    expect(comparableChunk({ id: 'a', text: 't', metadata: {} })).toEqual({ id: 'a', text: 't' });
    expect(comparableChunk({ id: 'a', text: 't', docId: 'd', metadata: { x: 1 } })).toEqual({
      id: 'a',
      text: 't',
      docId: 'd',
      metadata: { x: 1 },
    });
  });
});
