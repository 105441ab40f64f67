import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from './__tests__/clustered-data.js';
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

  it('equals a full sort on large selections, where a sampled floor skips most entries', () => {
    // Large enough (8,192 entries and more, k of 32 and more) for the floor; shapes that a
    // strided sample could misjudge: ties, runs, sorted orders, the best entries in one block.
    const shapes: Record<string, (index: number, count: number, random: () => number) => number> = {
      random: (_, __, random) => random(),
      ties: (_, __, random) => Math.floor(random() * 6),
      ascending: (index) => index,
      descending: (index, count) => count - index,
      'best in one block': (index, count, random) =>
        index >= count / 2 && index < count / 2 + 500 ? 2 + random() : random(),
      'with NaN': (index, _, random) => (index % 3 === 0 ? Number.NaN : random()),
    };
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(shapes)),
        fc.integer({ min: 16_384, max: 70_000 }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer(),
        (shape, count, k, seed) => {
          const random = seededRandom(seed);
          const scores = Float32Array.from({ length: count }, (_, index) =>
            shapes[shape]!(index, count, random),
          );
          const tieKey = (index: number) => `id-${(index * 7919) % 100_003}`;
          const sorted = Array.from(scores, (score, index) => ({ score, index }))
            .filter((entry) => !Number.isNaN(entry.score))
            .sort((a, b) => b.score - a.score || (tieKey(a.index) < tieKey(b.index) ? -1 : 1));
          expect(asEntries(selectTopK(scores, count, k, undefined, tieKey))).toEqual(sorted.slice(0, k));
          expect(asEntries(selectTopK(scores, count, k))).toEqual(sortTopK(scores, k));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('selects again without the floor when fewer than k entries reach it', () => {
    // 50,000 entries and k = 100 sample every 48th entry and take the sample's 7th best as the
    // floor. Seven high scores exactly at the first seven sampled positions make it a floor that
    // only they reach.
    const count = 50_000;
    const random = seededRandom(7);
    const scores = Float32Array.from({ length: count }, () => random());
    for (let j = 0; j < 7; j++) scores[j * 48] = 1000 - j;
    const thresholds: number[] = [];
    const firstAtLeast: FirstAtLeast = (from, to, threshold) => {
      thresholds.push(threshold);
      let i = from;
      while (i < to && !(scores[i]! >= threshold)) i++;
      return i;
    };
    const result = selectTopK(scores, count, 100, undefined, undefined, firstAtLeast);
    expect(thresholds).toContain(994);
    expect(asEntries(result)).toEqual(sortTopK(scores, 100));
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
