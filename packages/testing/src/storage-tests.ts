import { type Chunk, InvalidArgumentError } from '@zerda/core';
import { describe, expect, it } from 'vitest';
import { addWithVectors, expectTypedError, idsOf, type SuiteContext } from './context.js';
import { comparableChunk, seededUnitVectors } from './fixtures.js';

const SELF_TOLERANCE = 1e-4;

/** The contract's shape, add / search / count / upsert, and deletion. */
export function storageTests(ctx: SuiteContext): void {
  const { capabilities } = ctx;
  const timeout = ctx.timeout;

  describe('contract', () => {
    it('declares version v2, a name, its metric and its capabilities', { timeout }, async () => {
      for (const metric of capabilities.metrics) {
        const store = await ctx.open({ metric });
        expect(store.specificationVersion).toBe('v2');
        expect(store.driver.specificationVersion).toBe('v2');
        expect(typeof store.name).toBe('string');
        expect(store.name.length).toBeGreaterThan(0);
        expect(store.capabilities.metric, `capabilities.metric of a store created for ${metric}`).toBe(
          metric,
        );
        expect([
          'similarity',
          'one-minus-distance',
          'negated',
          'euclidean-distance',
          'squared-euclidean-distance',
        ]).toContain(store.capabilities.scoreConversion);
        expect(store.capabilities.deletion).toBe(capabilities.deletion);
        // An operation the driver lacks does not exist on the store (no method that only throws).
        expect(typeof store.delete === 'function').toBe(capabilities.deletion);
        expect(typeof store.list === 'function').toBe(store.capabilities.listing);
        expect(typeof store.capabilities.persistent).toBe('boolean');
        const maxBatchSize = store.capabilities.maxBatchSize;
        if (maxBatchSize !== undefined)
          expect(Number.isSafeInteger(maxBatchSize) && maxBatchSize > 0).toBe(true);
        const convention = store.filterConvention;
        if (convention !== undefined) {
          expect(typeof convention.name).toBe('string');
          expect(typeof convention.canPushDown).toBe('function');
          expect(typeof convention.translate).toBe('function');
        }
      }
    });

    it('starts empty', { timeout }, async () => {
      const store = await ctx.open();
      expect(await store.count()).toBe(0);
      const [query] = seededUnitVectors(1, 1, ctx.dimension);
      const result = await store.search(query!, { topK: 5 });
      expect(result.hits).toEqual([]);
    });
  });

  describe('add and search', () => {
    it('finds an added chunk first, by its own vector, with a score of 1', { timeout }, async () => {
      const store = await ctx.open();
      const vectors = seededUnitVectors(11, 20, ctx.dimension);
      const chunks = vectors.map((_, i) => ({ id: `c${i}`, text: `chunk ${i}` }));
      await addWithVectors(store, chunks, vectors);
      expect(await store.count()).toBe(20);
      for (const i of [0, 7, 19]) {
        const { hits } = await store.search(vectors[i]!, { topK: 3 });
        expect(hits).toHaveLength(3);
        expect(hits[0]!.chunk.id).toBe(`c${i}`);
        expect(hits[0]!.score).toBeCloseTo(1, 3);
        expect(Math.abs(hits[0]!.score - 1)).toBeLessThan(SELF_TOLERANCE);
      }
    });

    it('returns whole chunks, exactly as added', { timeout }, async () => {
      const store = await ctx.open();
      const chunks: Chunk[] = [
        { id: 'plain', text: 'just text' },
        { id: 'with-doc', text: 'with a document id', docId: 'doc-1' },
        {
          id: 'typed',
          text: 'métadonnées, 元データ, بيانات ✓',
          docId: 'doc-2',
          metadata: {
            title: 'Ünïcödé — title',
            count: 3,
            negative: -7,
            ratio: 0.25,
            precise: 0.1,
            large: 1234567.5,
            zero: 0,
            flag: true,
            off: false,
            empty: '',
          },
        },
        { id: 'docid-in-metadata', text: 'docId in metadata only', metadata: { docId: 'doc-3', lang: 'en' } },
        { id: 'docid-twice', text: 'docId in both places', docId: 'doc-4', metadata: { docId: 'doc-5' } },
        { id: 'empty-metadata', text: '', metadata: {} },
        { id: 'an id / with: symbols?', text: 'odd id', metadata: { n: 1 } },
      ];
      if (capabilities.arrayMetadata) {
        chunks.push({ id: 'arrays', text: 'tags', metadata: { tags: ['a', 'b'], one: ['x'] } });
      }
      const vectors = seededUnitVectors(12, chunks.length, ctx.dimension);
      await addWithVectors(store, chunks, vectors);
      for (const [index, chunk] of chunks.entries()) {
        const { hits } = await store.search(vectors[index]!, { topK: 1 });
        expect(hits, `search by the vector of '${chunk.id}'`).toHaveLength(1);
        expect(comparableChunk(hits[0]!.chunk), `chunk '${chunk.id}' as returned`).toEqual(
          comparableChunk(chunk),
        );
      }
    });

    it('reports ids in input order and counts right', { timeout }, async () => {
      const store = await ctx.open();
      const vectors = seededUnitVectors(13, 6, ctx.dimension);
      const ids = ['z', 'a', 'm', 'b', 'y', 'c'];
      const result = await store.add(
        ids.map((id) => ({ id, text: id })),
        { embeddings: vectors },
      );
      expect(result.ids).toEqual(ids);
      expect(await store.count()).toBe(6);
      expect(await store.add([])).toEqual(expect.objectContaining({ ids: [] }));
      expect(await store.count()).toBe(6);
    });

    it('replaces a re-added id (upsert): text, vector and metadata, no duplicate', { timeout }, async () => {
      const store = await ctx.open();
      const [v0, v1, v2, v3] = seededUnitVectors(14, 4, ctx.dimension) as [
        number[],
        number[],
        number[],
        number[],
      ];
      await addWithVectors(
        store,
        [
          { id: 'a', text: 'first', docId: 'd1', metadata: { keep: 1, drop: 'x' } },
          { id: 'b', text: 'other', metadata: { keep: 5 } },
        ],
        [v0, v2],
      );
      // A batch that replaces one id and adds another.
      const replacement: Chunk = { id: 'a', text: 'second', metadata: { keep: 2, added: true } };
      await addWithVectors(store, [replacement, { id: 'c', text: 'new' }], [v1, v3]);
      expect(await store.count()).toBe(3);
      const { hits } = await store.search(v1, { topK: 10 });
      expect(hits.map((hit) => hit.chunk.id).sort()).toEqual(['a', 'b', 'c']);
      const a = hits.find((hit) => hit.chunk.id === 'a')!;
      expect(hits[0]!.chunk.id).toBe('a');
      expect(a.score).toBeCloseTo(1, 3);
      expect(comparableChunk(a.chunk)).toEqual(replacement);
      // The old vector no longer finds it first.
      const old = await store.search(v0, { topK: 3 });
      const oldA = old.hits.find((hit) => hit.chunk.id === 'a');
      expect(oldA === undefined || oldA.score < 1 - 1e-3).toBe(true);
    });

    it('accepts Float32Array and number[] embeddings', { timeout }, async () => {
      const store = await ctx.open();
      const vectors = seededUnitVectors(15, 2, ctx.dimension);
      await store.add(
        [
          { id: 'typed', text: 'typed array' },
          { id: 'plain', text: 'plain array' },
        ],
        { embeddings: [Float32Array.from(vectors[0]!), vectors[1]!] },
      );
      const typed = await store.search(Float32Array.from(vectors[0]!), { topK: 1 });
      expect(typed.hits[0]!.chunk.id).toBe('typed');
      const plain = await store.search(vectors[1]!, { topK: 1 });
      expect(plain.hits[0]!.chunk.id).toBe('plain');
    });

    it("writes a batch larger than the store's maxBatchSize whole, reporting progress", {
      timeout,
    }, async () => {
      const store = await ctx.open();
      const size = Math.min((store.capabilities.maxBatchSize ?? 100) * 2 + 1, 20_001);
      const vectors = seededUnitVectors(16, size, ctx.dimension);
      const chunks = vectors.map((_, i) => ({ id: `b${i}`, text: `batch ${i}`, metadata: { i } }));
      const progress: Array<{ written: number; total: number }> = [];
      await store.add(chunks, { embeddings: vectors, onProgress: (step) => progress.push({ ...step }) });
      expect(await store.count()).toBe(size);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.every((step) => step.total === size)).toBe(true);
      for (let i = 1; i < progress.length; i++) {
        expect(progress[i]!.written).toBeGreaterThanOrEqual(progress[i - 1]!.written);
      }
      expect(progress.at(-1)!.written).toBe(size);
      const { hits } = await store.search(vectors[size - 1]!, { topK: 1 });
      expect(hits[0]!.chunk.id).toBe(`b${size - 1}`);
    });
  });

  describe('delete', () => {
    it.skipIf(!capabilities.deletion)(
      'removes chunks, returns how many existed, ignores unknown ids',
      { timeout },
      async () => {
        const store = await ctx.open();
        const vectors = seededUnitVectors(17, 5, ctx.dimension);
        const chunks = vectors.map((_, i) => ({ id: `c${i}`, text: `chunk ${i}`, metadata: { i } }));
        await addWithVectors(store, chunks, vectors);
        expect(await store.delete!(['c1', 'c3', 'missing'])).toBe(2);
        expect(await store.count()).toBe(3);
        const { hits } = await store.search(vectors[1]!, { topK: 10 });
        expect(idsOf(hits)).toEqual(['c0', 'c2', 'c4']);
        expect(await store.delete!([])).toBe(0);
        expect(await store.delete!(['c1'])).toBe(0);
        // A deleted id can be added again.
        await addWithVectors(store, [chunks[1]!], [vectors[1]!]);
        expect(await store.count()).toBe(4);
        const again = await store.search(vectors[1]!, { topK: 1 });
        expect(comparableChunk(again.hits[0]!.chunk)).toEqual(chunks[1]);
      },
    );
  });

  describe('get and list', () => {
    it('gets stored chunks by id, exactly as added, in the order asked, leaving out unknown ids', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      const vectors = seededUnitVectors(18, 4, ctx.dimension);
      const chunks = vectors.map((_, i) => ({
        id: `g${i}`,
        text: `chunk ${i}`,
        docId: `d${i % 2}`,
        metadata: { i },
      }));
      await addWithVectors(store, chunks, vectors);
      const got = await store.get(['g3', 'missing', 'g0', 'g3']);
      expect(got.map(comparableChunk)).toEqual([chunks[3], chunks[0]]);
      expect(await store.get([])).toEqual([]);
      await expectTypedError(() => store.get('g1' as never), InvalidArgumentError, 'get with a string');
    });

    it('lists every stored chunk once, a page at a time (where the store can list)', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      if (store.list === undefined) {
        expect(store.capabilities.listing).toBe(false);
        return;
      }
      const size = 23;
      const vectors = seededUnitVectors(19, size, ctx.dimension);
      const chunks = vectors.map((_, i) => ({ id: `l${String(i).padStart(2, '0')}`, text: `chunk ${i}` }));
      await addWithVectors(store, chunks, vectors);
      const pages: number[] = [];
      const seen: string[] = [];
      for await (const page of store.list({ pageSize: 5 })) {
        pages.push(page.length);
        seen.push(...page.map((chunk) => chunk.id));
      }
      expect([...seen].sort()).toEqual(chunks.map((chunk) => chunk.id));
      expect(pages.every((length) => length <= 5)).toBe(true);
    });
  });
}
