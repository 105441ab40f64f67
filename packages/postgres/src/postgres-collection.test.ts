import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import {
  BM25SparseEncoder,
  type Chunk,
  ChunkValidationError,
  type CollectionStorage,
  createInMemoryVectorStore,
  createMemoryStorage,
  type DatabaseCollection,
  HashEmbedder,
  IndexFormatError,
  InvalidArgumentError,
  openCollection,
  type SearchResult,
} from '@zerda/core';
import { loadBeirFolder } from '@zerda/core/node';
import { recordingEmbedder } from '@zerda/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from './postgres-store.js';
import { createPGlite, freshTable } from './test-utils/databases.js';

const dataRoot = join(dirname(fileURLToPath(import.meta.url)), '../../../datasets');
const embedder = recordingEmbedder(new HashEmbedder({ dimension: 64 }));

let db: PGlite;
let corpus: Chunk[];
let queries: string[];
beforeAll(async () => {
  db = await createPGlite();
  const cisi = await loadBeirFolder(join(dataRoot, 'cisi'));
  corpus = cisi.corpus.slice(0, 400).map((document, i) => ({
    id: document.id,
    text: `${document.title}\n${document.text}`,
    metadata: { part: i % 2 === 0 ? 'even' : 'odd' },
  }));
  queries = cisi.queries.slice(0, 25).map((query) => query.text);
});
afterAll(async () => {
  await db?.close();
});

function sparseStore(table = freshTable('collection'), options: { hnsw?: boolean } = {}) {
  return createPostgresStore({
    pglite: db,
    table,
    embedder,
    index: 'exact',
    sparse: options.hnsw ? { index: 'hnsw' } : true,
  });
}

function openInDatabase(storage: CollectionStorage, table: string): Promise<DatabaseCollection> {
  return openCollection({ store: sparseStore(table), storage, keyword: 'database' });
}

/** The in-process collection's keyword results, the reference. */
async function inProcess(chunks: readonly Chunk[]) {
  const collection = await openCollection({ store: createInMemoryVectorStore({ embedder }) });
  await collection.add(chunks);
  return collection;
}

function expectSameRanking(actual: SearchResult, expected: SearchResult, what: string): void {
  expect(
    actual.hits.map((hit) => hit.chunk.id),
    what,
  ).toEqual(expected.hits.map((hit) => hit.chunk.id));
  actual.hits.forEach((hit, i) => {
    expect(
      Math.abs(hit.score - (expected.hits[i]?.score ?? Number.NaN)),
      `${what}: score of ${hit.chunk.id}`,
    ).toBeLessThan(1e-4);
  });
}

/** The statistics a fresh encoder counts from the database's texts. */
async function recounted(collection: DatabaseCollection): Promise<BM25SparseEncoder> {
  const encoder = new BM25SparseEncoder();
  for await (const page of collection.list()) encoder.add(page.map((chunk) => chunk.text));
  return encoder;
}

describe("a collection with its keyword side in Postgres (keyword: 'database')", () => {
  it('ranks keyword queries as the in-process collection does, filters pushed down', async () => {
    const reference = await inProcess(corpus);
    const collection = await openInDatabase(createMemoryStorage(), freshTable('exact'));
    await collection.add(corpus);
    expect(await collection.count()).toBe(corpus.length);
    for (const query of queries) {
      expectSameRanking(
        await collection.retrieve(query, { mode: 'keyword', k: 20 }),
        await reference.retrieve(query, { mode: 'keyword', k: 20 }),
        query.slice(0, 40),
      );
      expectSameRanking(
        await collection.retrieve(query, { mode: 'keyword', k: 10, filter: { part: 'odd' } }),
        await reference.retrieve(query, { mode: 'keyword', k: 10, filter: { part: 'odd' } }),
        `${query.slice(0, 40)} (filtered)`,
      );
    }
    const hybrid = await collection.retrieve(queries[0] as string, { k: 5 });
    expect(hybrid.hits).toHaveLength(5);
    expect(hybrid.hits[0]?.explanation?.method).toMatch(/rrf|weighted/);
    await collection.close();
    await reference.close();
  });

  it('drifts when added in slices, says so, and reencode() restores exact BM25 without re-embedding', async () => {
    const collection = await openInDatabase(createMemoryStorage(), freshTable('drift'));
    for (let start = 0; start < corpus.length; start += 40)
      await collection.add(corpus.slice(start, start + 40));
    const drift = collection.drift;
    expect(drift.drift).toBeGreaterThan(0);
    expect(drift.encodedWith[0]).toBeLessThanOrEqual(drift.encodedWith[1]);
    const embedded = embedder.texts.length;
    const progress: number[] = [];
    const { reencoded, warnings } = await collection.reencode({
      onProgress: ({ done }) => progress.push(done),
    });
    expect(reencoded).toBe(corpus.length);
    expect(warnings, 'Postgres returns the stored vectors').toEqual([]);
    expect(embedder.texts.length, 'nothing embedded again').toBe(embedded);
    expect(progress.at(-1)).toBe(corpus.length);
    expect(collection.drift.drift).toBe(0);
    const reference = await inProcess(corpus);
    for (const query of queries.slice(0, 10)) {
      const result = await collection.retrieve(query, { mode: 'keyword', k: 20 });
      expect(result.warnings.some((w) => w.message.includes('reencode'))).toBe(false);
      expectSameRanking(
        result,
        await reference.retrieve(query, { mode: 'keyword', k: 20 }),
        query.slice(0, 40),
      );
    }
    await collection.close();
    await reference.close();
  });

  it('keeps the statistics equal to the database through replaces and deletes, and across reopening', async () => {
    const storage = createMemoryStorage();
    const table = freshTable('stats');
    const collection = await openInDatabase(storage, table);
    await collection.add(corpus.slice(0, 100));
    await collection.add([{ ...(corpus[3] as Chunk), text: 'a replaced text about library catalogues' }]);
    expect(await collection.delete([corpus[5]?.id as string, corpus[6]?.id as string, 'never-there'])).toBe(
      2,
    );
    expect(await collection.deleteWhere({ part: 'odd' })).toBeGreaterThan(0);
    expect(collection.encoder.save()).toEqual((await recounted(collection)).save());

    // Another writer adds a chunk this collection never counted; replacing it recounts first.
    await sparseStore(table).add([{ id: 'elsewhere', text: 'zyzzyva quokka' }], {
      sparseVectors: new BM25SparseEncoder().addAndEncode(['zyzzyva quokka']),
    });
    await collection.add([{ id: 'elsewhere', text: 'a library catalogue' }]);
    expect(collection.encoder.save()).toEqual((await recounted(collection)).save());
    expect(await collection.delete(['elsewhere'])).toBe(1);
    await collection.close();

    const reopened = await openInDatabase(storage, table);
    expect(reopened.report.rebuilt, 'the local statistics were current').toBe(0);
    expect(reopened.encoder.save()).toEqual((await recounted(reopened)).save());

    // Another writer changes the database: the next open counts the statistics again and says so.
    await reopened.close();
    const other = sparseStore(table);
    await other.add([{ id: 'from-elsewhere', text: 'another writer' }], {
      sparseVectors: new BM25SparseEncoder().addAndEncode(['another writer']),
    });
    const caughtUp = await openInDatabase(storage, table);
    expect(caughtUp.report.rebuilt).toBe(await caughtUp.count());
    expect(caughtUp.report.warnings.some((w) => w.message.includes('another writer'))).toBe(true);
    expect(caughtUp.encoder.save()).toEqual((await recounted(caughtUp)).save());
    await caughtUp.close();
  });

  it('refuses a chunk whose sparse vector is over the limit before anything is written, statistics unchanged', async () => {
    const collection = await openCollection({
      store: sparseStore(freshTable('limit'), { hnsw: true }),
      keyword: 'database',
    });
    await collection.add(corpus.slice(0, 10));
    const before = collection.encoder.save();
    const huge = Array.from({ length: 1200 }, (_, i) => `term${i}x`).join(' ');
    const error = await collection.add([corpus[20] as Chunk, { id: 'huge', text: huge }]).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(ChunkValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('huge');
    expect((error as Error).message).toContain('in-process');
    expect(await collection.count()).toBe(10);
    expect(collection.encoder.save()).toEqual(before);
    await collection.close();
  });

  it('says clearly what is wrong: a store without sparse vectors, a storage of the other kind', async () => {
    await expect(
      openCollection({
        store: createPostgresStore({ pglite: db, table: freshTable('dense'), embedder }),
        keyword: 'database',
      }),
    ).rejects.toSatisfy(
      (error: unknown) => InvalidArgumentError.isInstance(error) && /sparse/.test(String(error)),
    );

    const storage = createMemoryStorage();
    const memory = await openCollection({ store: createInMemoryVectorStore({ embedder }), storage });
    await memory.add(corpus.slice(0, 3));
    await memory.close();
    await expect(openInDatabase(storage, freshTable('kind'))).rejects.toSatisfy(
      (error: unknown) => IndexFormatError.isInstance(error) && /in-process/.test(String(error)),
    );

    const databaseStorage = createMemoryStorage();
    const table = freshTable('kind');
    await (await openInDatabase(databaseStorage, table)).close();
    await expect(openCollection({ store: sparseStore(table), storage: databaseStorage })).rejects.toSatisfy(
      (error: unknown) => IndexFormatError.isInstance(error) && /in the database/.test(String(error)),
    );
    await expect(
      openCollection({ store: createInMemoryVectorStore({ embedder }), fusion: 'database' }),
    ).rejects.toSatisfy((error: unknown) => InvalidArgumentError.isInstance(error));
  });
});
