import { describe, expect, it } from 'vitest';
import { AbortedError, ChunkValidationError, FilterError, InvalidArgumentError } from '../errors/index.js';
import { evaluateFilter, type FilterInput, parseFilter } from '../filter/index.js';
import type { Chunk } from '../model/index.js';
import { clusteredData, gaussian, seededRandom } from './__tests__/clustered-data.js';
import type { Embedder } from './embedder.js';
import { InMemoryVectorStore, type InMemoryVectorStoreSettings } from './in-memory-vector-store.js';
import type { DistanceMetric } from './vector-database.js';

const kernels = ['wasm', 'js'] as const;
const metrics: DistanceMetric[] = ['cosine', 'dot', 'l2'];

function randomVectors(count: number, dimension: number, seed: number): Float32Array[] {
  const normal = gaussian(seededRandom(seed));
  return Array.from({ length: count }, () => Float32Array.from({ length: dimension }, normal));
}

function chunksFor(count: number, prefix = 'c'): Chunk[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `${prefix}${index}`,
    text: `text ${index}`,
    docId: `doc${index % 7}`,
    metadata: { index, parity: index % 2 === 0 ? 'even' : 'odd', tags: index % 3 === 0 ? ['three'] : [] },
  }));
}

/** Exact similarity in float64, as the store documents it. */
function similarity(metric: DistanceMetric, query: ArrayLike<number>, vector: ArrayLike<number>): number {
  let dot = 0;
  let qq = 0;
  let xx = 0;
  let squared = 0;
  for (let j = 0; j < query.length; j++) {
    dot += query[j]! * vector[j]!;
    qq += query[j]! * query[j]!;
    xx += vector[j]! * vector[j]!;
    squared += (query[j]! - vector[j]!) ** 2;
  }
  if (metric === 'cosine') return dot / Math.sqrt(qq * xx);
  if (metric === 'dot') return dot;
  return 1 / (1 + Math.sqrt(squared));
}

/** Brute force: every chunk scored in float64, sorted. */
function bruteForce(
  metric: DistanceMetric,
  chunks: Chunk[],
  vectors: ArrayLike<number>[],
  query: ArrayLike<number>,
  k: number,
  filter?: FilterInput,
): { id: string; score: number }[] {
  const node = filter === undefined ? undefined : parseFilter(filter);
  return chunks
    .map((chunk, index) => ({ chunk, score: similarity(metric, query, vectors[index]!) }))
    .filter(({ chunk }) => node === undefined || evaluateFilter(node, chunk))
    .sort((a, b) => b.score - a.score)
    .slice(0, k)
    .map(({ chunk, score }) => ({ id: chunk.id, score }));
}

async function expectHits(
  store: InMemoryVectorStore,
  query: Float32Array,
  expected: { id: string; score: number }[],
  options: { topK: number; filter?: FilterInput },
) {
  const { hits } = await store.search(query, options);
  expect(hits.map((hit) => hit.chunk.id)).toEqual(expected.map((hit) => hit.id));
  hits.forEach((hit, index) => {
    expect(hit.score).toBeCloseTo(expected[index]!.score, 4);
  });
}

class FakeEmbedder implements Embedder {
  readonly dimension = 4;
  calls: string[][] = [];
  embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls.push([...texts]);
    return Promise.resolve(texts.map((text) => this.vector(text)));
  }
  vector(text: string): Float32Array {
    // A letter-count vector: texts with the same letters point the same way.
    const vector = new Float32Array(4);
    for (const letter of text) {
      const slot = 'abcd'.indexOf(letter);
      if (slot >= 0) vector[slot]! += 1;
    }
    return vector;
  }
}

describe('InMemoryVectorStore', () => {
  it('implements the v2 contract and says how it converts scores', () => {
    const store = new InMemoryVectorStore({ dimension: 8 });
    expect(store.specificationVersion).toBe('v2');
    expect(store.name).toBe('memory');
    expect(store.filterConvention?.name).toBe('zerda');
    expect(store.capabilities).toMatchObject({
      metric: 'cosine',
      scoreConversion: 'similarity',
      deletion: true,
      listing: true,
      persistent: false,
    });
    expect(new InMemoryVectorStore({ metric: 'l2' }).capabilities.scoreConversion).toBe('similarity');
    expect(store.dimension).toBe(8);
  });

  describe.each(kernels)('with %s kernels', (kernel) => {
    describe.each(metrics)('%s', (metric) => {
      it.each(['none', 'int8'] as const)(
        'returns the exact top k (quantization %s)',
        async (quantization) => {
          const dimension = 37;
          const chunks = chunksFor(600);
          const vectors = randomVectors(600, dimension, 7);
          const store = new InMemoryVectorStore({ metric, kernel, quantization });
          // Several batches, so the storage grows (and moves its int8 codes) along the way.
          for (let start = 0; start < 600; start += 150) {
            await store.add(chunks.slice(start, start + 150), {
              embeddings: vectors.slice(start, start + 150),
            });
          }
          expect(store.stats()).toMatchObject({ count: 600, kernel, quantization, dimension });
          for (const query of randomVectors(5, dimension, 99)) {
            await expectHits(store, query, bruteForce(metric, chunks, vectors, query, 10), { topK: 10 });
          }
        },
      );

      it('applies filters while scanning, selective or not', async () => {
        const dimension = 16;
        const count = 3000;
        const chunks = chunksFor(count);
        const vectors = randomVectors(count, dimension, 3);
        const store = new InMemoryVectorStore({ metric, kernel });
        await store.add(chunks, { embeddings: vectors });
        const filters: FilterInput[] = [
          { parity: 'even' },
          { index: { $lt: 40 } }, // selective: evaluated before the scan
          { $or: [{ docId: 'doc3' }, { tags: 'three' }] },
          { $not: { parity: 'odd' }, index: { $gte: 2000 } },
          { id: ['c5', 'c17', 'c2999', 'missing'] },
          { parity: 'none' },
        ];
        const [query] = randomVectors(1, dimension, 11);
        for (const filter of filters) {
          await expectHits(store, query!, bruteForce(metric, chunks, vectors, query!, 10, filter), {
            topK: 10,
            filter,
          });
        }
      });
    });
  });

  describe('scores', () => {
    it('cosine: the cosine similarity, whatever the vectors’ lengths', async () => {
      const store = new InMemoryVectorStore({ metric: 'cosine' });
      await store.add(chunksFor(3), {
        embeddings: [
          [2, 0],
          [0, 5],
          [-1, 0],
        ],
      });
      const { hits } = await store.search([3, 0], { topK: 3 });
      expect(hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
        ['c0', 1],
        ['c1', 0],
        ['c2', -1],
      ]);
    });

    it('dot: the raw inner product', async () => {
      const store = new InMemoryVectorStore({ metric: 'dot' });
      await store.add(chunksFor(2), {
        embeddings: [
          [2, 1],
          [0, 5],
        ],
      });
      const { hits } = await store.search([3, 1], { topK: 2 });
      expect(hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
        ['c0', 7],
        ['c1', 5],
      ]);
    });

    it('l2: 1 / (1 + Euclidean distance)', async () => {
      const store = new InMemoryVectorStore({ metric: 'l2' });
      await store.add(chunksFor(3), {
        embeddings: [
          [1, 1, 1],
          [4, 5, 1],
          [1, 1, 2],
        ],
      });
      const { hits } = await store.search([1, 1, 1], { topK: 3 });
      expect(hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
        ['c0', 1],
        ['c2', 0.5],
        ['c1', 1 / 6],
      ]);
    });

    it('cosine: a stored zero vector (an empty text, with some embedders) scores 0; a zero query is refused', async () => {
      const store = new InMemoryVectorStore({ metric: 'cosine' });
      await store.add(chunksFor(2), {
        embeddings: [
          [0, 0],
          [1, 1],
        ],
      });
      const { hits } = await store.search([-1, 0], { topK: 2 });
      expect(hits.map((hit) => hit.chunk.id)).toEqual(['c0', 'c1']);
      expect(hits[0]!.score).toBe(0);
      expect(hits[1]!.score).toBeCloseTo(-Math.SQRT1_2, 6);
      await expect(store.search([0, 0], { topK: 1 })).rejects.toSatisfy(InvalidArgumentError.isInstance);
    });

    it('drops hits under scoreThreshold', async () => {
      const store = new InMemoryVectorStore();
      await store.add(chunksFor(3), {
        embeddings: [
          [1, 0],
          [1, 1],
          [0, 1],
        ],
      });
      const { hits } = await store.search([1, 0], { topK: 3, scoreThreshold: 0.5 });
      expect(hits.map((hit) => hit.chunk.id)).toEqual(['c0', 'c1']);
    });
  });

  describe('writes', () => {
    it('upserts by id in place: the count stays, the new vector and chunk are used', async () => {
      const store = new InMemoryVectorStore({ metric: 'dot' });
      await store.add(chunksFor(3), {
        embeddings: [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
      });
      const result = await store.add([{ id: 'c0', text: 'replaced', metadata: { fresh: true } }], {
        embeddings: [[-5, -5]],
      });
      expect(result.ids).toEqual(['c0']);
      expect(await store.count()).toBe(3);
      const { hits } = await store.search([1, 1], { topK: 3 });
      expect(hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
        ['c2', 2],
        ['c1', 1],
        ['c0', -10],
      ]);
      expect(hits[2]!.chunk).toEqual({ id: 'c0', text: 'replaced', metadata: { fresh: true } });
      expect((await store.search([1, 1], { topK: 3, filter: { fresh: true } })).hits).toHaveLength(1);
    });

    it('deletes with compaction: every remaining chunk stays findable with its own vector', async () => {
      const dimension = 24;
      const chunks = chunksFor(200);
      const vectors = randomVectors(200, dimension, 5);
      const store = new InMemoryVectorStore({ metric: 'l2', quantization: 'int8' });
      await store.add(chunks, { embeddings: vectors });
      const doomed = chunks.filter((_, index) => index % 3 === 1 || index < 10).map((chunk) => chunk.id);
      expect(await store.delete([...doomed, 'never-added', doomed[0]!])).toBe(doomed.length);
      expect(await store.count()).toBe(200 - doomed.length);
      const keptChunks = chunks.filter((chunk) => !doomed.includes(chunk.id));
      const keptVectors = vectors.filter((_, index) => !doomed.includes(chunks[index]!.id));
      // Each kept vector is its own nearest neighbour, at distance 0.
      for (const [index, vector] of keptVectors.entries()) {
        const { hits } = await store.search(vector, { topK: 1 });
        expect(hits[0]!.chunk.id).toBe(keptChunks[index]!.id);
        expect(hits[0]!.score).toBeCloseTo(1, 5);
      }
      const [query] = randomVectors(1, dimension, 8);
      await expectHits(store, query!, bruteForce('l2', keptChunks, keptVectors, query!, 20), { topK: 20 });
      // Deleted ids can come back.
      await store.add([chunks[1]!], { embeddings: [vectors[1]!] });
      expect((await store.search(vectors[1]!, { topK: 1 })).hits[0]!.chunk.id).toBe('c1');
      expect(await store.delete(keptChunks.map((chunk) => chunk.id).concat('c1'))).toBe(
        keptChunks.length + 1,
      );
      expect(await store.count()).toBe(0);
      expect((await store.search(query!, { topK: 5 })).hits).toEqual([]);
    });

    it('returns copies: changing a hit does not change the store', async () => {
      const store = new InMemoryVectorStore();
      await store.add([{ id: 'a', text: 't', metadata: { tags: ['x'] } }], { embeddings: [[1, 0]] });
      const [hit] = (await store.search([1, 0], { topK: 1 })).hits;
      hit!.chunk.metadata!.tags = ['changed'];
      expect((await store.search([1, 0], { topK: 1, filter: { tags: 'x' } })).hits).toHaveLength(1);
    });

    it('embeds texts with its embedder, and queries with embedQuery where it has one', async () => {
      const embedder = new FakeEmbedder();
      const store = new InMemoryVectorStore({ embedder });
      await store.add([
        { id: 'a', text: 'aaa' },
        { id: 'b', text: 'bb' },
        { id: 'cd', text: 'cd' },
      ]);
      expect(embedder.calls).toEqual([['aaa', 'bb', 'cd']]);
      expect((await store.search('a', { topK: 1 })).hits[0]!.chunk.id).toBe('a');
      const queries: string[] = [];
      const withQuery = Object.assign(new FakeEmbedder(), {
        embedQuery(text: string) {
          queries.push(text);
          return Promise.resolve(Float32Array.from([0, 0, 1, 1]));
        },
      });
      const store2 = new InMemoryVectorStore({ embedder: withQuery });
      await store2.add([
        { id: 'a', text: 'a' },
        { id: 'cd', text: 'cd' },
      ]);
      expect((await store2.search('anything', { topK: 1 })).hits[0]!.chunk.id).toBe('cd');
      expect(queries).toEqual(['anything']);
    });

    it('reports progress once the batch is written', async () => {
      const store = new InMemoryVectorStore();
      const progress: unknown[] = [];
      await store.add(chunksFor(3), {
        embeddings: randomVectors(3, 4, 1),
        onProgress: (p) => progress.push(p),
      });
      expect(progress).toEqual([{ written: 3, total: 3 }]);
    });
  });

  describe('refuses bad input with typed errors, writing nothing', () => {
    async function seeded(settings: InMemoryVectorStoreSettings = {}) {
      const store = new InMemoryVectorStore(settings);
      await store.add(chunksFor(2), {
        embeddings: [
          [1, 0, 0],
          [0, 1, 0],
        ],
      });
      return store;
    }

    async function expectUnchanged(store: InMemoryVectorStore) {
      expect(await store.count()).toBe(2);
      const { hits } = await store.search([1, 0, 0], { topK: 5 });
      expect(hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
        ['c0', 1],
        ['c1', 0],
      ]);
    }

    const badBatches: [string, unknown[], RegExp][] = [
      [
        'a wrong dimension',
        [
          [1, 0, 0],
          [1, 0],
        ],
        /#1 \(id 'n1'\): the vector has 2 dimensions, the store has 3/,
      ],
      [
        'NaN',
        [
          [1, 0, 0],
          [0, Number.NaN, 1],
        ],
        /#1 \(id 'n1'\).*NaN at position 1/,
      ],
      [
        'Infinity',
        [
          [Number.POSITIVE_INFINITY, 0, 0],
          [1, 1, 1],
        ],
        /#0 \(id 'n0'\).*Infinity at position 0/,
      ],
      ['a vector that is not numbers', [[1, 0, 0], 'nope'], /#1 \(id 'n1'\).*array of numbers/],
      [
        'a value beyond float32',
        [
          [1e39, 0, 0],
          [1, 1, 1],
        ],
        /#0 \(id 'n0'\).*float32/,
      ],
    ];

    it.each(badBatches)('%s', async (_, embeddings, message) => {
      const store = await seeded();
      // n0 is new, c0 would be replaced: neither may be written.
      const batch = [
        { id: 'n0', text: 'new' },
        { id: 'n1', text: 'new too' },
      ];
      const replacing = [{ id: 'c0', text: 'x' }, ...batch.slice(1)];
      for (const chunks of [batch, replacing]) {
        const error = await store
          .add(chunks, { embeddings: embeddings as number[][] })
          .catch((e: unknown) => e);
        expect(ChunkValidationError.isInstance(error)).toBe(true);
        if (chunks === batch) expect((error as Error).message).toMatch(message);
      }
      await expectUnchanged(store);
    });

    it('duplicate ids in a batch', async () => {
      const store = await seeded();
      const error = await store
        .add(
          [
            { id: 'n', text: 'a' },
            { id: 'n', text: 'b' },
          ],
          {
            embeddings: [
              [1, 1, 0],
              [0, 1, 1],
            ],
          },
        )
        .catch((e: unknown) => e);
      expect(ChunkValidationError.isInstance(error)).toBe(true);
      expect((error as ChunkValidationError).problems[0]).toMatchObject({ index: 1, id: 'n' });
      await expectUnchanged(store);
    });

    it('invalid chunks', async () => {
      const store = await seeded();
      const error = await store
        .add([{ id: '', text: 'a' }, { text: 'b' } as unknown as Chunk], {
          embeddings: [
            [1, 1, 0],
            [0, 1, 1],
          ],
        })
        .catch((e: unknown) => e);
      expect(ChunkValidationError.isInstance(error)).toBe(true);
      expect((error as ChunkValidationError).problems).toHaveLength(2);
      await expectUnchanged(store);
    });

    it('a missing embedder, or embeddings that do not match the chunks', async () => {
      const store = await seeded();
      await expect(store.add([{ id: 'n', text: 'a' }])).rejects.toSatisfy(InvalidArgumentError.isInstance);
      await expect(store.add([{ id: 'n', text: 'a' }], { embeddings: [] })).rejects.toSatisfy(
        InvalidArgumentError.isInstance,
      );
      await expect(store.search('text', { topK: 1 })).rejects.toSatisfy(InvalidArgumentError.isInstance);
      await expectUnchanged(store);
    });

    it('an embedder that returns the wrong number of vectors', async () => {
      const embedder: Embedder = {
        dimension: 3,
        embed: () => Promise.resolve([Float32Array.from([1, 0, 0])]),
      };
      const store = await seeded({ embedder });
      await expect(
        store.add([
          { id: 'x', text: 'a' },
          { id: 'y', text: 'b' },
        ]),
      ).rejects.toSatisfy(InvalidArgumentError.isInstance);
      await expectUnchanged(store);
    });

    it('bad searches', async () => {
      const store = await seeded();
      const refused = async (promise: Promise<unknown>, argument: string) => {
        const error = await promise.catch((e: unknown) => e);
        expect(InvalidArgumentError.isInstance(error)).toBe(true);
        expect((error as InvalidArgumentError).argument).toBe(argument);
      };
      await refused(store.search([1, 0], { topK: 1 }), 'query');
      await refused(store.search([1, Number.NaN, 0], { topK: 1 }), 'query');
      await refused(store.search([0, 0, 0], { topK: 1 }), 'query');
      await refused(store.search([1, 0, 0], { topK: 0 }), 'topK');
      await refused(store.search([1, 0, 0], { topK: 1.5 }), 'topK');
      await refused(store.search([1, 0, 0], { topK: 1, scoreThreshold: Number.NaN }), 'scoreThreshold');
      await expect(
        store.search([1, 0, 0], { topK: 1, filter: { field: { $bogus: 1 } } as FilterInput }),
      ).rejects.toSatisfy(FilterError.isInstance);
      await refused(store.delete('c0' as unknown as string[]), 'ids');
      await expectUnchanged(store);
    });

    it('contradictory settings', () => {
      expect(() => new InMemoryVectorStore({ dimension: 5, embedder: new FakeEmbedder() })).toThrow(
        /embedder produces 4/,
      );
      expect(() => new InMemoryVectorStore({ dimension: 0 })).toThrow(InvalidArgumentError);
      expect(() => new InMemoryVectorStore({ metric: 'hamming' as DistanceMetric })).toThrow(
        InvalidArgumentError,
      );
      expect(() => new InMemoryVectorStore({ rescore: { factor: 0.5 } })).toThrow(InvalidArgumentError);
    });

    it('aborted calls', async () => {
      const store = await seeded();
      const signal = AbortSignal.abort();
      await expect(store.add(chunksFor(1), { embeddings: [[1, 1, 1]], signal })).rejects.toSatisfy(
        AbortedError.isInstance,
      );
      await expect(store.search([1, 0, 0], { topK: 1, signal })).rejects.toSatisfy(AbortedError.isInstance);
      await expect(store.delete(['c0'], { signal })).rejects.toSatisfy(AbortedError.isInstance);
      await expectUnchanged(store);
    });
  });

  it('learns its dimension from the first vectors when not told', async () => {
    const store = new InMemoryVectorStore();
    expect(store.dimension).toBeUndefined();
    expect((await store.search([1, 2], { topK: 3 })).hits).toEqual([]);
    await store.add(chunksFor(1), { embeddings: [[1, 2, 3, 4, 5]] });
    expect(store.dimension).toBe(5);
    await expect(store.add(chunksFor(1, 'x'), { embeddings: [[1, 2]] })).rejects.toSatisfy(
      ChunkValidationError.isInstance,
    );
  });

  it('int8 with re-scoring finds the exact top 10 on clustered data', async () => {
    const dimension = 384;
    const count = 10_000;
    const data = clusteredData({ count, dimension, queries: 30, seed: 42 });
    const chunks = chunksFor(count);
    const embeddings = Array.from({ length: count }, (_, index) =>
      data.vectors.subarray(index * dimension, (index + 1) * dimension),
    );
    for (const metric of ['cosine', 'l2'] as const) {
      const exact = new InMemoryVectorStore({ metric });
      const quantized = new InMemoryVectorStore({ metric, quantization: 'int8' });
      await exact.add(chunks, { embeddings });
      await quantized.add(chunks, { embeddings });
      let found = 0;
      for (const query of data.queries) {
        const truth = (await exact.search(query, { topK: 10 })).hits;
        const approximate = (await quantized.search(query, { topK: 10 })).hits;
        const ids = new Set(truth.map((hit) => hit.chunk.id));
        found += approximate.filter((hit) => ids.has(hit.chunk.id)).length;
        // Re-scored exactly: same scores as the exact scan.
        expect(approximate.map((hit) => hit.score)).toEqual(truth.map((hit) => hit.score));
      }
      expect(found / (10 * data.queries.length)).toBe(1);
    }
  }, 60_000);

  it('holds each mode in the memory it reports, int8-only without a float32 copy', async () => {
    const dimension = 384;
    const chunks = chunksFor(100);
    const embeddings = randomVectors(100, dimension, 5);
    const perVector: Record<string, number | undefined> = {};
    const held: Record<string, number> = {};
    for (const quantization of ['none', 'int8', 'int8-only'] as const) {
      const store = new InMemoryVectorStore({ quantization });
      expect(store.stats().bytesPerVector).toBeUndefined();
      await store.add(chunks, { embeddings });
      perVector[quantization] = store.stats().bytesPerVector;
      held[quantization] = store.stats().vectorBytes;
    }
    // float32 row + norm + scratch; + codes and scale; codes, scale, norm and scratch only. Where
    // the int8 scans use relaxed SIMD, each row's code sum too.
    const sum = new InMemoryVectorStore().stats().int8Kernel === 'relaxed-simd' ? 4 : 0;
    expect(perVector).toEqual({ none: 1552, int8: 1940 + sum, 'int8-only': 404 + sum });
    expect(held['int8-only']).toBeLessThan(held.none! / 2);
    expect(new InMemoryVectorStore().stats().quantization).toBe('int8');
  });

  it('says which kernel its int8 scans use, and none when it has no int8 scan', () => {
    const here = new InMemoryVectorStore().stats().int8Kernel;
    expect(['relaxed-simd', 'simd']).toContain(here);
    expect(new InMemoryVectorStore({ quantization: 'int8-only' }).stats().int8Kernel).toBe(here);
    expect(new InMemoryVectorStore({ quantization: 'none' }).stats().int8Kernel).toBeUndefined();
    // An IVF index scans its lists' int8 codes whatever the store keeps.
    expect(new InMemoryVectorStore({ quantization: 'none', index: 'auto' }).stats().int8Kernel).toBe(here);
    expect(new InMemoryVectorStore({ kernel: 'js' }).stats().int8Kernel).toBe('js');
  });

  it('int8-only re-scores from the codes: near-exact scores and recall on clustered data', async () => {
    const dimension = 384;
    const count = 10_000;
    const data = clusteredData({ count, dimension, queries: 30, seed: 42 });
    const chunks = chunksFor(count);
    const embeddings = Array.from({ length: count }, (_, index) =>
      data.vectors.subarray(index * dimension, (index + 1) * dimension),
    );
    for (const metric of ['cosine', 'l2'] as const) {
      const exact = new InMemoryVectorStore({ metric, quantization: 'none' });
      const compact = new InMemoryVectorStore({ metric, quantization: 'int8-only' });
      await exact.add(chunks, { embeddings });
      await compact.add(chunks, { embeddings });
      let found = 0;
      let worstError = 0;
      for (const query of data.queries) {
        const truth = (await exact.search(query, { topK: 10 })).hits;
        const approximate = (await compact.search(query, { topK: 10 })).hits;
        const truthScores = new Map(truth.map((hit) => [hit.chunk.id, hit.score]));
        for (const hit of approximate) {
          const score = truthScores.get(hit.chunk.id);
          if (score === undefined) continue;
          found++;
          worstError = Math.max(worstError, Math.abs(score - hit.score));
        }
      }
      expect(found / (10 * data.queries.length)).toBeGreaterThanOrEqual(0.97);
      expect(worstError).toBeLessThan(0.01);
      expect(worstError).toBeGreaterThan(0); // approximate, as documented
    }
  }, 60_000);

  it('int8-only deletes, lists and round-trips a snapshot to the same codes', async () => {
    const dimension = 40;
    const chunks = chunksFor(300);
    const embeddings = randomVectors(300, dimension, 11);
    const store = new InMemoryVectorStore({ metric: 'l2', quantization: 'int8-only' });
    await store.add(chunks, { embeddings });
    expect(await store.delete(['c0', 'c17', 'c299'])).toBe(3);
    const queries = randomVectors(5, dimension, 12);
    const before = await Promise.all(queries.map((query) => store.search(query, { topK: 7 })));
    expect(before[0]!.hits.map((hit) => hit.chunk.id)).not.toContain('c0');
    const snapshot = store.snapshot()!;
    expect(snapshot.vectors.length).toBe(297 * dimension);
    const restored = InMemoryVectorStore.fromSnapshot(snapshot, { quantization: 'int8-only' });
    expect(restored.snapshot()!.vectors).toEqual(snapshot.vectors);
    const after = await Promise.all(queries.map((query) => restored.search(query, { topK: 7 })));
    expect(after.map((result) => result.hits.map((hit) => [hit.chunk.id, hit.score]))).toEqual(
      before.map((result) => result.hits.map((hit) => [hit.chunk.id, hit.score])),
    );
    // What a snapshot holds is within one quantisation step of what was added.
    const row = snapshot.vectors.subarray(5 * dimension, 6 * dimension);
    const original = embeddings[5]!;
    const step = Math.max(...Array.from(original, Math.abs)) / 127;
    for (let j = 0; j < dimension; j++) expect(Math.abs(row[j]! - original[j]!)).toBeLessThanOrEqual(step);
  });
});
