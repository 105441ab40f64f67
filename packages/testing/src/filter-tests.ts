import {
  type Chunk,
  type Embedder,
  evaluateFilter,
  FilterError,
  type FilterInput,
  type FilterNode,
  type FilterRecord,
  parseFilter,
  resolveFilter,
  serializeFilter,
  type VectorDatabase,
  VectorRetriever,
  type VectorSearchOptions,
} from '@zerda/core';
import { filterNodeArbitrary, filterRecordArbitrary } from '@zerda/core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addWithVectors, expectTypedError, idsOf, preview, type SuiteContext } from './context.js';
import { seededUnitVectors } from './fixtures.js';
import { viewOf } from './wrap-store.js';

/** An embedder that gives every query the same vector, so a retriever asks the store for it. */
function fixedQueryEmbedder(vector: readonly number[]): Embedder {
  return {
    dimension: vector.length,
    async embed(texts) {
      return texts.map(() => Float32Array.from(vector));
    },
  };
}

function chunkOf(record: FilterRecord): Chunk {
  const chunk: Chunk = { id: record.id, text: `record ${record.id}` };
  if (record.docId !== undefined) chunk.docId = record.docId;
  if (record.metadata !== undefined) chunk.metadata = { ...record.metadata } as Chunk['metadata'];
  return chunk;
}

/** What the reference evaluator selects. */
function reference(node: FilterNode, records: readonly FilterRecord[]): string[] {
  return idsOf(records.filter((record) => evaluateFilter(node, record)));
}

/**
 * Checks one filter over a loaded store two ways: the part the store takes natively (per its
 * convention) through `store.search`, and the whole filter through a VectorRetriever (which
 * evaluates the residual client-side). Returns a description of each disagreement.
 */
async function checkFilter(
  store: VectorDatabase,
  records: readonly FilterRecord[],
  query: readonly number[],
  input: FilterInput,
): Promise<string[]> {
  const problems: string[] = [];
  const node = parseFilter(input);
  const resolved = resolveFilter(store, input);
  if (resolved.pushed !== undefined) {
    const expected = reference(resolved.pushed, records);
    let got: string[];
    try {
      const options: VectorSearchOptions = {
        topK: records.length,
        ...(resolved.native === undefined ? {} : { nativeFilter: resolved.native }),
      };
      got = idsOf((await store.search(query, options)).hits);
    } catch (error) {
      got = [`threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`];
    }
    if (preview(got) !== preview(expected)) {
      problems.push(
        `native ${preview(resolved.native)} (from ${preview(input)}): expected ${preview(expected)}, got ${preview(got)}`,
      );
    }
  }
  const retriever = new VectorRetriever({ store, embedder: fixedQueryEmbedder(query) });
  const expected = reference(node, records);
  let got: string[];
  try {
    got = idsOf((await retriever.retrieve('query', { k: records.length, filter: input })).hits);
  } catch (error) {
    got = [`threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`];
  }
  if (preview(got) !== preview(expected)) {
    problems.push(
      `filter ${preview(input)} through VectorRetriever: expected ${preview(expected)}, got ${preview(got)}`,
    );
  }
  return problems;
}

/** Records covering every operator: missing fields, ints and fractions, booleans, a string where a number is elsewhere. */
function operatorRecords(arrays: boolean): FilterRecord[] {
  const records: FilterRecord[] = [
    { id: 'p1', docId: 'd1', metadata: { genre: 'news', year: 2020, rating: 4.5, draft: false, lang: 'en' } },
    { id: 'p2', docId: 'd1', metadata: { genre: 'blog', year: 2021, rating: 3, draft: true } },
    { id: 'p3', docId: 'd2', metadata: { genre: 'news', year: 2022, rating: 2.5, lang: 'fr' } },
    { id: 'p4', metadata: { docId: 'd3', genre: 'paper', year: 2019, rating: 5, draft: false, lang: 'en' } },
    { id: 'p5', metadata: { year: '2020', rating: 2, genre: 'News' } },
    { id: 'p6' },
    { id: 'p7', docId: 'd2', metadata: { rating: -0.5, year: 2020.5, score: 0 } },
  ];
  if (arrays)
    records.push({ id: 'p8', docId: 'd3', metadata: { tags: ['x', 'y'], genre: 'news', year: 2023 } });
  return records;
}

function operatorFilters(arrays: boolean): FilterInput[] {
  const filters: FilterInput[] = [
    {},
    { genre: 'news' },
    { genre: { $eq: 'news' } },
    { genre: { $ne: 'news' } },
    { year: 2020 },
    { year: { $ne: 2020 } },
    { year: { $gt: 2020 } },
    { year: { $gte: 2020 } },
    { year: { $lt: 2021 } },
    { year: { $lte: 2020 } },
    { year: { $gt: 2020.5 } },
    { year: { $gte: 2020.5 } },
    { year: { $lt: 2020.5 } },
    { year: { $lte: 2020.5 } },
    { rating: 2.5 },
    { rating: { $ne: 2.5 } },
    { rating: { $gt: 2.5 } },
    { rating: { $gte: 2.5 } },
    { rating: { $lt: 3 } },
    { rating: { $lte: 2.5 } },
    { rating: { $gte: -0.5, $lt: 4.5 } },
    { score: 0 },
    { genre: ['news', 'paper'] },
    { genre: { $in: ['blog'] } },
    { genre: { $nin: ['news'] } },
    { genre: { $in: [] } },
    { genre: { $nin: [] } },
    { year: { $in: [2019, 2022] } },
    { year: { $nin: [2020] } },
    { rating: { $in: [2.5, 5, 4.5] } },
    { rating: { $nin: [2.5, 3] } },
    { year: { $in: ['2020', 2021] } },
    { draft: true },
    { draft: false },
    { draft: { $ne: true } },
    { draft: { $in: [true] } },
    { lang: { $exists: true } },
    { lang: { $exists: false } },
    { $and: [{ genre: 'news' }, { year: { $gte: 2021 } }] },
    { genre: 'news', lang: 'en' },
    { $or: [{ genre: 'blog' }, { lang: 'fr' }] },
    { $or: [{ year: { $lt: 2020 } }, { rating: { $gt: 4 } }] },
    { $not: { genre: 'news' } },
    { $not: { year: { $gt: 2020 } } },
    { $not: { $or: [{ genre: 'news' }, { draft: true }] } },
    { docId: 'd1' },
    { docId: { $ne: 'd1' } },
    { docId: { $in: ['d2', 'd3'] } },
    { docId: { $nin: ['d2'] } },
    { docId: { $exists: false } },
    { id: 'p2' },
    { id: { $in: ['p1', 'p4', 'p9'] } },
    { id: { $ne: 'p1' } },
    { $or: [{ $and: [{ genre: 'news' }, { $not: { lang: 'fr' } }] }, { year: { $lt: 2020 } }] },
    { $and: [{ docId: 'd1' }, { $or: [{ draft: true }, { rating: { $gte: 4 } }] }] },
    { $and: [{ genre: { $in: ['news', 'blog'] } }, { id: { $nin: ['p1'] } }, { lang: { $exists: false } }] },
  ];
  if (arrays) {
    filters.push(
      { tags: 'x' },
      { tags: { $ne: 'x' } },
      { tags: { $in: ['y', 'z'] } },
      { tags: { $nin: ['x'] } },
      { tags: { $exists: true } },
    );
  }
  return filters;
}

/** Every operator alone and nested, random filters over random records, the residual path, bad filters. */
export function filterTests(ctx: SuiteContext): void {
  const { capabilities, timeout } = ctx;
  const arrays = capabilities.arrayMetadata;

  describe('filters', () => {
    it('every operator, alone and nested, selects what the reference evaluator selects', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      const records = operatorRecords(arrays);
      const vectors = seededUnitVectors(51, records.length + 1, ctx.dimension);
      await addWithVectors(store, records.map(chunkOf), vectors.slice(1));
      const problems: string[] = [];
      for (const filter of operatorFilters(arrays)) {
        problems.push(...(await checkFilter(store, records, vectors[0]!, filter)));
      }
      expect(problems, problems.join('\n')).toEqual([]);
    });

    it('random filter trees over random records select what the reference evaluator selects (property)', {
      timeout: ctx.propertyTimeout,
    }, async () => {
      const recordList = fc
        .array(filterRecordArbitrary({ arrays, minArrayLength: 1 }), { minLength: 1, maxLength: 10 })
        .map((records) => records.map((record, i): FilterRecord => ({ ...record, id: `r${i + 1}` })));
      const filters = fc.array(filterNodeArbitrary, { minLength: 1, maxLength: 8 });
      const [query, ...vectors] = seededUnitVectors(52, 11, ctx.dimension) as [number[], ...number[][]];
      await fc.assert(
        fc.asyncProperty(recordList, filters, async (records, nodes) => {
          const store = await ctx.open();
          try {
            await addWithVectors(store, records.map(chunkOf), vectors.slice(0, records.length));
            const problems: string[] = [];
            for (const node of nodes) {
              problems.push(...(await checkFilter(store, records, query, serializeFilter(node))));
            }
            if (problems.length > 0) {
              throw new Error(`over records ${preview(records)}:\n${problems.join('\n')}`);
            }
          } finally {
            await ctx.release(store);
          }
        }),
        { numRuns: ctx.propertyRuns, ...(ctx.seed === undefined ? {} : { seed: ctx.seed }) },
      );
    });

    it('honours a filter the store cannot take natively, widening the fetch (residual path)', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      const size = 40;
      const [query, ...vectors] = seededUnitVectors(53, size + 1, ctx.dimension) as [number[], ...number[][]];
      const records: FilterRecord[] = vectors.map((_, i) => ({
        id: `w${i}`,
        metadata: { group: i % 2 === 0 ? 'even' : 'odd', ...(i % 5 === 0 ? { marked: true } : {}) },
      }));
      await addWithVectors(store, records.map(chunkOf), vectors);
      // The three even chunks least like the query: found only by widening past the nearest ones.
      const order = vectors
        .map((vector, i) => ({
          id: `w${i}`,
          i,
          score: vector.reduce((sum, value, j) => sum + value * query[j]!, 0),
        }))
        .filter((entry) => entry.i % 2 === 0)
        .sort((a, b) => a.score - b.score);
      const far = order.slice(0, 3).map((entry) => entry.id);
      const filter: FilterInput = {
        $and: [
          { group: 'even' },
          { id: { $in: far } },
          { $or: [{ marked: { $exists: true } }, { group: 'even' }] },
        ],
      };
      // Through the store's own convention, and with no convention at all (everything client-side).
      const bare = viewOf(store, { keepConvention: false });
      for (const target of [store, bare]) {
        const retriever = new VectorRetriever({ store: target, embedder: fixedQueryEmbedder(query) });
        const result = await retriever.retrieve('query', { k: 3, filter });
        expect(idsOf(result.hits), `through ${target.name}`).toEqual([...far].sort());
        const residual = resolveFilter(target, filter).residual !== undefined;
        expect(result.warnings.some((warning) => warning.type === 'unsupported')).toBe(residual);
      }
      expect(resolveFilter(bare, filter).residual).toBeDefined();
    });

    it('refuses an unknown operator or a wrong value type with a FilterError before calling the store', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      const vectors = seededUnitVectors(54, 3, ctx.dimension);
      await addWithVectors(
        store,
        [
          { id: 'a', text: 'a', metadata: { n: 1 } },
          { id: 'b', text: 'b', metadata: { n: 2 } },
        ],
        vectors.slice(1),
      );
      let calls = 0;
      const counted = viewOf(store, { keepConvention: true, onCall: () => calls++ });
      const retriever = new VectorRetriever({ store: counted, embedder: fixedQueryEmbedder(vectors[0]!) });
      const bad: unknown[] = [
        { n: { $regex: '1' } },
        { $nor: [{ n: 1 }] },
        { n: { $gt: 'one' } },
        { n: { $in: 'not a list' } },
        { n: null },
      ];
      for (const filter of bad) {
        await expectTypedError(
          () => retriever.retrieve('query', { k: 2, filter: filter as FilterInput }),
          FilterError,
          `filter ${preview(filter)}`,
        );
      }
      expect(calls).toBe(0);
    });
  });
}
