import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FusionConfigError, InvalidArgumentError } from '../errors/index.js';
import {
  CandidatePool,
  DEFAULT_FUSION_CONFIG,
  evidenceSpread,
  type FusedItem,
  fusePool,
  guardFactor,
  normalizeScores,
  parseFusionConfig,
  type RankedList,
  reciprocalRankFusion,
  resolveFusionConfig,
  type ScoreNormalization,
  scoreFusion,
  topCandidates,
} from './index.js';

const base = { combination: 'arithmetic', rrfK: 60, rrfBonusWeight: 0.5, guard: false } as const;

/** Lists of distinct-per-list ids from a small alphabet (so lists overlap), scores as given. */
const listsArbitrary = fc.array(
  fc.uniqueArray(
    fc.record({
      id: fc.constantFrom(...'abcdefghijklmnop'),
      score: fc.double({ min: -1, max: 5, noNaN: true }),
    }),
    { selector: (item) => item.id, minLength: 1, maxLength: 12 },
  ),
  { minLength: 1, maxLength: 3 },
);

function poolOf(lists: Array<Array<{ id: string; score: number }>>, lowerBound?: number): CandidatePool {
  return new CandidatePool(
    lists.map((items, i) => ({
      name: `l${i}`,
      ids: items.map((item) => item.id),
      scores: items.map((item) => item.score),
      ...(lowerBound === undefined ? {} : { lowerBound }),
    })),
  );
}

function fusedById(pool: CandidatePool, scores: Float64Array): Record<string, number> {
  return Object.fromEntries(
    Array.from(topCandidates(pool, scores, pool.size), (c) => [pool.ids[c], scores[c] as number]),
  );
}

/**
 * The same ids with the same scores (to `digits`), in the same order except where two scores are
 * equal up to rounding: sums taken in another order may differ in the last bit.
 */
function expectSameFusion(actual: Record<string, number>, expected: FusedItem[], digits: number): void {
  expect(Object.keys(actual).sort()).toEqual(expected.map((item) => item.id).sort());
  for (const item of expected) expect(actual[item.id]).toBeCloseTo(item.score, digits);
  const order = Object.keys(actual);
  expected.forEach((item, i) => {
    const other = order[i] as string;
    if (other !== item.id) expect(actual[other]).toBeCloseTo(item.score, digits);
  });
}

describe('fusePool, the fast path of HybridRetriever', () => {
  it('scores as scoreFusion and reciprocalRankFusion do on the same lists, and ranks the same', () => {
    fc.assert(
      fc.property(
        listsArbitrary,
        fc.constantFrom<ScoreNormalization>('minmax', 'zscore', 'dbsf', 'theoretical-minmax'),
        fc.array(fc.double({ min: 0.05, max: 3, noNaN: true }), { minLength: 3, maxLength: 3 }),
        (lists, normalization, weights) => {
          const ranked: RankedList[] = lists.map((items, i) => ({ name: `l${i}`, items, lowerBound: -1 }));
          const pool = poolOf(lists, -1);
          const w = weights.slice(0, lists.length);
          const weighted = fusePool(pool, { ...base, method: 'weighted', normalization, weights: w });
          const expected = scoreFusion(ranked, { normalization, weights: w });
          expectSameFusion(fusedById(pool, weighted.scores), expected, 12);
          const rrf = fusePool(pool, { ...base, method: 'rrf', normalization, weights: w });
          expectSameFusion(fusedById(pool, rrf.scores), reciprocalRankFusion(ranked, { weights: w }), 14);
        },
      ),
    );
  });

  it('counts an id repeated within a list once, at its first position', () => {
    const pool = new CandidatePool([{ name: 'a', ids: ['x', 'y', 'x', 'z'], scores: [3, 2, 9, 1] }]);
    expect(pool.ids).toEqual(['x', 'y', 'z']);
    expect(Array.from(pool.lists[0]?.scores ?? [])).toEqual([3, 2, 1]);
  });

  it('takes only the first `depth` candidates of each list', () => {
    const pool = new CandidatePool([
      { name: 'a', ids: ['x', 'y', 'z'], scores: [3, 2, 1] },
      { name: 'b', ids: ['z', 'w'], scores: [1, 0.5] },
    ]);
    const fused = fusePool(pool, {
      ...base,
      method: 'rrf',
      normalization: 'minmax',
      weights: [1, 1],
      depth: 1,
    });
    expect(Array.from(topCandidates(pool, fused.scores, 10), (c) => pool.ids[c])).toEqual(['x', 'z']);
    expect(fused.found).toBe(2);
  });

  it('orders equal fused scores by id, smaller first', () => {
    const pool = new CandidatePool([
      { name: 'a', ids: ['m', 'b'], scores: [1, 1] },
      { name: 'b', ids: ['b', 'm'], scores: [1, 1] },
    ]);
    const fused = fusePool(pool, { ...base, method: 'rrf', normalization: 'minmax', weights: [1, 1] });
    expect(Array.from(topCandidates(pool, fused.scores, 2), (c) => pool.ids[c])).toEqual(['b', 'm']);
  });
});

describe('theoretical min-max normalisation', () => {
  it("uses the metric's minimum, so an item's value does not move with the list's depth", () => {
    const cosine = [0.9, 0.5, 0.1, -0.2];
    const deep = normalizeScores(cosine, 'theoretical-minmax', -1);
    const shallow = normalizeScores(cosine.slice(0, 2), 'theoretical-minmax', -1);
    expect(deep[1]).toBeCloseTo(1.5 / 1.9, 15);
    expect(shallow[1]).toBe(deep[1]);
    // Plain min-max moves with the cut.
    expect(normalizeScores(cosine.slice(0, 2), 'minmax')[1]).toBe(0);
    expect(normalizeScores(cosine, 'minmax')[1]).toBeCloseTo(0.7 / 1.1, 15);
    // BM25 (lower bound 0): the score over the best.
    expect(normalizeScores([8, 2], 'theoretical-minmax', 0)).toEqual([1, 0.25]);
    // No bound, or one above the list's minimum: min-max over the list.
    expect(normalizeScores([8, 2], 'theoretical-minmax')).toEqual([1, 0]);
    expect(normalizeScores([8, 2], 'theoretical-minmax', 5)).toEqual([1, 0]);
  });

  it('is available to scoreFusion through each list', () => {
    const fused = scoreFusion(
      [
        {
          name: 'bm25',
          lowerBound: 0,
          items: [
            { id: 'a', score: 10 },
            { id: 'b', score: 5 },
          ],
        },
        {
          name: 'cosine',
          lowerBound: -1,
          items: [
            { id: 'b', score: 0.5 },
            { id: 'a', score: 0 },
          ],
        },
      ],
      { normalization: 'theoretical-minmax' },
    );
    const scores = Object.fromEntries(fused.map((item) => [item.id, item.score]));
    expect(scores.a).toBeCloseTo((1 + 1 / 1.5) / 2, 15);
    expect(scores.b).toBeCloseTo((0.5 + 1) / 2, 15);
  });
});

describe('the weak-branch guard', () => {
  it('measures the spread of the top scores on the metric scale and lowers the weight of a flat list', () => {
    // Hash-embedder cosine: 0.30 down to 0.24 over [-1, 0.30] is a spread of about 0.046.
    const flat = [0.3, 0.29, 0.28, 0.27, 0.26, 0.26, 0.25, 0.25, 0.24, 0.24, 0.2];
    const spread = evidenceSpread(flat, flat.length, -1, 10);
    expect(spread).toBeCloseTo(0.06 / 1.3, 12);
    // BM25 divided by the best: 1 down to 0.6 is a spread of 0.4.
    const bm25 = [1, 0.9, 0.85, 0.8, 0.75, 0.7, 0.68, 0.65, 0.62, 0.6];
    expect(evidenceSpread(bm25, bm25.length, 0, 10)).toBeCloseTo(0.4, 12);
    const guard = { topN: 10, minSpread: 0.5, floor: 0 };
    expect(guardFactor(spread, guard)).toBeCloseTo(spread / 0.5, 12);
    expect(guardFactor(0.8, guard)).toBe(1);
    expect(guardFactor(0, { ...guard, floor: 0.2 })).toBe(0.2);
    expect(evidenceSpread([5], 1, 0, 10)).toBe(1);

    const pool = new CandidatePool([
      { name: 'keyword', ids: bm25.map((_, i) => `k${i}`), scores: bm25, lowerBound: 0 },
      { name: 'vector', ids: flat.map((_, i) => `v${i}`), scores: flat, lowerBound: -1 },
    ]);
    const fused = fusePool(pool, {
      ...base,
      method: 'weighted',
      normalization: 'minmax',
      weights: [1, 1],
      guard,
    });
    expect(fused.weights[0]).toBeCloseTo(0.8, 12);
    expect(fused.weights[1]).toBeCloseTo(spread / 0.5, 12);
    // A list the guard is told to leave alone (metadata: every match scores 1) keeps its weight.
    const exempt = fusePool(pool, {
      ...base,
      method: 'weighted',
      normalization: 'minmax',
      weights: [1, 1],
      guard,
      guarded: [true, false],
    });
    expect(exempt.weights[1]).toBe(1);
  });
});

describe('parseFusionConfig', () => {
  const refused = (input: unknown): FusionConfigError => {
    try {
      parseFusionConfig(input, { path: 'fusion.json' });
    } catch (error) {
      expect(FusionConfigError.isInstance(error)).toBe(true);
      return error as FusionConfigError;
    }
    throw new Error('accepted');
  };

  it('reads a setting as tune writes it, from an object or JSON text', () => {
    const setting = {
      version: 1,
      method: 'weighted',
      normalization: 'theoretical-minmax',
      weights: { keyword: 0.8, vector: 0.2 },
      rrfK: 20,
      depth: 200,
      guard: { minSpread: 0.3 },
      lowerBounds: { vector: 0 },
      bm25: { k1: 1.2, b: 0.75 },
      description: 'tuned',
    };
    expect(parseFusionConfig(setting)).toEqual(setting);
    expect(parseFusionConfig(JSON.stringify(setting))).toEqual(setting);
    expect(resolveFusionConfig(parseFusionConfig(setting)).guard).toEqual({
      topN: 10,
      minSpread: 0.3,
      floor: 0,
    });
    expect(resolveFusionConfig({ version: 1, method: 'rrf', guard: false }).guard).toBe(false);
    expect(parseFusionConfig(DEFAULT_FUSION_CONFIG)).toEqual(DEFAULT_FUSION_CONFIG);
  });

  it('refuses another version, unknown keys, and bad weights, naming the key', () => {
    expect(refused({ version: 2, method: 'rrf' }).key).toBe('version');
    expect(refused({ version: 2, method: 'rrf' }).message).toMatch(
      /^fusion\.json: fusion setting key 'version': version 2 is not supported; this Zerda reads version 1/,
    );
    expect(refused({ method: 'rrf' }).key).toBe('version');
    expect(refused({ version: 1, method: 'rrf', alpha: 0.5 }).key).toBe('alpha');
    expect(refused({ version: 1, method: 'rrf', guard: { minspread: 1 } }).key).toBe('guard.minspread');
    expect(refused({ version: 1, method: 'rrf', weights: { vector: -1 } }).key).toBe('weights.vector');
    expect(refused({ version: 1, method: 'rrf', weights: { vector: 'x' } }).key).toBe('weights.vector');
    expect(refused({ version: 1, method: 'rrf', weights: { keyword: Number.POSITIVE_INFINITY } }).key).toBe(
      'weights.keyword',
    );
    expect(refused('{"version": 1, "method": "rrf", "weights": {"keyword": NaN}}').key).toBe('');
    expect(refused({ version: 1, method: 'max' }).key).toBe('method');
    expect(refused({ version: 1, method: 'weighted', normalization: 'l2' }).key).toBe('normalization');
    expect(refused({ version: 1, method: 'rrf', rrfK: -1 }).key).toBe('rrfK');
    expect(refused({ version: 1, method: 'rrf', depth: 2.5 }).key).toBe('depth');
    expect(refused({ version: 1, method: 'rrf', bm25: { k1: 1, b: 2 } }).key).toBe('bm25.b');
    expect(refused([1]).key).toBe('');
  });
});

describe('topCandidates', () => {
  it('returns the best k by score, equal scores by id, whether it sorts or keeps a heap', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z]{1,3}$/), { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 1, max: 90 }),
        fc.integer({ min: 1, max: 5 }),
        (ids, k, levels) => {
          const pool = new CandidatePool([{ name: 'a', ids, scores: ids.map(() => 0) }]);
          const scores = Float64Array.from(pool.ids, (_, i) =>
            i % 7 === 3 ? Number.NEGATIVE_INFINITY : (i * 31) % levels,
          );
          const expected = pool.ids
            .map((id, i) => ({ id, score: scores[i] as number }))
            .filter((e) => e.score !== Number.NEGATIVE_INFINITY)
            .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
            .slice(0, k)
            .map((e) => e.id);
          expect(Array.from(topCandidates(pool, scores, k), (c) => pool.ids[c])).toEqual(expected);
        },
      ),
    );
  });
});

describe('normalizeScores input', () => {
  it('names a list that is not one, or an unknown method', () => {
    for (const scores of [null, undefined, 3, 'abc']) {
      expect(() => normalizeScores(scores as never, 'minmax')).toThrow(InvalidArgumentError);
    }
    expect(() => normalizeScores([1, 2], 'maxmin' as never)).toThrow(/expected one of minmax/);
  });
});
