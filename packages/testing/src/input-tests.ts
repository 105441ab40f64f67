import {
  AbortedError,
  BackendError,
  type Chunk,
  ChunkValidationError,
  InvalidArgumentError,
  type Metadata,
  type VectorDatabase,
} from '@zerda/core';
import { describe, expect, it } from 'vitest';
import { addWithVectors, expectTypedError, idsOf, type SuiteContext } from './context.js';
import { comparableChunk, conformanceEmbedder, recordingEmbedder, seededUnitVectors } from './fixtures.js';

/** The store's embedder; bad input; aborted calls; an unreachable server. */
export function inputTests(ctx: SuiteContext): void {
  const { capabilities, timeout } = ctx;

  describe('embeddings', () => {
    it.skipIf(!capabilities.embedder)(
      "computes embeddings with the store's embedder when none are passed, and embeds text queries",
      { timeout },
      async () => {
        const embedder = recordingEmbedder(conformanceEmbedder(64));
        const store = await ctx.open({ dimension: 64, embedder });
        const chunks: Chunk[] = [
          { id: 'solar', text: 'solar panels turn sunlight into electricity' },
          { id: 'river', text: 'the river floods the valley every spring' },
          { id: 'court', text: 'the court ruled on the contract dispute' },
        ];
        await store.add(chunks);
        expect(embedder.texts).toEqual(expect.arrayContaining(chunks.map((chunk) => chunk.text)));
        expect(await store.count()).toBe(3);
        const { hits } = await store.search('the river floods the valley every spring', { topK: 3 });
        expect(hits).toHaveLength(3);
        expect(hits[0]!.chunk.id).toBe('river');
        expect(hits[0]!.score).toBeCloseTo(1, 3);
        expect(comparableChunk(hits[0]!.chunk)).toEqual(chunks[1]);
      },
    );

    it.skipIf(!capabilities.embedder)(
      'uses embeddings passed in rather than its embedder',
      { timeout },
      async () => {
        const embedder = conformanceEmbedder(64);
        const store = await ctx.open({ dimension: 64, embedder });
        const [oranges] = await embedder.embed(['oranges and lemons']);
        await store.add([{ id: 'x', text: 'apples' }], { embeddings: [oranges!] });
        await store.add([{ id: 'y', text: 'oranges and lemons' }], {
          embeddings: [(await embedder.embed(['apples']))[0]!],
        });
        const { hits } = await store.search('oranges and lemons', { topK: 2 });
        expect(hits[0]!.chunk.id).toBe('x');
        expect(hits[0]!.score).toBeCloseTo(1, 3);
      },
    );

    it('without an embedder, adding without embeddings and text queries are InvalidArgumentErrors', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      await expectTypedError(
        () => store.add([{ id: 'a', text: 'no vector' }]),
        InvalidArgumentError,
        'add without embeddings or embedder',
      );
      expect(await store.count()).toBe(0);
      await expectTypedError(
        () => store.search('a text query', { topK: 1 }),
        InvalidArgumentError,
        'text search without embedder',
      );
    });
  });

  describe('bad input', () => {
    /** Adds two chunks, then checks that a refused call left exactly them, unchanged. */
    async function seeded(store: VectorDatabase) {
      const vectors = seededUnitVectors(31, 4, ctx.dimension);
      const existing: Chunk[] = [
        { id: 'kept-1', text: 'kept one', metadata: { n: 1 } },
        { id: 'kept-2', text: 'kept two', metadata: { n: 2 } },
      ];
      await addWithVectors(store, existing, vectors.slice(0, 2));
      return {
        vectors,
        async expectUnchanged(what: string) {
          expect(await store.count(), `count after ${what}`).toBe(2);
          const { hits } = await store.search(vectors[0]!, { topK: 10 });
          expect(idsOf(hits), `ids after ${what}`).toEqual(['kept-1', 'kept-2']);
          expect(
            hits.map((hit) => comparableChunk(hit.chunk)).sort((a, b) => a.id.localeCompare(b.id)),
          ).toEqual(existing);
        },
      };
    }

    it('refuses a whole batch holding one vector of the wrong dimension or with NaN / Infinity', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      const { vectors, expectUnchanged } = await seeded(store);
      const good = vectors[2]!;
      const bad: Array<[string, number[]]> = [
        ['too short', good.slice(1)],
        ['too long', [...good, 0.5]],
        ['empty', []],
        ['NaN', good.map((value, i) => (i === 3 ? Number.NaN : value))],
        ['Infinity', good.map((value, i) => (i === 0 ? Number.POSITIVE_INFINITY : value))],
        ['-Infinity', good.map((value, i) => (i === 5 ? Number.NEGATIVE_INFINITY : value))],
      ];
      for (const [label, vector] of bad) {
        const error = await expectTypedError(
          () =>
            store.add(
              [
                { id: 'new-1', text: 'new' },
                { id: 'kept-1', text: 'replaced?', metadata: { n: 100 } },
                { id: 'bad', text: label },
                { id: 'new-2', text: 'new' },
              ],
              { embeddings: [good, vectors[3]!, vector, vectors[3]!] },
            ),
          ChunkValidationError,
          `a batch with a ${label} vector`,
        );
        expect(error.problems.some((problem) => problem.index === 2 || problem.id === 'bad')).toBe(true);
        await expectUnchanged(`a batch with a ${label} vector`);
      }
    });

    it('refuses a batch whose embeddings do not match its chunks one to one', { timeout }, async () => {
      const store = await ctx.open();
      const { vectors, expectUnchanged } = await seeded(store);
      await expectTypedError(
        () =>
          store.add(
            [
              { id: 'n1', text: 'a' },
              { id: 'n2', text: 'b' },
            ],
            { embeddings: [vectors[2]!] },
          ),
        InvalidArgumentError,
        'two chunks, one vector',
      );
      await expectUnchanged('two chunks, one vector');
    });

    it('refuses a batch holding an invalid chunk, writing nothing', { timeout }, async () => {
      const store = await ctx.open();
      const { vectors, expectUnchanged } = await seeded(store);
      const invalid: Array<[string, unknown]> = [
        ['a duplicate id', { id: 'n1', text: 'again' }],
        ['no id', { text: 'no id' }],
        ['an empty id', { id: '', text: 'empty id' }],
        ['no text', { id: 'n3' }],
        ['a null metadata value', { id: 'n3', text: 't', metadata: { a: null } }],
        ['a nested metadata object', { id: 'n3', text: 't', metadata: { a: { b: 1 } } }],
        ['a NaN metadata value', { id: 'n3', text: 't', metadata: { a: Number.NaN } }],
        ['a number array', { id: 'n3', text: 't', metadata: { a: [1, 2] } }],
        ['a non-string docId', { id: 'n3', text: 't', docId: 7 }],
      ];
      for (const [label, chunk] of invalid) {
        await expectTypedError(
          () =>
            store.add([{ id: 'n1', text: 'fine' }, chunk as Chunk], {
              embeddings: [vectors[2]!, vectors[3]!],
            }),
          ChunkValidationError,
          `a batch with ${label}`,
        );
        await expectUnchanged(`a batch with ${label}`);
      }
    });

    it.skipIf(capabilities.arrayMetadata)(
      'refuses string-array metadata (not declared), writing nothing',
      { timeout },
      async () => {
        const store = await ctx.open();
        const { vectors, expectUnchanged } = await seeded(store);
        for (const metadata of [{ tags: ['a', 'b'] }, { docId: ['d1', 'd2'] }] as Metadata[]) {
          await expectTypedError(
            () =>
              store.add(
                [
                  { id: 'n1', text: 'fine' },
                  { id: 'n2', text: 'arrays', metadata },
                ],
                { embeddings: [vectors[2]!, vectors[3]!] },
              ),
            ChunkValidationError,
            `a batch with ${JSON.stringify(metadata)}`,
          );
          await expectUnchanged(`a batch with ${JSON.stringify(metadata)}`);
        }
      },
    );

    it('refuses a bad query vector, topK or scoreThreshold with an InvalidArgumentError', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      const { vectors } = await seeded(store);
      const good = vectors[0]!;
      const queries: Array<[string, number[]]> = [
        ['a too-short query', good.slice(1)],
        ['a too-long query', [...good, 1]],
        ['a NaN query', good.map((value, i) => (i === 1 ? Number.NaN : value))],
        ['an Infinity query', good.map((value, i) => (i === 1 ? Number.POSITIVE_INFINITY : value))],
      ];
      for (const [label, query] of queries) {
        await expectTypedError(() => store.search(query, { topK: 1 }), InvalidArgumentError, label);
      }
      for (const topK of [0, -1, 1.5, Number.NaN, undefined]) {
        await expectTypedError(
          () => store.search(good, { topK: topK as number }),
          InvalidArgumentError,
          `topK ${topK}`,
        );
      }
      await expectTypedError(
        () => store.search(good, { topK: 1, scoreThreshold: Number.NaN }),
        InvalidArgumentError,
        'scoreThreshold NaN',
      );
    });

    it('rejects calls with an aborted signal with an AbortedError, writing nothing', {
      timeout,
    }, async () => {
      const store = await ctx.open();
      const { vectors, expectUnchanged } = await seeded(store);
      const controller = new AbortController();
      controller.abort(new Error('stop'));
      const signal = controller.signal;
      await expectTypedError(
        () => store.add([{ id: 'n1', text: 'x' }], { embeddings: [vectors[2]!], signal }),
        AbortedError,
        'add with an aborted signal',
      );
      await expectTypedError(
        () => store.search(vectors[0]!, { topK: 1, signal }),
        AbortedError,
        'search with an aborted signal',
      );
      await expectUnchanged('add with an aborted signal');
    });
  });

  describe('unreachable server', () => {
    const bound = capabilities.unreachableTimeoutMs;
    it.skipIf(capabilities.unreachable === undefined)(
      `search, add and count fail with a BackendError keeping the cause, within ${bound} ms`,
      { timeout: Math.max(timeout, 3 * bound + 5_000) },
      async () => {
        const store = await capabilities.unreachable!({ dimension: ctx.dimension, metric: ctx.metric });
        try {
          const [vector] = seededUnitVectors(41, 1, ctx.dimension) as [number[]];
          const calls: Array<[string, () => Promise<unknown>]> = [
            ['search', () => store.search(vector, { topK: 3 })],
            ['add', () => store.add([{ id: 'a', text: 'a' }], { embeddings: [vector] })],
            ['count', () => store.count()],
          ];
          for (const [operation, call] of calls) {
            const started = performance.now();
            const error = await expectTypedError(call, BackendError, `${operation} on an unreachable server`);
            const elapsed = performance.now() - started;
            expect(elapsed, `${operation} took ${Math.round(elapsed)} ms`).toBeLessThan(bound);
            expect(error.cause, `${operation}: the BackendError keeps the cause`).toBeDefined();
            expect(error.backend.length).toBeGreaterThan(0);
            expect(error.message.length).toBeGreaterThan(0);
          }
        } finally {
          await store.close?.();
        }
      },
    );
  });
}
