import {
  type Chunk,
  createInMemoryVectorStore,
  type Embedder,
  evaluateFilter,
  type FilterConvention,
  FilterError,
  type FilterRecord,
  parseFilter,
  resolveFilter,
  serializeFilter,
  VectorRetriever,
} from '@zerda/core';
import { filterNodeArbitrary, filterRecordArbitrary } from '@zerda/core/testing';
import { testFilterConvention } from '@zerda/testing';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type FaissFilter, faissFilterConvention, matchesDocIdFilter } from './faiss-filter.js';
import { createFaissStore, type FaissIndexType } from './faiss-store.js';
import { clusteredVectors, seededRandom, testChunks } from './test-utils/data.js';
import { faissSkipped, requireFaiss } from './test-utils/faiss-available.js';

/** Embeds known texts to known vectors, so retrievers can be driven by text queries. */
function lookupEmbedder(dimension: number, table: Map<string, Float32Array>): Embedder {
  return {
    dimension,
    async embed(texts) {
      return texts.map((text) => {
        const vector = table.get(text);
        if (vector === undefined) throw new Error(`no vector for '${text}'`);
        return vector;
      });
    },
  };
}

async function corpus(indexType: FaissIndexType, count: number, dimension: number) {
  const chunks = testChunks(count);
  const vectors = clusteredVectors(count, dimension, 3);
  const queries = clusteredVectors(10, dimension, 4);
  const table = new Map<string, Float32Array>();
  chunks.forEach((chunk, index) => {
    table.set(chunk.text, vectors[index]!);
  });
  queries.forEach((query, index) => {
    table.set(`q${index}`, query);
  });
  const embedder = lookupEmbedder(dimension, table);
  const faiss = createFaissStore({ indexType, embedder });
  const reference = createInMemoryVectorStore({ embedder });
  await faiss.add(chunks);
  await reference.add(chunks);
  return { faiss, reference, queries: queries.map((_, index) => `q${index}`) };
}

/** FAISS's native semantics, strict about form: a malformed translation throws instead of passing. */
function evaluateFaissFilter(native: unknown, record: FilterRecord): boolean {
  const problem = faissFilterConvention.checkNative?.(native);
  if (problem !== undefined || Object.keys(native as object).length !== 1) {
    throw new Error(`FAISS would refuse ${JSON.stringify(native)}: ${problem ?? 'unknown keys'}`);
  }
  return matchesDocIdFilter((native as FaissFilter).docIdFilter, record);
}

const convention: FilterConvention = faissFilterConvention;
const translate = (filter: object) => convention.translate(parseFilter(filter));
const pushable = (filter: object) => convention.canPushDown(parseFilter(filter));

describe('faissFilterConvention', () => {
  it('pushes docId equality and membership as an allow-list', () => {
    expect(convention.name).toBe('faiss');
    expect(translate({ docId: 'd1' })).toEqual({ docIdFilter: ['d1'] });
    expect(translate({ docId: ['d2', 'd1', 'd2'] })).toEqual({ docIdFilter: ['d1', 'd2'] });
    expect(translate({ $or: [{ docId: 'd3' }, { docId: { $in: ['d1'] } }] })).toEqual({
      docIdFilter: ['d1', 'd3'],
    });
    expect(translate({ $not: { docId: { $nin: ['d1'] } } })).toEqual({ docIdFilter: ['d1'] });
    expect(translate({ docId: { $in: [] } })).toEqual({ docIdFilter: [] });
  });

  it('pushes nothing else', () => {
    for (const filter of [
      { color: 'red' },
      { docId: { $ne: 'd1' } },
      { docId: { $nin: ['d1'] } },
      { docId: 5 },
      { docId: ['d1', 5] },
      { docId: { $exists: true } },
      { $or: [{ docId: 'd1' }, { color: 'red' }] },
      { docId: 'd1', $and: [{ docId: ['d1', 'd2'] }] },
    ]) {
      expect(pushable(filter)).toBe(false);
    }
    expect(() => translate({ color: 'red' })).toThrow(FilterError);
  });

  it('checks native filters written by hand', () => {
    expect(convention.checkNative?.({ docIdFilter: [] })).toBeUndefined();
    expect(convention.checkNative?.({ docIdFilter: ['d1', 'd2'] })).toBeUndefined();
    for (const bad of [
      undefined,
      null,
      ['d1'],
      { docIdFilter: 'd1' },
      { docIdFilter: ['d1', 2] },
      { docId: 'd1' },
    ]) {
      expect(convention.checkNative?.(bad)).toMatch(/docIdFilter/);
    }
  });

  it('matches a record by its docId, falling back to metadata.docId', () => {
    expect(matchesDocIdFilter(['d1'], { id: 'r', docId: 'd1' })).toBe(true);
    expect(matchesDocIdFilter(['d1'], { id: 'r', metadata: { docId: 'd1' } })).toBe(true);
    expect(matchesDocIdFilter(new Set(['d1']), { id: 'r', metadata: { docId: ['d0', 'd1'] } })).toBe(true);
    expect(matchesDocIdFilter(['d1'], { id: 'r' })).toBe(false);
    expect(matchesDocIdFilter([], { id: 'r', docId: 'd1' })).toBe(false);
  });
});

/*
 * The invariant behind the convention: what FAISS selects natively, intersected with what the
 * residual selects client-side, is exactly what Zerda's reference evaluator selects.
 */
testFilterConvention({
  convention,
  semantics: { 'docId allow-list': evaluateFaissFilter },
  minPushed: 20,
});

describe.skipIf(faissSkipped)(
  'filters over a FAISS store (docIdFilter pushed down, the rest client-side)',
  () => {
    beforeAll(async () => {
      await requireFaiss();
    });

    it.each(['flat', 'hnsw'] as const)(
      '%s: { category: "legal" }, 1 chunk in 100, returns the top-k legal chunks',
      async (indexType) => {
        const { faiss, reference, queries } = await corpus(indexType, 10_000, 32);
        const filter = { category: 'legal' };
        // Nothing of it can be pushed to FAISS: all of it is the residual, with a warning.
        const resolved = resolveFilter(faiss, filter);
        expect(resolved.native).toBeUndefined();
        expect(resolved.warnings).toHaveLength(1);

        const retriever = new VectorRetriever({ store: faiss });
        const exact = new VectorRetriever({ store: reference });
        let found = 0;
        for (const query of queries) {
          const result = await retriever.retrieve(query, { k: 10, filter });
          const want = (await exact.retrieve(query, { k: 10, filter })).hits.map((hit) => hit.chunk.id);
          expect(result.hits).toHaveLength(10);
          expect(result.hits.every((hit) => hit.chunk.metadata?.category === 'legal')).toBe(true);
          expect(result.warnings.some((warning) => warning.type === 'unsupported')).toBe(true);
          const got = result.hits.map((hit) => hit.chunk.id);
          if (indexType === 'flat') expect(got).toEqual(want);
          found += got.filter((id) => want.includes(id)).length;
        }
        // HNSW is approximate; here the widening search ends on the exact copy, so it is exact too.
        expect(found / (10 * queries.length)).toBeGreaterThanOrEqual(indexType === 'flat' ? 1 : 0.9);
      },
    );

    it.each(['flat', 'hnsw'] as const)(
      '%s: a docId condition is pushed down and the rest evaluated on the sidecar metadata',
      async (indexType) => {
        const { faiss, reference, queries } = await corpus(indexType, 3000, 16);
        const filter = { docId: { $in: ['doc7', 'doc9'] }, tags: 'odd', position: { $gte: 500 } };
        const resolved = resolveFilter(faiss, filter);
        expect(resolved.native).toMatchObject({
          convention: 'faiss',
          filter: { docIdFilter: ['doc7', 'doc9'] },
        });
        const retriever = new VectorRetriever({ store: faiss });
        const exact = new VectorRetriever({ store: reference });
        for (const query of queries) {
          const got = (await retriever.retrieve(query, { k: 8, filter })).hits;
          const want = (await exact.retrieve(query, { k: 8, filter })).hits;
          expect(got).toHaveLength(want.length);
          for (const hit of got) {
            expect(evaluateFilter(parseFilter(filter), hit.chunk)).toBe(true);
          }
          if (indexType === 'flat')
            expect(got.map((hit) => hit.chunk.id)).toEqual(want.map((hit) => hit.chunk.id));
        }
      },
    );

    it('never returns a chunk outside the filter: random filters select exactly what the reference evaluator selects', async () => {
      const random = seededRandom(21);
      await fc.assert(
        fc.asyncProperty(
          fc.array(filterRecordArbitrary(), { minLength: 1, maxLength: 25 }),
          filterNodeArbitrary,
          fc.constantFrom<FaissIndexType>('flat', 'hnsw'),
          async (records, node, indexType) => {
            const chunks: Chunk[] = records.map((record: FilterRecord, index) => {
              const chunk: Chunk = { id: `r${index}`, text: `record ${index}` };
              if (typeof record.docId === 'string') chunk.docId = record.docId;
              if (record.metadata !== undefined) chunk.metadata = record.metadata as Chunk['metadata'];
              return chunk;
            });
            const embeddings = chunks.map(() => Float32Array.from({ length: 4 }, () => random() - 0.5));
            const store = createFaissStore({ indexType, metric: 'l2' });
            const reference = createInMemoryVectorStore({ metric: 'l2' });
            await store.add(chunks, { embeddings });
            await reference.add(chunks, { embeddings });
            const query = Float32Array.from({ length: 4 }, () => random() - 0.5);
            const embedder: Embedder = { dimension: 4, embed: async (texts) => texts.map(() => query) };
            const filter = serializeFilter(node);
            const retriever = new VectorRetriever({ store, embedder });
            const exact = new VectorRetriever({ store: reference, embedder });
            const got = (await retriever.retrieve('q', { k: chunks.length, filter })).hits.map(
              (hit) => hit.chunk.id,
            );
            const want = (await exact.retrieve('q', { k: chunks.length, filter })).hits.map(
              (hit) => hit.chunk.id,
            );
            const selected = chunks.filter((chunk) => evaluateFilter(node, chunk)).map((chunk) => chunk.id);
            // Asking for every chunk, both index types return exactly the matching ones.
            expect([...got].sort()).toEqual([...selected].sort());
            expect(got).toEqual(want);
          },
        ),
        { numRuns: 150, seed: 5 },
      );
    });
  },
);
