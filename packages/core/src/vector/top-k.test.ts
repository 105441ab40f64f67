import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FirstAtLeast, selectTopK } from './top-k.js';

/** The reference: a full stable sort by score (descending), index breaking ties, cut to k. */
function sortTopK(scores: ArrayLike<number>, k: number, accept: (index: number) => boolean = () => true) {
  const entries = Array.from(scores, (score, index) => ({ score, index })).filter(
    (entry) => !Number.isNaN(entry.score) && accept(entry.index),
  );
  entries.sort((a, b) => b.score - a.score || a.index - b.index);
  return entries.slice(0, k);
}

function asEntries(result: ReturnType<typeof selectTopK>) {
  return Array.from(result.indices, (index, position) => ({ score: result.scores[position]!, index }));
}

describe('selectTopK', () => {
  it('equals a full sort, ties included', () => {
    fc.assert(
      fc.property(
        // Few distinct values, so ties are common.
        fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 300 }),
        fc.integer({ min: 0, max: 40 }),
        (values, k) => {
          const scores = Float32Array.from(values);
          expect(asEntries(selectTopK(scores, scores.length, k))).toEqual(sortTopK(scores, k));
        },
      ),
    );
  });

  it('gives the same result with a skip loop of its own (firstAtLeast), ties broken by key', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 300 }),
        fc.integer({ min: 0, max: 40 }),
        (values, k) => {
          const scores = Float32Array.from(values);
          const tieKey = (index: number) => `id-${(index * 7919) % 301}`;
          let calls = 0;
          const firstAtLeast: FirstAtLeast = (from, count, threshold) => {
            calls++;
            let i = from;
            while (i < count && !(scores[i]! >= threshold)) i++;
            return i;
          };
          const expected = selectTopK(scores, scores.length, k, undefined, tieKey);
          expect(selectTopK(scores, scores.length, k, undefined, tieKey, firstAtLeast)).toEqual(expected);
          const sorted = Array.from(scores, (score, index) => ({ score, index })).sort(
            (a, b) => b.score - a.score || (tieKey(a.index) < tieKey(b.index) ? -1 : 1),
          );
          expect(asEntries(expected)).toEqual(sorted.slice(0, k));
          if (k > 0 && scores.length > k) expect(calls).toBeGreaterThan(0);
        },
      ),
    );
  });

  it('equals a full sort of the accepted entries when given a predicate', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { maxLength: 300 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 7 }),
        (values, k, modulus) => {
          const accept = (index: number) => index % modulus === 0;
          expect(asEntries(selectTopK(values, values.length, k, accept))).toEqual(
            sortTopK(values, k, accept),
          );
        },
      ),
    );
  });

  it('asks the predicate only about entries that would enter the top k', () => {
    const scores = Float32Array.from({ length: 10_000 }, (_, index) => index % 100);
    let asked = 0;
    const result = selectTopK(scores, scores.length, 5, () => {
      asked++;
      return true;
    });
    expect(Array.from(result.scores)).toEqual([99, 99, 99, 99, 99]);
    expect(Array.from(result.indices)).toEqual([99, 199, 299, 399, 499]);
    expect(asked).toBeLessThan(500);
  });

  it('reads only the first `count` scores, skips NaN, and handles k beyond the count', () => {
    const scores = Float32Array.from([0.5, Number.NaN, 0.9, 0.1, 7]);
    const result = selectTopK(scores, 4, 10);
    expect(Array.from(result.indices)).toEqual([2, 0, 3]);
    expect(Array.from(result.scores)).toEqual([Math.fround(0.9), 0.5, Math.fround(0.1)]);
    expect(selectTopK(scores, 4, 0).indices.length).toBe(0);
    expect(selectTopK(scores, 0, 3).indices.length).toBe(0);
  });
});
