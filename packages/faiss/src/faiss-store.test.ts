import {
  type Chunk,
  ChunkValidationError,
  createInMemoryVectorStore,
  type DistanceMetric,
  FilterError,
  HashEmbedder,
  InvalidArgumentError,
  nativeFilter,
  type VectorHit,
} from '@zerda/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { faissFilterConvention } from './faiss-filter.js';
import { HNSW_DEFAULTS } from './faiss-settings.js';
import { createFaissStore, type FaissIndexType, type FaissStore } from './faiss-store.js';
import { clusteredVectors, seededRandom, testChunks } from './test-utils/data.js';
import { faissSkipped, requireFaiss } from './test-utils/faiss-available.js';

const ids = (hits: VectorHit[]) => hits.map((hit) => hit.chunk.id);
const metrics: DistanceMetric[] = ['cosine', 'dot', 'l2'];
/** FAISS's native filter: the allowed document ids. */
const docIds = (docIdFilter: string[]) => nativeFilter(faissFilterConvention, { docIdFilter });

/** A FAISS store and an in-memory reference store holding the same chunks and vectors. */
async function pair(
  indexType: FaissIndexType,
  metric: DistanceMetric,
  count: number,
  dimension: number,
  settings: { compactRatio?: number; hnsw?: { efConstruction?: number; efSearch?: number } } = {},
) {
  const faiss = createFaissStore({ indexType, metric, ...settings });
  const reference = createInMemoryVectorStore({ metric });
  const chunks = testChunks(count);
  const vectors = clusteredVectors(count, dimension);
  await faiss.add(chunks, { embeddings: vectors });
  await reference.add(chunks, { embeddings: vectors });
  return { faiss, reference, chunks, vectors, queries: clusteredVectors(12, dimension, 99) };
}

/** Every chunk's listed vector, by id; each page must carry one vector per chunk. */
async function listVectors(store: FaissStore, pageSize: number): Promise<Map<string, Float32Array>> {
  const listed = new Map<string, Float32Array>();
  for await (const { chunks, vectors } of store.listRecords({ pageSize })) {
    expect(vectors).toHaveLength(chunks.length);
    for (const [index, chunk] of chunks.entries()) listed.set(chunk.id, vectors![index]!);
  }
  return listed;
}

describe.skipIf(faissSkipped)('FaissStore', () => {
  beforeAll(async () => {
    await requireFaiss();
  });

  describe.each(metrics)('flat, %s', (metric) => {
    it('returns exactly the in-memory store’s hits and scores', async () => {
      const { faiss, reference, queries } = await pair('flat', metric, 600, 16);
      for (const query of queries) {
        const got = (await faiss.search(query, { topK: 10 })).hits;
        const want = (await reference.search(query, { topK: 10 })).hits;
        expect(ids(got)).toEqual(ids(want));
        got.forEach((hit, index) => {
          expect(hit.score).toBeCloseTo(want[index]!.score, 4);
        });
      }
    });

    it('deletes by id: later labels shift, results stay exact', async () => {
      const { faiss, reference, queries } = await pair('flat', metric, 400, 8);
      const doomed = Array.from({ length: 80 }, (_, index) => `c${index * 5 + 1}`);
      expect(await faiss.delete([...doomed, 'missing', doomed[0]!])).toBe(80);
      await reference.delete(doomed);
      expect(await faiss.count()).toBe(320);
      expect(faiss.stats()).toMatchObject({ count: 320, indexed: 320, deleted: 0 });
      for (const query of queries) {
        expect(ids((await faiss.search(query, { topK: 15 })).hits)).toEqual(
          ids((await reference.search(query, { topK: 15 })).hits),
        );
      }
    });
  });

  it('deletes many ids at once by rebuilding the flat index (same results)', async () => {
    const { faiss, reference, queries } = await pair('flat', 'cosine', 12_000, 8);
    const random = seededRandom(5);
    const doomed = Array.from({ length: 12_000 }, (_, index) => `c${index}`).filter(() => random() < 0.5);
    expect(doomed.length * 12_000).toBeGreaterThan(50_000_000); // beyond removeIds' budget
    expect(await faiss.delete(doomed)).toBe(doomed.length);
    await reference.delete(doomed);
    expect(await faiss.count()).toBe(12_000 - doomed.length);
    for (const query of queries) {
      expect(ids((await faiss.search(query, { topK: 10 })).hits)).toEqual(
        ids((await reference.search(query, { topK: 10 })).hits),
      );
    }
  });

  describe.each(metrics)('hnsw, %s', (metric) => {
    it('finds nearly all true neighbours, with exact scores for what it returns', async () => {
      const { faiss, reference, queries } = await pair('hnsw', metric, 3000, 16);
      let found = 0;
      for (const query of queries) {
        const got = (await faiss.search(query, { topK: 10 })).hits;
        const exact = (await reference.search(query, { topK: 3000 })).hits;
        const top = new Set(ids(exact.slice(0, 10)));
        found += got.filter((hit) => top.has(hit.chunk.id)).length;
        const scoreOf = new Map(exact.map((hit) => [hit.chunk.id, hit.score]));
        expect(got).toHaveLength(10);
        for (const hit of got) expect(hit.score).toBeCloseTo(scoreOf.get(hit.chunk.id)!, 4);
      }
      expect(found / (10 * queries.length)).toBeGreaterThanOrEqual(0.8);
    });
  });

  it('hnsw: efSearch (which faiss-node cannot set) takes effect', async () => {
    const recall = async (efSearch: number) => {
      // efConstruction pinned: a better-built graph leaves less for efSearch to show.
      const settings = { hnsw: { efConstruction: 40, efSearch } };
      const { faiss, reference, queries } = await pair('hnsw', 'l2', 3000, 16, settings);
      expect(faiss.stats().hnsw).toEqual({ m: 32, efConstruction: 40, efSearch });
      let found = 0;
      for (const query of queries) {
        const top = new Set(ids((await reference.search(query, { topK: 10 })).hits));
        found += (await faiss.search(query, { topK: 10 })).hits.filter((hit) => top.has(hit.chunk.id)).length;
      }
      return found / (10 * queries.length);
    };
    const narrow = await recall(10);
    const wide = await recall(400);
    expect(wide).toBeGreaterThan(narrow);
    expect(wide).toBeGreaterThanOrEqual(0.97);
  });

  it('hnsw: deleted chunks are hidden at once and dropped when the index is compacted', async () => {
    const { faiss, queries } = await pair('hnsw', 'cosine', 1000, 16, { compactRatio: 0.5 });
    const doomed = Array.from({ length: 200 }, (_, index) => `c${index * 5}`);
    expect(await faiss.delete(doomed)).toBe(200);
    expect(faiss.stats()).toMatchObject({ count: 800, indexed: 1000, deleted: 200 });
    const gone = new Set(doomed);
    for (const query of queries) {
      const hits = (await faiss.search(query, { topK: 50 })).hits;
      expect(hits).toHaveLength(50);
      expect(hits.filter((hit) => gone.has(hit.chunk.id))).toEqual([]);
    }
    const before = (await faiss.search(queries[0]!, { topK: 5 })).hits;
    expect(await faiss.compact()).toBe(200);
    expect(faiss.stats()).toMatchObject({ count: 800, indexed: 800, deleted: 0 });
    expect(await faiss.compact()).toBe(0);
    // The rebuilt graph differs, but the nearest chunks are found again.
    const after = (await faiss.search(queries[0]!, { topK: 5 })).hits;
    expect(ids(after)).toEqual(ids(before));
  });

  it('hnsw: compacts by itself once deleted entries pass compactRatio', async () => {
    const { faiss } = await pair('hnsw', 'l2', 400, 8, { compactRatio: 0.25 });
    await faiss.delete(Array.from({ length: 99 }, (_, index) => `c${index}`));
    expect(faiss.stats()).toMatchObject({ indexed: 400, deleted: 99 });
    await faiss.delete(['c99']);
    expect(faiss.stats()).toMatchObject({ count: 300, indexed: 300, deleted: 0 });
  });

  it.each(['flat', 'hnsw'] as const)('%s: upsert replaces a chunk and its vector', async (indexType) => {
    const store = createFaissStore({ indexType, dimension: 3 });
    await store.add(
      [
        { id: 'a', text: 'first a' },
        { id: 'b', text: 'b' },
      ],
      { embeddings: [new Float32Array([1, 0, 0]), new Float32Array([0, 1, 0])] },
    );
    const result = await store.add([{ id: 'a', text: 'second a', metadata: { v: 2 } }], {
      embeddings: [[0, 0, 1]],
    });
    expect(result.ids).toEqual(['a']);
    expect(await store.count()).toBe(2);
    const hits = (await store.search([0, 0.1, 1], { topK: 2 })).hits;
    expect(hits[0]).toMatchObject({ chunk: { id: 'a', text: 'second a', metadata: { v: 2 } } });
    expect(hits[0]!.score).toBeCloseTo(1 / Math.hypot(0.1, 1), 5);
    expect(hits.map((hit) => hit.chunk.id)).toEqual(['a', 'b']);
  });

  it.each(['flat', 'hnsw'] as const)(
    '%s: docIdFilter passes only the allowed documents (on flat, exactly the reference’s hits)',
    async (indexType) => {
      const { faiss, reference, queries } = await pair(indexType, 'cosine', 2000, 16);
      const random = seededRandom(11);
      let found = 0;
      for (const query of queries) {
        const allowed = Array.from(
          { length: 1 + Math.floor(random() * 3) },
          () => `doc${Math.floor(random() * 50)}`,
        );
        const got = (await faiss.search(query, { topK: 10, nativeFilter: docIds(allowed) })).hits;
        const want = (await reference.search(query, { topK: 10, filter: { docId: allowed } })).hits;
        expect(got.every((hit) => allowed.includes(hit.chunk.docId!))).toBe(true);
        expect(got).toHaveLength(want.length);
        if (indexType === 'flat') expect(ids(got)).toEqual(ids(want));
        else found += got.filter((hit) => ids(want).includes(hit.chunk.id)).length / want.length;
      }
      // HNSW is approximate (exact when the graph cannot reach enough matches, see the next test).
      expect(found / queries.length).toBeGreaterThanOrEqual(indexType === 'flat' ? 0 : 0.8);
      expect((await faiss.search(queries[0]!, { topK: 10, nativeFilter: docIds([]) })).hits).toEqual([]);
      expect((await faiss.search(queries[0]!, { topK: 10, nativeFilter: docIds(['nope']) })).hits).toEqual(
        [],
      );
      // Fewer matches than topK: all of them.
      expect(
        (await faiss.search(queries[0]!, { topK: 100, nativeFilter: docIds(['doc3']) })).hits,
      ).toHaveLength(40);
      if (indexType === 'hnsw') expect(faiss.stats().exactCopy).toBe(true);
    },
  );

  it('hnsw: a filter the graph cannot satisfy is answered exactly, from an exact copy kept in step with writes', async () => {
    const { faiss, reference, queries } = await pair('hnsw', 'cosine', 1500, 16);
    await faiss.search(queries[0]!, { topK: 10, nativeFilter: docIds(['doc1']) });
    expect(faiss.stats().exactCopy).toBe(true);
    const extra = testChunks(1600).slice(1500);
    const vectors = clusteredVectors(100, 16, 7);
    await faiss.add(extra, { embeddings: vectors });
    await reference.add(extra, { embeddings: vectors });
    await faiss.delete(['c1', 'c51']);
    await reference.delete(['c1', 'c51']);
    for (const query of queries) {
      const got = (await faiss.search(query, { topK: 40, nativeFilter: docIds(['doc1']) })).hits;
      const want = (await reference.search(query, { topK: 40, filter: { docId: 'doc1' } })).hits;
      expect(ids(got)).toEqual(ids(want));
    }
  });

  it.each(['flat', 'hnsw'] as const)(
    '%s: get and list read the kept chunks (copies), deleted ones left out',
    async (indexType) => {
      // compactRatio 1 keeps HNSW's tombstones, so list pages over them.
      const store = createFaissStore({ indexType, compactRatio: 1 });
      const chunks = testChunks(25);
      await store.add(chunks, { embeddings: clusteredVectors(25, 4) });
      expect(await store.delete(['c3', 'c10', 'missing'])).toBe(2);
      expect(store.stats().deleted).toBe(indexType === 'hnsw' ? 2 : 0);
      expect(store.capabilities).toMatchObject({ deletion: true, listing: true, persistent: false });
      expect((await store.get(['c5', 'c3', 'missing', 'c0'])).map((chunk) => chunk.id)).toEqual(['c5', 'c0']);
      const [copy] = await store.get(['c5']);
      expect(copy).toEqual(chunks[5]);
      (copy!.metadata!.tags as string[]).push('changed');
      expect(await store.get(['c5'])).toEqual([chunks[5]]);
      const pages: Chunk[][] = [];
      for await (const page of store.list({ pageSize: 4 })) pages.push(page);
      expect(pages.every((page) => page.length > 0 && page.length <= 4)).toBe(true);
      expect(pages.flat()).toEqual(chunks.filter((chunk) => chunk.id !== 'c3' && chunk.id !== 'c10'));
    },
  );

  it.each(['flat', 'hnsw'] as const)(
    '%s: listRecords gives back the vector stored for each chunk, across pages and writes',
    async (indexType) => {
      const vectors = clusteredVectors(30, 8);
      // What FAISS holds: float32 values, and for 'cosine' the vector scaled to unit length.
      const stored = (vector: Float32Array, metric: DistanceMetric) => {
        if (metric !== 'cosine') return Array.from(vector);
        const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
        return Array.from(vector, (value) => value / norm);
      };
      for (const metric of metrics) {
        const store = createFaissStore({ indexType, metric, compactRatio: 1 });
        await store.add(testChunks(30), { embeddings: vectors });
        await store.delete(['c4', 'c17']);
        // Replaced: the new vector under a new label (HNSW keeps a tombstone for the old one).
        await store.add([{ id: 'c5', text: 'replaced' }], { embeddings: [vectors[29]!] });
        const listed = await listVectors(store, 7);
        expect(listed.size).toBe(28);
        for (const [id, vector] of listed) {
          const expected = stored(id === 'c5' ? vectors[29]! : vectors[Number(id.slice(1))]!, metric);
          if (metric === 'cosine') {
            for (const [j, value] of vector.entries()) expect(value).toBeCloseTo(expected[j]!, 6);
          } else expect(Array.from(vector)).toEqual(expected);
        }
        // A write between two pages: the next page reads the vectors as they are now.
        const driver = store.driver as Required<typeof store.driver>;
        const first = await driver.list({ limit: 2, includeVectors: true });
        await store.add([{ id: 'late', text: 'late' }], { embeddings: [vectors[0]!] });
        let cursor = first.nextCursor;
        const rest: Float32Array[] = [];
        while (cursor !== undefined) {
          const page = await driver.list({ cursor, limit: 10, includeVectors: true });
          rest.push(...page.vectors!);
          cursor = page.nextCursor;
        }
        expect(Array.from(rest.at(-1)!)).toEqual(Array.from(listed.get('c0')!));
        expect(rest.every((vector) => vector.length === 8)).toBe(true);
        // Compaction rebuilds the index from these same vectors.
        await store.compact();
        const compacted = await listVectors(store, 1000);
        expect(compacted.size).toBe(29);
        for (const [id, vector] of listed) expect(compacted.get(id)).toEqual(vector);
      }
    },
  );

  it('docId is read from metadata.docId too, and string-array docIds match any element', async () => {
    const store = createFaissStore({ dimension: 2 });
    await store.add(
      [
        { id: 'top', text: 'top', docId: 'd1' },
        { id: 'meta', text: 'meta', metadata: { docId: 'd2' } },
        { id: 'list', text: 'list', metadata: { docId: ['d3', 'd4'] } },
        { id: 'none', text: 'none' },
      ],
      {
        embeddings: [
          [1, 0],
          [1, 0.1],
          [1, 0.2],
          [1, 0.3],
        ],
      },
    );
    const search = async (allowed: string[]) =>
      ids((await store.search([1, 0], { topK: 10, nativeFilter: docIds(allowed) })).hits).sort();
    expect(await search(['d1'])).toEqual(['top']);
    expect(await search(['d2', 'd4'])).toEqual(['list', 'meta']);
    expect(await search(['d3'])).toEqual(['list']);
  });

  it('applies scoreThreshold to the converted similarity', async () => {
    const store = createFaissStore({ metric: 'l2', dimension: 1 });
    await store.add(
      [
        { id: 'near', text: 'n' },
        { id: 'far', text: 'f' },
      ],
      { embeddings: [[1], [4]] },
    );
    const hits = (await store.search([0], { topK: 2 })).hits;
    expect(hits.map((hit) => hit.score)).toEqual([1 / 2, 1 / 5]);
    expect(ids((await store.search([0], { topK: 2, scoreThreshold: 0.3 })).hits)).toEqual(['near']);
  });

  it('embeds texts with its embedder, and returns copies of the chunks', async () => {
    const store = createFaissStore({ embedder: new HashEmbedder({ dimension: 64 }) });
    expect(store.dimension).toBe(64);
    await store.add([
      { id: 'cats', text: 'cats purr and sleep in the sun', metadata: { tags: ['pets'] } },
      { id: 'tax', text: 'the tax return is due in april' },
    ]);
    const [first] = (await store.search('sleepy cats', { topK: 1 })).hits;
    expect(first?.chunk.id).toBe('cats');
    (first!.chunk.metadata!.tags as string[]).push('changed');
    const [again] = (await store.search('sleepy cats', { topK: 1 })).hits;
    expect(again?.chunk.metadata).toEqual({ tags: ['pets'] });
  });

  it('an empty store answers nothing', async () => {
    expect((await createFaissStore().search([1, 2], { topK: 3 })).hits).toEqual([]);
    expect((await createFaissStore({ dimension: 2 }).search([1, 2], { topK: 3 })).hits).toEqual([]);
  });

  it('hnsw defaults: the settings the bench sweep chose', () => {
    expect(HNSW_DEFAULTS).toEqual({ m: 32, efConstruction: 160, efSearch: 64 });
    expect(createFaissStore({ indexType: 'hnsw' }).stats().hnsw).toEqual(HNSW_DEFAULTS);
    expect(createFaissStore({ indexType: 'hnsw', hnsw: { efSearch: 16 } }).stats().hnsw).toEqual({
      ...HNSW_DEFAULTS,
      efSearch: 16,
    });
  });

  describe('refuses bad input with a typed error and writes nothing', () => {
    async function seeded(indexType: FaissIndexType) {
      const store = createFaissStore({ indexType });
      await store.add(testChunks(3), {
        embeddings: [
          [1, 0, 0],
          [0, 1, 0],
          [0, 0, 1],
        ],
      });
      const before = (await store.search([1, 1, 1], { topK: 3 })).hits;
      return { store, before };
    }
    const cases: [string, Chunk[], unknown[]][] = [
      [
        'a wrong dimension',
        [
          { id: 'x', text: 'x' },
          { id: 'y', text: 'y' },
        ],
        [
          [1, 2, 3],
          [1, 2],
        ],
      ],
      [
        'NaN',
        [
          { id: 'x', text: 'x' },
          { id: 'y', text: 'y' },
        ],
        [
          [1, 2, 3],
          [1, Number.NaN, 3],
        ],
      ],
      ['Infinity', [{ id: 'x', text: 'x' }], [[1, Number.POSITIVE_INFINITY, 3]]],
      [
        'duplicate ids in one batch',
        [
          { id: 'x', text: 'x' },
          { id: 'x', text: 'again' },
        ],
        [
          [1, 2, 3],
          [3, 2, 1],
        ],
      ],
      [
        'a replaced chunk and a bad one',
        [
          { id: 'c0', text: 'new' },
          { id: 'y', text: 'y' },
        ],
        [[0, 0, 1], 'no'],
      ],
    ];
    for (const indexType of ['flat', 'hnsw'] as const) {
      it.each(cases)(`${indexType}: %s`, async (_, chunks, embeddings) => {
        const { store, before } = await seeded(indexType);
        const error = await store
          .add(chunks, { embeddings: embeddings as number[][] })
          .catch((caught: unknown) => caught);
        expect(ChunkValidationError.isInstance(error)).toBe(true);
        expect(await store.count()).toBe(3);
        expect(store.stats()).toMatchObject({ indexed: 3, deleted: 0 });
        expect((await store.search([1, 1, 1], { topK: 3 })).hits).toEqual(before);
      });
    }

    it('a failed first batch does not fix the dimension', async () => {
      const store = createFaissStore();
      await expect(store.add([{ id: 'a', text: 'a' }], { embeddings: [[1, Number.NaN]] })).rejects.toSatisfy(
        ChunkValidationError.isInstance,
      );
      expect(store.dimension).toBeUndefined();
      await store.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 2, 3]] });
      expect(store.dimension).toBe(3);
    });

    it('embeddings that do not match the chunks, and no embedder', async () => {
      const store = createFaissStore();
      await expect(store.add(testChunks(2), { embeddings: [[1, 2]] })).rejects.toSatisfy(
        InvalidArgumentError.isInstance,
      );
      await expect(store.add(testChunks(2))).rejects.toSatisfy(InvalidArgumentError.isInstance);
      expect(await store.count()).toBe(0);
    });

    it('bad queries and search options', async () => {
      const { store } = await seeded('flat');
      const refused = async (promise: Promise<unknown>, argument: string) => {
        const error = await promise.catch((caught: unknown) => caught);
        expect(InvalidArgumentError.isInstance(error)).toBe(true);
        expect((error as InvalidArgumentError).argument).toBe(argument);
      };
      await refused(store.search([1, 2], { topK: 1 }), 'query');
      await refused(store.search([1, Number.NaN, 2], { topK: 1 }), 'query');
      await refused(store.search([0, 0, 0], { topK: 1 }), 'query'); // no direction for cosine
      await refused(store.search('text', { topK: 1 }), 'query'); // no embedder
      await refused(store.search([1, 2, 3], { topK: 0 }), 'topK');
      await refused(store.search([1, 2, 3], { topK: 1.5 }), 'topK');
      // A native filter of the wrong shape, of another backend, or not made by nativeFilter.
      const filterRefused = async (options: object) => {
        const error = await store
          .search([1, 2, 3], { topK: 1, ...options })
          .catch((caught: unknown) => caught);
        expect(FilterError.isInstance(error), String(error)).toBe(true);
      };
      await filterRefused({
        nativeFilter: nativeFilter(faissFilterConvention, { docIdFilter: 'doc1' as never }),
      });
      await filterRefused({ nativeFilter: nativeFilter('chroma', { docId: { $eq: 'doc1' } }) });
      await filterRefused({ nativeFilter: { docIdFilter: ['doc1'] } });
      await filterRefused({ filter: { category: { $near: 1 } } });
      // Contract v1's filter options would be silently ignored: they are refused instead.
      await refused(store.search([1, 2, 3], { topK: 1, docIdFilter: ['doc1'] } as never), 'docIdFilter');
      await refused(store.search([1, 2, 3], { topK: 1, where: { category: 'legal' } } as never), 'where');
      await refused(store.delete('c1' as never), 'ids');
    });

    it('bad settings', () => {
      expect(() => createFaissStore({ metric: 'hamming' as never })).toThrow(InvalidArgumentError);
      expect(() => createFaissStore({ indexType: 'ivf' as never })).toThrow(InvalidArgumentError);
      expect(() => createFaissStore({ hnsw: { m: 16 } })).toThrow(/indexType 'hnsw'/);
      expect(() => createFaissStore({ indexType: 'hnsw', hnsw: { efSearch: 0 } })).toThrow(
        InvalidArgumentError,
      );
      expect(() => createFaissStore({ indexType: 'hnsw', hnsw: { m: 2_000_000 } })).toThrow(
        /at most 1,000,000/,
      );
      expect(() => createFaissStore({ indexType: 'hnsw', hnsw: { efConstruction: 1.5 } })).toThrow(
        /hnsw.efConstruction/,
      );
      expect(() => createFaissStore({ compactRatio: 0 })).toThrow(InvalidArgumentError);
      expect(() => createFaissStore({ dimension: 4, embedder: new HashEmbedder({ dimension: 8 }) })).toThrow(
        InvalidArgumentError,
      );
    });
  });
});
