import { PGlite } from '@electric-sql/pglite';
import { BackendError } from '@zerda/core';
import { testVectorDatabase } from '@zerda/testing';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { PostgresStoreSettings } from './postgres-settings.js';
import { createPostgresStore, type PostgresStore } from './postgres-store.js';
import { freePort, freshTable } from './test-utils/databases.js';

// One pool for every store, as an application shares it (one connection: PGlite is one session).
const pool = new pg.Pool({ connectionString: inject('postgresUrl'), max: 1 });
afterAll(async () => {
  await pool.end();
});

// The conformance suite through the real pg client, over Postgres's wire protocol.
testVectorDatabase<PostgresStore>({
  name: 'postgres (pg client over the wire)',
  create: ({ dimension, metric, embedder, sparse }) =>
    createPostgresStore({
      pool,
      table: freshTable(),
      dimension,
      metric,
      embedder,
      sparse,
      maxBatchSize: 50,
      timeoutMs: 10_000,
    }),
  destroy: async (store) => {
    await pool.query(`DROP TABLE IF EXISTS ${store.driver.table}`);
  },
  capabilities: {
    metrics: ['cosine', 'l2', 'dot'],
    deletion: true,
    arrayMetadata: true,
    sparse: { hybrid: false },
    // Nothing listens on the port: connection refused, retried once, within the timeout.
    unreachable: async ({ dimension, metric }) =>
      createPostgresStore({
        pool: new pg.Pool({ host: '127.0.0.1', port: await freePort(), max: 1 }),
        dimension,
        metric,
        timeoutMs: 2_000,
        retry: { maxRetries: 1 },
      }),
    unreachableTimeoutMs: 3_000,
  },
});

async function failure(promise: Promise<unknown>): Promise<BackendError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(BackendError.isInstance(error), `expected a BackendError, got ${String(error)}`).toBe(true);
  return error as BackendError;
}

describe('postgres connections', () => {
  async function scenario(
    kind: string,
    connection: Pick<PostgresStoreSettings, 'pool' | 'client' | 'query'>,
  ) {
    const store = createPostgresStore({ ...connection, table: freshTable(kind), dimension: 2 });
    await store.add(
      [
        { id: 'a', text: 'a', metadata: { n: 1 } },
        { id: 'b', text: 'b', metadata: { n: 2 } },
        { id: 'c', text: 'c', docId: 'd' },
      ],
      {
        embeddings: [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
      },
    );
    // Concurrent calls: a single client takes them one at a time (its HNSW searches run in transactions).
    const results = await Promise.all([
      store.search([1, 0], { topK: 2 }),
      store.search([1, 0], { topK: 5, filter: { n: { $gte: 2 } } }),
      store.count(),
      store.search([0, 1], { topK: 5, filter: { docId: 'd' } }),
    ]);
    expect(
      results[0].hits.map((hit) => hit.chunk.id),
      kind,
    ).toEqual(['a', 'c']);
    expect(
      results[1].hits.map((hit) => hit.chunk.id),
      kind,
    ).toEqual(['b']);
    expect(results[2], kind).toBe(3);
    expect(
      results[3].hits.map((hit) => hit.chunk.id),
      kind,
    ).toEqual(['c']);
    expect(await store.delete(['a', 'b', 'zz']), kind).toBe(2);
  }

  it('takes a pool, one client, or a bare query function alike', async () => {
    // The pool's one connection, lent: a pg Client.
    const client = await pool.connect();
    try {
      await scenario('client', { client });
    } finally {
      client.release();
    }
    await scenario('query', { query: (sql, params) => pool.query(sql, params) });
    await scenario('pool', { pool });
  });
});

describe('postgres errors say what to do', () => {
  it('connection refused: a BackendError with the cause, within the timeout', async () => {
    const unreachable = new pg.Pool({ host: '127.0.0.1', port: await freePort(), max: 1 });
    const store = createPostgresStore({
      pool: unreachable,
      dimension: 3,
      timeoutMs: 3_000,
      retry: { maxRetries: 1 },
    });
    const started = Date.now();
    const error = await failure(store.count());
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.message).toMatch(
      /could not reach the Postgres server \(ECONNREFUSED\).*check that it is running/,
    );
    expect((error.cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(error.retryable).toBe(true);
    await unreachable.end();
  });

  // A second PGlite starts here: seconds, or tens of seconds on a busy machine.
  it('a database without pgvector: install the extension', { timeout: 180_000 }, async () => {
    const bare = await PGlite.create();
    try {
      const store = createPostgresStore({ pglite: bare, dimension: 3 });
      const error = await failure(store.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 0, 0]] }));
      expect(error.message).toMatch(/pgvector extension is missing.*CREATE EXTENSION vector/);
      expect(error.cause).toBeInstanceOf(Error);
      expect(error.retryable).toBe(false);
      // Without createTable, the missing type says the same.
      const existing = createPostgresStore({ pglite: bare, dimension: 3, createTable: false });
      expect((await failure(existing.count())).message).toMatch(/does not exist: create it/);
    } finally {
      await bare.close();
    }
  });

  it('a table of another dimension: use that dimension or another table', async () => {
    const table = freshTable();
    const first = createPostgresStore({ pool, table, dimension: 3 });
    await first.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 0, 0]] });
    const other = createPostgresStore({ pool, table, dimension: 4 });
    const error = await failure(other.count());
    expect(error.message).toMatch(/holds vectors of 3 dimensions, this store was given 4: use dimension 3/);
    // A store given no dimension learns the table's.
    const learning = createPostgresStore({ pool, table });
    expect(await learning.count()).toBe(1);
    expect(learning.dimension).toBe(3);
  });
});
