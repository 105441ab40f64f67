import type { PGlite } from '@electric-sql/pglite';
import { InvalidArgumentError } from '@zerda/core';
import { testVectorDatabase } from '@zerda/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from './postgres-store.js';
import { createPGlite, freshTable } from './test-utils/databases.js';

// One in-process PGlite (a real Postgres with pgvector) for the whole file; every store gets a
// fresh table, so it starts empty.
let db: PGlite;
beforeAll(async () => {
  db = await createPGlite();
});
afterAll(async () => {
  await db?.close();
});

for (const index of ['hnsw', 'exact'] as const) {
  testVectorDatabase<PostgresStore>({
    name: `postgres (PGlite, ${index})`,
    create: ({ dimension, metric, embedder, sparse }) =>
      createPostgresStore({
        pglite: db,
        table: freshTable(),
        dimension,
        metric,
        embedder,
        index,
        sparse,
        // Small, so that the batching is exercised.
        maxBatchSize: 50,
      }),
    destroy: async (store) => {
      await db.query(`DROP TABLE IF EXISTS ${store.driver.table}`);
    },
    capabilities: {
      metrics: ['cosine', 'l2', 'dot'],
      deletion: true,
      arrayMetadata: true,
      // Ranked by Postgres; hybrid queries are fused in Zerda.
      sparse: { hybrid: false },
    },
  });
}

describe('postgres store', () => {
  it('refuses bad settings with InvalidArgumentError', () => {
    const bad = [
      {},
      { pglite: db, query: async () => ({ rows: [] }) },
      { pglite: db, metric: 'hamming' as never },
      { pglite: db, index: 'ivfflat' as never },
      { pglite: db, hnsw: { m: 0 } },
      { pglite: db, table: '' },
      { pglite: db, maxBatchSize: 1.5 },
    ];
    for (const settings of bad) {
      expect(() => createPostgresStore(settings), JSON.stringify(Object.keys(settings))).toThrow(
        InvalidArgumentError,
      );
    }
  });

  it('declares its capabilities: score conversion per metric, in-memory PGlite not persistent', () => {
    const conversions = { cosine: 'one-minus-distance', dot: 'negated', l2: 'euclidean-distance' } as const;
    for (const metric of ['cosine', 'dot', 'l2'] as const) {
      const store = createPostgresStore({ pglite: db, metric, dimension: 2 });
      expect(store.capabilities).toMatchObject({
        metric,
        scoreConversion: conversions[metric],
        persistent: false,
        maxBatchSize: 500,
      });
      expect(store.capabilities.deletion && store.capabilities.listing).toBe(true);
    }
  });

  it('creates the table in a schema, with the HNSW index and its parameters', async () => {
    await db.query('CREATE SCHEMA IF NOT EXISTS "my schema"');
    const table = freshTable('Mixed"Case');
    const store = createPostgresStore({
      pglite: db,
      schema: 'my schema',
      table,
      dimension: 3,
      hnsw: { m: 8, efConstruction: 32 },
    });
    await store.add([{ id: 'a', text: 'a', docId: 'd', metadata: { k: 'v' } }], { embeddings: [[1, 2, 3]] });
    const { rows } = await db.query<{ indexdef: string }>(
      'SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2',
      ['my schema', table],
    );
    const definitions = rows.map((row) => row.indexdef).join('\n');
    expect(definitions).toMatch(
      /USING hnsw \(embedding vector_cosine_ops\) WITH \(m='?8'?, ef_construction='?32'?\)/,
    );
    const stored = await db.query(
      `SELECT id, text, doc_id, metadata, embedding::text FROM "my schema"."${table.replaceAll('"', '""')}"`,
    );
    expect(stored.rows).toEqual([
      { id: 'a', text: 'a', doc_id: 'd', metadata: { k: 'v' }, embedding: '[1,2,3]' },
    ]);
  });

  it('an exact store makes no index; createTable: false uses a table made by hand', async () => {
    const table = freshTable();
    const exact = createPostgresStore({ pglite: db, table, dimension: 2, index: 'exact' });
    await exact.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 0]] });
    const { rows } = await db.query('SELECT indexname FROM pg_indexes WHERE tablename = $1', [table]);
    expect(rows).toEqual([{ indexname: `${table}_pkey` }]);
    const byHand = createPostgresStore({ pglite: db, table, createTable: false });
    expect(await byHand.get(['a'])).toEqual([{ id: 'a', text: 'a' }]);
    expect(byHand.dimension).toBe(2);
  });

  it('lists every chunk by keyset pages, whatever the ids', async () => {
    const store = createPostgresStore({ pglite: db, table: freshTable(), dimension: 2 });
    const ids = ['b', 'a', 'B', '10', '9', 'ä', '😀', "'", 'z'.repeat(300)];
    await store.add(
      ids.map((id) => ({ id, text: id })),
      { embeddings: ids.map((_, i) => [1, i]) },
    );
    const pages: string[][] = [];
    for await (const page of store.list({ pageSize: 4 })) pages.push(page.map((chunk) => chunk.id));
    expect(pages.map((page) => page.length)).toEqual([4, 4, 1]);
    expect(pages.flat().sort()).toEqual([...ids].sort());
    // listRecords gives each chunk's stored vector too (float32, as added).
    const vectors = new Map<string, number[]>();
    for await (const page of store.listRecords({ pageSize: 4 })) {
      for (const [i, chunk] of page.chunks.entries())
        vectors.set(chunk.id, Array.from(page.vectors?.[i] ?? []));
    }
    expect(ids.map((id) => vectors.get(id))).toEqual(ids.map((_, i) => [1, i]));
  });
});
