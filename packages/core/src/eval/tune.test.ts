import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { parseFusionConfig } from '../fusion/index.js';
import { type TuningQuery, tuneFusion } from './tune.js';
import type { Qrels } from './types.js';

/**
 * Twelve queries: the keyword branch ranks the two relevant documents first, the vector branch
 * ranks them fourth and fifth behind noise, so fusion should lean on keyword.
 */
function collection(count: number): { queries: TuningQuery[]; qrels: Qrels } {
  const queries: TuningQuery[] = [];
  const qrels: Qrels = new Map();
  for (let q = 0; q < count; q++) {
    const relevant = [`r${q}a`, `r${q}b`];
    const noise = Array.from({ length: 8 }, (_, i) => `n${q}-${i}`);
    queries.push({
      id: `q${q}`,
      keyword: { ids: [...relevant, ...noise], scores: [1, 0.9, 0.5, 0.45, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15] },
      vector: {
        ids: [noise[0], noise[1], noise[2], ...relevant, ...noise.slice(3)] as string[],
        scores: [0.6, 0.58, 0.56, 0.55, 0.54, 0.5, 0.48, 0.46, 0.44, 0.42],
      },
    });
    qrels.set(`q${q}`, new Map(relevant.map((id) => [id, 1])));
  }
  return { queries, qrels };
}

describe('tuneFusion', () => {
  it('chooses by k-fold cross-validation, reports each fold beside each branch, and is deterministic for a seed', () => {
    const { queries, qrels } = collection(12);
    const grid = { depths: [10], alphas: [0, 0.5, 1], rrfKs: [60], rrfAlphas: [0.5] };
    const result = tuneFusion({ queries, qrels, k: 10, folds: 4, seed: 3, grid });
    expect(result.folds).toHaveLength(4);
    expect(result.folds.map((f) => f.queries)).toEqual([3, 3, 3, 3]);
    expect(result.keyword.mean).toBeCloseTo(1, 12);
    expect(result.tuned.mean).toBeCloseTo(1, 12);
    expect(result.tuned.std).toBe(0);
    expect(result.vector.mean).toBeLessThan(0.7);
    expect(result.all.keyword.recall).toBe(1);
    expect(parseFusionConfig(result.config)).toEqual(result.config);
    // The weighted settings with the guard on and off; RRF once, since it takes no guard.
    expect(result.settings).toBe(2 * 3 * 3 + 1);
    expect(tuneFusion({ queries, qrels, k: 10, folds: 4, seed: 3, grid })).toEqual(result);
    // Another seed, another split of the queries into folds.
    const other = tuneFusion({ queries, qrels, k: 10, folds: 4, seed: 4, grid });
    expect(other.folds.map((f) => f.fold)).toEqual([1, 2, 3, 4]);
  });

  it('refuses fewer than 10 judged queries, saying why', () => {
    const { queries, qrels } = collection(9);
    expect(() => tuneFusion({ queries, qrels })).toThrow(InvalidArgumentError);
    expect(() => tuneFusion({ queries, qrels })).toThrow(/at least 10 judged queries/);
  });
});
