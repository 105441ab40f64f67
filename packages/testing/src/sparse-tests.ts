import {
  type Chunk,
  ChunkValidationError,
  InvalidArgumentError,
  type SparseVector,
  type VectorDatabase,
} from '@zerda/core';
import { describe, expect, it } from 'vitest';
import { expectTypedError, type SuiteContext } from './context.js';
import { seededRandom, seededVectors } from './fixtures.js';

/** Float32 storage: dot products agree with exact arithmetic to this much (relative). */
const TOLERANCE = 1e-4;

type SparseStore = VectorDatabase &
  Required<Pick<VectorDatabase, 'searchSparse'>> &
  Pick<VectorDatabase, 'searchHybrid'>;

function sparse(entries: ReadonlyArray<readonly [number, number]>): SparseVector {
  const sorted = [...entries].sort((a, b) => a[0] - b[0]);
  return {
    indices: Uint32Array.from(sorted.map(([index]) => index)),
    values: Float32Array.from(sorted.map(([, value]) => value)),
  };
}

function dot(a: SparseVector, b: SparseVector): number {
  let sum = 0;
  let j = 0;
  for (let i = 0; i < a.indices.length; i++) {
    while (j < b.indices.length && (b.indices[j] as number) < (a.indices[i] as number)) j++;
    if (b.indices[j] === a.indices[i]) sum += Math.fround(a.values[i] as number) * (b.values[j] as number);
  }
  return sum;
}

/** Random BM25-like vectors: a few of 60 term ids each, positive weights. */
function randomSparse(random: () => number, terms = 60): SparseVector {
  const entries = new Map<number, number>();
  const count = 1 + Math.floor(random() * 6);
  while (entries.size < count) entries.set(Math.floor(random() * terms), 0.1 + random() * 3);
  return sparse([...entries]);
}

function expectRanking(
  hits: ReadonlyArray<{ chunk: Chunk; score: number }>,
  expected: ReadonlyArray<{ id: string; score: number }>,
): void {
  expect(
    hits.map((hit) => hit.chunk.id),
    'ids in rank order',
  ).toEqual(expected.map((e) => e.id));
  hits.forEach((hit, i) => {
    const want = expected[i]!.score;
    expect(Math.abs(hit.score - want), `score of ${hit.chunk.id}`).toBeLessThanOrEqual(
      TOLERANCE * Math.max(1, Math.abs(want)),
    );
  });
}

/** Score, then id: the tie order of every search. */
function rank(scored: Array<{ id: string; score: number }>, topK: number) {
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, topK);
}

/**
 * Sparse vectors (the keyword branch in the database): for a backend that declares them
 * (`capabilities.sparse`), `searchSparse` ranks by the exact dot product with the filter applied,
 * `searchHybrid` sums weighted dense and sparse dot products, and a vector over the database's
 * limits is refused for its chunk before anything is written.
 */
export function sparseTests(ctx: SuiteContext): void {
  const { timeout, capabilities } = ctx;
  const enabled = capabilities.sparse !== undefined;
  const hybrid = capabilities.sparse?.hybrid === true && capabilities.metrics.includes('dot');

  const openSparse = async (metric = ctx.metric): Promise<SparseStore> => {
    const store = await ctx.open({ sparse: true, metric });
    expect(typeof store.searchSparse, 'a store created with sparse vectors has searchSparse').toBe(
      'function',
    );
    return store as SparseStore;
  };

  const corpus = (count: number, seed: number) => {
    const random = seededRandom(seed);
    const chunks: Chunk[] = Array.from({ length: count }, (_, i) => ({
      id: `s${String(i).padStart(3, '0')}`,
      text: `sparse chunk ${i}`,
      metadata: { group: i % 3 === 0 ? 'a' : 'b', n: i },
    }));
    const sparseVectors = chunks.map(() => randomSparse(random));
    return { chunks, sparseVectors, vectors: seededVectors(seed, count, ctx.dimension) };
  };

  // Declared only where the backend has them (not registered as skipped): a backend without
  // sparse vectors runs the last test, which checks it refuses them.
  const onlyIf = (condition: boolean) => (condition ? it : () => undefined);

  describe('sparse vectors', () => {
    onlyIf(enabled)(
      'declares its limits; searchHybrid exactly where it says hybrid',
      { timeout },
      async () => {
        const store = await openSparse();
        const limits = store.capabilities.sparse;
        expect(limits, 'capabilities.sparse').toBeDefined();
        expect(Number.isSafeInteger(limits!.dimension) && limits!.dimension > 60).toBe(true);
        expect(Number.isSafeInteger(limits!.maxNonZero) && limits!.maxNonZero > 0).toBe(true);
        expect(limits!.hybrid, 'capabilities.sparse.hybrid as declared to the suite').toBe(
          capabilities.sparse?.hybrid,
        );
        expect(typeof store.searchHybrid === 'function').toBe(limits!.hybrid);
      },
    );

    onlyIf(enabled)(
      'searchSparse ranks by the exact dot product, zero-dot chunks left out',
      {
        timeout,
      },
      async () => {
        const store = await openSparse();
        const { chunks, sparseVectors, vectors } = corpus(40, 7);
        await store.add(chunks, { embeddings: vectors, sparseVectors });
        const random = seededRandom(99);
        for (let q = 0; q < 5; q++) {
          const query = randomSparse(random);
          const { hits } = await store.searchSparse(query, { topK: 10 });
          const expected = rank(
            chunks.map((chunk, i) => ({ id: chunk.id, score: dot(sparseVectors[i]!, query) })),
            10,
          );
          expectRanking(hits, expected);
        }
      },
    );

    onlyIf(enabled)('searchSparse applies a Zerda filter', { timeout }, async () => {
      const store = await openSparse();
      const { chunks, sparseVectors, vectors } = corpus(40, 8);
      await store.add(chunks, { embeddings: vectors, sparseVectors });
      const query = sparse([
        [1, 1],
        [5, 2],
        [9, 0.5],
        [20, 1.5],
        [33, 1],
        [47, 2],
      ]);
      const { hits } = await store.searchSparse(query, { topK: 5, filter: { group: 'a', n: { $gte: 6 } } });
      const expected = rank(
        chunks
          .map((chunk, i) => ({ chunk, score: dot(sparseVectors[i]!, query) }))
          .filter(({ chunk }) => chunk.metadata?.group === 'a' && (chunk.metadata?.n as number) >= 6)
          .map(({ chunk, score }) => ({ id: chunk.id, score })),
        5,
      );
      expectRanking(hits, expected);
    });

    onlyIf(enabled)(
      'a sparse vector over the limits is refused for its chunk before anything is written',
      {
        timeout,
      },
      async () => {
        const store = await openSparse();
        const { maxNonZero, dimension } = store.capabilities.sparse!;
        const { chunks, sparseVectors, vectors } = corpus(3, 9);
        const tooMany = {
          indices: Uint32Array.from({ length: maxNonZero + 1 }, (_, i) => i),
          values: new Float32Array(maxNonZero + 1).fill(1),
        };
        const error = await expectTypedError(
          () =>
            store.add(chunks, {
              embeddings: vectors,
              sparseVectors: [sparseVectors[0]!, tooMany, sparseVectors[2]!],
            }),
          ChunkValidationError,
          'a sparse vector with maxNonZero + 1 entries',
        );
        expect(error.message).toContain(chunks[1]!.id);
        expect(await store.count(), 'nothing written').toBe(0);
        for (const bad of [
          sparse([
            [3, 1],
            [3, 2],
          ]),
          { indices: Uint32Array.of(5, 2), values: Float32Array.of(1, 1) },
          // An index at the dimension, where a Uint32Array can hold it.
          ...(dimension <= 0xffffffff
            ? [{ indices: Uint32Array.of(dimension), values: Float32Array.of(1) }]
            : []),
          { indices: Uint32Array.of(1), values: Float32Array.of(Number.NaN) },
        ]) {
          await expectTypedError(
            () =>
              store.add(chunks, {
                embeddings: vectors,
                sparseVectors: [sparseVectors[0]!, sparseVectors[1]!, bad],
              }),
            ChunkValidationError,
            'a malformed sparse vector',
          );
        }
        expect(await store.count(), 'nothing written').toBe(0);
        await expectTypedError(
          () => store.add(chunks, { embeddings: vectors, sparseVectors: sparseVectors.slice(0, 2) }),
          InvalidArgumentError,
          'fewer sparse vectors than chunks',
        );
      },
    );

    onlyIf(hybrid)(
      'searchHybrid sums the weighted dense and sparse dot products (dot metric)',
      {
        timeout,
      },
      async () => {
        const store = await openSparse('dot');
        const { chunks, sparseVectors, vectors } = corpus(30, 10);
        await store.add(chunks, { embeddings: vectors, sparseVectors });
        const query = randomSparse(seededRandom(5));
        const dense = seededVectors(11, 1, ctx.dimension)[0]!;
        const { hits } = await store.searchHybrid!(dense, query, {
          topK: 8,
          denseWeight: 0.3,
          sparseWeight: 0.7,
        });
        const expected = chunks
          .map((chunk, i) => {
            const v = vectors[i]!;
            let d = 0;
            for (let j = 0; j < dense.length; j++) d += (dense[j] as number) * (v[j] as number);
            return { id: chunk.id, score: 0.3 * d + 0.7 * dot(sparseVectors[i]!, query) };
          })
          .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
          .slice(0, 8);
        expectRanking(hits, expected);
      },
    );

    it('a store created without sparse vectors has no searchSparse and refuses sparseVectors', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      if (store.capabilities.sparse !== undefined) return; // sparse by default: nothing to refuse
      expect(store.searchSparse).toBeUndefined();
      const { chunks, sparseVectors, vectors } = corpus(2, 12);
      await expectTypedError(
        () => store.add(chunks, { embeddings: vectors, sparseVectors }),
        InvalidArgumentError,
        'sparseVectors given to a store without sparse vectors',
      );
      expect(await store.count()).toBe(0);
    });
  });
}
