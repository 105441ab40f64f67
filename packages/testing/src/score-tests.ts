import type { DistanceMetric, VectorHit } from '@zerda/core';
import { describe, expect, it } from 'vitest';
import { addWithVectors, type SuiteContext } from './context.js';
import { expectedSimilarity, seededVectors } from './fixtures.js';

/** Float32 storage and approximate indexes: scores agree with exact arithmetic to this much. */
const TOLERANCE = 1e-4;

/** Known vectors (dimension 4) and the score each must get for the query, per metric. */
const knownCases: Record<DistanceMetric, { query: number[]; stored: Array<[number[], number]> }> = {
  cosine: {
    query: [1, 0, 0, 0],
    stored: [
      [[2, 0, 0, 0], 1],
      [[1, 1, 0, 0], Math.SQRT1_2],
      [[0, 3, 0, 0], 0],
      [[-1, 1, 0, 0], -Math.SQRT1_2],
      [[-5, 0, 0, 0], -1],
    ],
  },
  dot: {
    query: [1, 2, 0, 0],
    stored: [
      [[2, 2, 0, 0], 6],
      [[1, 1, 0, 0], 3],
      [[0, 0, 1, 0], 0],
      [[-1, 0, 0, 0], -1],
      [[0, -2, 0, 5], -4],
    ],
  },
  l2: {
    query: [1, 0, 0, 0],
    stored: [
      [[1, 0, 0, 0], 1],
      [[1, 1, 0, 0], 1 / 2],
      [[1, 0, 2, 0], 1 / 3],
      [[1, 3, 4, 0], 1 / 6],
      [[1, 0, 0, -3], 1 / 4],
    ],
  },
};

function expectDescending(hits: readonly VectorHit[]): void {
  for (let i = 1; i < hits.length; i++) {
    expect(hits[i]!.score, `score of hit ${i} is not above hit ${i - 1}`).toBeLessThanOrEqual(
      hits[i - 1]!.score + 1e-9,
    );
  }
}

/** Scores are similarities with one meaning per metric; topK and scoreThreshold. */
export function scoreTests(ctx: SuiteContext): void {
  const { timeout } = ctx;

  describe('scores', () => {
    for (const metric of ctx.capabilities.metrics) {
      it(`${metric}: scores are Zerda's similarities (exact values on known vectors)`, {
        timeout,
      }, async () => {
        const store = await ctx.open({ metric, dimension: 4 });
        const { query, stored } = knownCases[metric];
        const chunks = stored.map((_, i) => ({ id: `k${i}`, text: `known ${i}` }));
        await addWithVectors(
          store,
          chunks,
          stored.map(([vector]) => vector),
        );
        const { hits } = await store.search(query, { topK: stored.length });
        expect(hits).toHaveLength(stored.length);
        expectDescending(hits);
        for (const hit of hits) {
          const expected = stored[Number(hit.chunk.id.slice(1))]![1];
          expect(
            Math.abs(hit.score - expected),
            `score of ${hit.chunk.id}: ${hit.score}, expected ${expected}`,
          ).toBeLessThan(TOLERANCE);
        }
      });

      it(`${metric}: best first, topK honoured, scores in range`, { timeout }, async () => {
        const dimension = ctx.dimension;
        const store = await ctx.open({ metric, dimension });
        const vectors = seededVectors(21, 40, dimension);
        const [query] = seededVectors(22, 1, dimension) as [number[]];
        await addWithVectors(
          store,
          vectors.map((_, i) => ({ id: `v${i}`, text: `vector ${i}` })),
          vectors,
        );
        const exact = vectors.map((vector, i) => ({
          id: `v${i}`,
          score: expectedSimilarity(metric, query, vector),
        }));
        const ranked = exact.map((entry) => entry.score).sort((a, b) => b - a);
        for (const topK of [1, 5, 40, 100]) {
          const { hits } = await store.search(query, { topK });
          expect(hits, `topK ${topK}`).toHaveLength(Math.min(topK, 40));
          expectDescending(hits);
          const kth = ranked[hits.length - 1]!;
          hits.forEach((hit, rank) => {
            const expected = exact.find((entry) => entry.id === hit.chunk.id)!.score;
            expect(Math.abs(hit.score - expected), `score of ${hit.chunk.id}`).toBeLessThan(TOLERANCE);
            // Every hit belongs to the true top k (up to ties within the tolerance).
            expect(hit.score, `hit at rank ${rank + 1} for topK ${topK}`).toBeGreaterThanOrEqual(
              kth - TOLERANCE,
            );
          });
          if (metric === 'cosine') {
            for (const hit of hits) expect(Math.abs(hit.score)).toBeLessThanOrEqual(1 + 1e-6);
          }
          if (metric === 'l2') {
            for (const hit of hits) expect(hit.score > 0 && hit.score <= 1 + 1e-6).toBe(true);
          }
        }
      });
    }

    it.skipIf(!ctx.capabilities.metrics.includes('cosine'))(
      'cosine: scores of non-negative vectors lie in [0, 1]',
      { timeout },
      async () => {
        const store = await ctx.open({ metric: 'cosine' });
        const vectors = seededVectors(23, 30, ctx.dimension).map((vector) => vector.map(Math.abs));
        await addWithVectors(
          store,
          vectors.map((_, i) => ({ id: `p${i}`, text: `positive ${i}` })),
          vectors,
        );
        const { hits } = await store.search(vectors[3]!, { topK: 30 });
        expect(hits).toHaveLength(30);
        for (const hit of hits) expect(hit.score >= -1e-6 && hit.score <= 1 + 1e-6).toBe(true);
      },
    );

    it('scoreThreshold leaves out exactly the lower scores', { timeout }, async () => {
      const store = await ctx.open();
      const vectors = seededVectors(24, 30, ctx.dimension);
      const [query] = seededVectors(25, 1, ctx.dimension) as [number[]];
      await addWithVectors(
        store,
        vectors.map((_, i) => ({ id: `t${i}`, text: `threshold ${i}` })),
        vectors,
      );
      const all = (await store.search(query, { topK: 30 })).hits;
      expect(all).toHaveLength(30);
      // A threshold in the widest gap among the middle scores, so rounding cannot move a hit across it.
      let cut = 10;
      for (let i = 8; i < 20; i++) {
        if (all[i]!.score - all[i + 1]!.score > all[cut]!.score - all[cut + 1]!.score) cut = i;
      }
      const threshold = (all[cut]!.score + all[cut + 1]!.score) / 2;
      const { hits } = await store.search(query, { topK: 30, scoreThreshold: threshold });
      expect(hits.map((hit) => hit.chunk.id)).toEqual(all.slice(0, cut + 1).map((hit) => hit.chunk.id));
      for (const hit of hits) expect(hit.score).toBeGreaterThanOrEqual(threshold);
      // Above every score: nothing; below every score: everything (topK still applies).
      expect((await store.search(query, { topK: 30, scoreThreshold: all[0]!.score + 1 })).hits).toEqual([]);
      expect(
        (await store.search(query, { topK: 7, scoreThreshold: all.at(-1)!.score - 1 })).hits,
      ).toHaveLength(7);
    });
  });
}
