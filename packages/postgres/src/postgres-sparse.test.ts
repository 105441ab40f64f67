import type { PGlite } from '@electric-sql/pglite';
import {
  BackendError,
  ChunkValidationError,
  InvalidArgumentError,
  nativeFilter,
  type SparseVector,
} from '@zerda/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresFilterConvention } from './postgres-filter.js';
import type { PostgresSparseSettings } from './postgres-settings.js';
import { createPostgresStore } from './postgres-store.js';
import { createPGlite, freshTable } from './test-utils/databases.js';

let db: PGlite;
beforeAll(async () => {
  db = await createPGlite();
});
afterAll(async () => {
  await db?.close();
});

/** A sparse vector from `{ index: value }` (0-based indices, as Zerda's). */
function sparse(entries: Record<number, number>): SparseVector {
  const sorted = Object.entries(entries)
    .map(([index, value]) => [Number(index), value] as const)
    .sort((a, b) => a[0] - b[0]);
  return {
    indices: Uint32Array.from(sorted.map(([index]) => index)),
    values: Float32Array.from(sorted.map(([, value]) => value)),
  };
}

function sparseStore(options: PostgresSparseSettings = {}, table = freshTable()) {
  return createPostgresStore({ pglite: db, table, dimension: 2, index: 'exact', sparse: options });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

async function termsColumn(table: string): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = 'terms') AS found",
    [table],
  );
  return rows[0]?.found === true;
}

async function termsIndexes(table: string): Promise<string[]> {
  const { rows } = await db.query<{ indexname: string }>(
    "SELECT indexname FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%USING gin (terms)'",
    [table],
  );
  return rows.map((row) => row.indexname);
}

const chunks = [
  { id: 'a', text: 'owl owl', metadata: { year: 2019, tags: ['bird'] } },
  { id: 'b', text: 'owl cat', metadata: { year: 2021 } },
  { id: 'c', text: 'cat', metadata: { year: 2022 } },
  { id: 'd', text: 'dog', metadata: { year: 2023 } },
];
const embeddings = chunks.map((_, i) => [1, i]);
// Term ids: 0 owl, 7 cat, 999 dog (0 is the first dimension: pgvector's index 1).
const sparseVectors = [sparse({ 0: 2 }), sparse({ 0: 1, 7: 1 }), sparse({ 7: 1.5 }), sparse({ 999: 3 })];

describe('postgres sparse vectors', () => {
  it('declares them only when asked: dimension, the non-zero limit of the chosen index, no hybrid', () => {
    expect(createPostgresStore({ pglite: db, dimension: 2 }).capabilities.sparse).toBeUndefined();
    expect(createPostgresStore({ pglite: db, sparse: false }).capabilities.sparse).toBeUndefined();
    expect(createPostgresStore({ pglite: db, sparse: true }).capabilities.sparse).toEqual({
      dimension: 1_000_000_000,
      maxNonZero: 16_000,
      hybrid: false,
    });
    expect(sparseStore({ dimension: 5000, index: 'hnsw' }).capabilities.sparse).toEqual({
      dimension: 5000,
      maxNonZero: 1000,
      hybrid: false,
    });
    expect(createPostgresStore({ pglite: db }).searchSparse).toBeUndefined();
  });

  it('refuses bad sparse settings with InvalidArgumentError', () => {
    const bad = [
      { dimension: 0 },
      { dimension: 1.5 },
      { dimension: 1_000_000_001 },
      { index: 'ivfflat' as never },
      { prefilter: 'yes' as never },
      'yes' as never,
      null as never,
    ];
    for (const options of bad) {
      expect(() => createPostgresStore({ pglite: db, sparse: options }), JSON.stringify(options)).toThrow(
        InvalidArgumentError,
      );
    }
  });

  it('writes sparse vectors with the dense ones (pgvector indices 1-based) and ranks by dot product', async () => {
    const store = sparseStore({ dimension: 1000 });
    await store.add(chunks, { embeddings, sparseVectors });
    const { rows } = await db.query<{ id: string; sparse: string }>(
      `SELECT id, sparse::text AS sparse FROM ${store.driver.table} ORDER BY id`,
    );
    expect(rows.map((row) => row.sparse)).toEqual([
      '{1:2}/1000',
      '{1:1,8:1}/1000',
      '{8:1.5}/1000',
      '{1000:3}/1000',
    ]);

    // owl (weight 1) and cat (weight 2): b = 1 + 2, c = 3, a = 2; d shares no term (a zero dot product).
    const { hits } = await store.searchSparse(sparse({ 0: 1, 7: 2 }), { topK: 10 });
    expect(hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
      ['b', 3],
      ['c', 3],
      ['a', 2],
    ]);
    expect(hits[2]?.chunk).toEqual(chunks[0]);
    const top = await store.searchSparse(sparse({ 0: 1, 7: 2 }), { topK: 1 });
    expect(top.hits.map((hit) => hit.chunk.id)).toEqual(['b']);
    // Negative weights are dot products too: only zero is left out.
    const negative = await store.searchSparse(sparse({ 999: -1 }), { topK: 10 });
    expect(negative.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([['d', -3]]);
    expect((await store.searchSparse(sparse({ 500: 1 }), { topK: 10 })).hits).toEqual([]);
  });

  it('pushes filters down: Zerda filters, native filters, scoreThreshold', async () => {
    const store = sparseStore();
    await store.add(chunks, { embeddings, sparseVectors });
    const query = sparse({ 0: 1, 7: 2 });
    const recent = await store.searchSparse(query, { topK: 10, filter: { year: { $gte: 2021 } } });
    expect(recent.hits.map((hit) => hit.chunk.id)).toEqual(['b', 'c']);
    expect(recent.warnings).toEqual([]);
    const birds = await store.searchSparse(query, { topK: 10, filter: { tags: 'bird' } });
    expect(birds.hits.map((hit) => hit.chunk.id)).toEqual(['a']);
    const negated = await store.searchSparse(query, { topK: 10, filter: { year: { $ne: 2021 } } });
    expect(negated.hits.map((hit) => hit.chunk.id)).toEqual(['c', 'a']);
    const native = nativeFilter(postgresFilterConvention, { sql: 'id <> $1', params: ['b'] });
    const byHand = await store.searchSparse(query, { topK: 10, nativeFilter: native });
    expect(byHand.hits.map((hit) => hit.chunk.id)).toEqual(['c', 'a']);
    const above = await store.searchSparse(query, { topK: 10, scoreThreshold: 2.5 });
    expect(above.hits.map((hit) => hit.chunk.id)).toEqual(['b', 'c']);
  });

  it('leaves out chunks written without sparse vectors, and deleted ones', async () => {
    const store = sparseStore();
    await store.add(chunks, { embeddings, sparseVectors });
    // Replaced whole: written again without a sparse vector, 'a' has none.
    await store.add([chunks[0]], { embeddings: [[1, 0]] });
    expect(await store.delete(['c'])).toBe(1);
    const { hits } = await store.searchSparse(sparse({ 0: 1, 7: 2 }), { topK: 10 });
    expect(hits.map((hit) => hit.chunk.id)).toEqual(['b']);
    // Dense search still sees every chunk left.
    expect((await store.search([1, 0], { topK: 10 })).hits).toHaveLength(3);
  });

  it('an HNSW index on the sparse column (sparsevec_ip_ops) ranks through the index', async () => {
    const table = freshTable();
    const store = createPostgresStore({
      pglite: db,
      table,
      dimension: 2,
      sparse: { index: 'hnsw', dimension: 1000 },
      hnsw: { m: 8, efConstruction: 32 },
    });
    await store.add(chunks, { embeddings, sparseVectors });
    const { rows } = await db.query<{ indexdef: string }>(
      'SELECT indexdef FROM pg_indexes WHERE tablename = $1',
      [table],
    );
    const definitions = rows.map((row) => row.indexdef).join('\n');
    expect(definitions).toMatch(
      /USING hnsw \(sparse sparsevec_ip_ops\) WITH \(m='?8'?, ef_construction='?32'?\)/,
    );
    expect(definitions).toMatch(/USING hnsw \(embedding vector_cosine_ops\)/);
    const { hits } = await store.searchSparse(sparse({ 0: 1, 7: 2 }), {
      topK: 2,
      filter: { year: { $lte: 2021 } },
    });
    expect(hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
      ['b', 3],
      ['a', 2],
    ]);
    // Over the HNSW limit: refused for the chunk by core before anything is written.
    const wide = sparse(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [i, 1])));
    const refused = await failure(
      store.add([{ id: 'wide', text: 'x' }], { embeddings: [[1, 1]], sparseVectors: [wide] }),
    );
    expect(ChunkValidationError.isInstance(refused)).toBe(true);
    expect(String((refused as Error).message)).toMatch(/wide.*1001 non-zero entries.*limit of 1000/);
    expect(await store.count()).toBe(4);
  });

  it('hostile sparse input: refused by core before writing, and as a BackendError by the driver', async () => {
    const store = sparseStore({ dimension: 1000 });
    await store.add(chunks, { embeddings, sparseVectors });
    const hostile: SparseVector[] = [
      sparse({ 1: Number.NaN }),
      sparse({ 1: Number.POSITIVE_INFINITY }),
      sparse({ 1: Number.NEGATIVE_INFINITY }),
      sparse({ 1000: 1 }),
      { indices: Uint32Array.of(3, 2), values: Float32Array.of(1, 1) },
      { indices: Uint32Array.of(2, 2), values: Float32Array.of(1, 1) },
      { indices: Uint32Array.of(2), values: Float32Array.of(1, 1) },
      { indices: [2] as never, values: [1] as never },
    ];
    for (const vector of hostile) {
      const chunk = { id: 'x', text: 'x' };
      const error = await failure(
        store.add([chunk, chunks[1]], {
          embeddings: [
            [1, 1],
            [1, 2],
          ],
          sparseVectors: [vector, sparseVectors[1] as SparseVector],
        }),
      );
      expect(ChunkValidationError.isInstance(error), String(error)).toBe(true);
      expect((error as ChunkValidationError).problems.map((problem) => problem.id)).toEqual(['x']);
      const query = await failure(store.searchSparse(vector, { topK: 3 }));
      expect(InvalidArgumentError.isInstance(query), String(query)).toBe(true);
    }
    expect(await store.count()).toBe(4);
    // Past core (a driver called directly): Postgres's own refusal, as a BackendError saying what to do.
    const record = { id: 'x', text: 'x', vector: Float32Array.of(1, 1) };
    for (const [vector, reason] of [
      [sparse({ 1: Number.NaN }), /NaN not allowed in sparsevec.*finite values/],
      [sparse({ 1: Number.POSITIVE_INFINITY }), /infinite value not allowed in sparsevec.*finite values/],
      [sparse({ 1000: 1 }), /index out of bounds.*below the sparse column's dimension/],
    ] as const) {
      const error = await failure(store.driver.upsert([{ ...record, sparse: vector }], {}));
      expect(BackendError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(reason);
    }
    expect(await store.count()).toBe(4);
  });

  it('Postgres refusing a vector over the HNSW limit is a BackendError that says what to do', async () => {
    const store = sparseStore({ index: 'hnsw' });
    await store.add([chunks[0]], { embeddings: [[1, 0]], sparseVectors: [sparseVectors[0] as SparseVector] });
    const wide = sparse(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [i * 3, 0.5])));
    const record = { id: 'wide', text: 'x', vector: Float32Array.of(1, 1), sparse: wide };
    const error = await failure(store.driver.upsert([record], {}));
    expect(BackendError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /more than 1000 non-zero elements.*split the chunk into smaller ones/,
    );
    expect(await store.count()).toBe(1);
  });

  it('an existing table without a sparse column is a BackendError naming the ALTER TABLE; after it, it works', async () => {
    const table = freshTable();
    const dense = createPostgresStore({ pglite: db, table, dimension: 2, index: 'exact' });
    await dense.add(chunks, { embeddings });
    const store = sparseStore({ dimension: 1000, prefilter: true }, table);
    const error = await failure(store.add(chunks, { embeddings, sparseVectors }));
    expect(BackendError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toMatch(
      new RegExp(
        `no column for sparse vectors: add it with ALTER TABLE "${table}" ADD COLUMN sparse sparsevec\\(1000\\), ADD COLUMN terms integer\\[\\]; CREATE INDEX IF NOT EXISTS "${table}_terms_gin" ON "${table}" USING gin \\(terms\\); then write`,
      ),
    );
    // The statements exactly as the message gives them.
    await db.exec(message.slice(message.indexOf('ALTER TABLE'), message.indexOf(' then write')));
    await store.add(chunks, { embeddings, sparseVectors });
    const { hits } = await store.searchSparse(sparse({ 999: 1 }), { topK: 10 });
    expect(hits.map((hit) => hit.chunk.id)).toEqual(['d']);
    // Another dimension than the column's is refused too.
    const other = sparseStore({ dimension: 2000 }, table);
    expect((await failure(other.count())) as Error).toMatchObject({
      message: expect.stringMatching(
        /sparse vectors of dimension 1000, this store was given 2000: use sparse: \{ dimension: 1000 \}/,
      ),
    });
  });

  it('an existing sparse table without the term ids column: the statements the BackendError gives fill it from the sparse column', async () => {
    const table = freshTable();
    const unfiltered = sparseStore({ dimension: 1000, prefilter: false }, table);
    await unfiltered.add(chunks, { embeddings, sparseVectors });
    expect(await termsColumn(table)).toBe(false);
    const query = sparse({ 0: 1, 7: 2, 999: 0.5 });
    const before = (await unfiltered.searchSparse(query, { topK: 10 })).hits;
    expect(before.map((hit) => [hit.chunk.id, hit.score])).toEqual([
      ['b', 3],
      ['c', 3],
      ['a', 2],
      ['d', 1.5],
    ]);
    const store = sparseStore({ dimension: 1000, prefilter: true }, table);
    const error = await failure(store.count());
    expect(BackendError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toMatch(
      /no column of their term ids for the prefilter: add it, fill it and index it with ALTER TABLE/,
    );
    expect(message).toMatch(/or set sparse: \{ prefilter: false \}/);
    await db.exec(message.slice(message.indexOf('ALTER TABLE'), message.indexOf('; or set')));
    const { rows } = await db.query<{ id: string; terms: number[] }>(
      `SELECT id, terms FROM "${table}" ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: 'a', terms: [0] },
      { id: 'b', terms: [0, 7] },
      { id: 'c', terms: [7] },
      { id: 'd', terms: [999] },
    ]);
    expect((await store.searchSparse(query, { topK: 10 })).hits).toEqual(before);
    expect(await termsIndexes(table)).toEqual([`${table}_terms_gin`]);
  });

  it('prefilter: false creates no term ids column, and keeps one a table already has written', async () => {
    const plain = sparseStore({ prefilter: false });
    await plain.add(chunks, { embeddings, sparseVectors });
    const table = plain.driver.table.slice(1, -1);
    expect([await termsColumn(table), await termsIndexes(table)]).toEqual([false, []]);
    expect(
      (await plain.searchSparse(sparse({ 7: 1 }), { topK: 10 })).hits.map((hit) => hit.chunk.id),
    ).toEqual(['c', 'b']);

    const filtered = sparseStore({ prefilter: true });
    const other = filtered.driver.table.slice(1, -1);
    await filtered.add(chunks.slice(0, 2), {
      embeddings: embeddings.slice(0, 2),
      sparseVectors: sparseVectors.slice(0, 2),
    });
    // Written through a store without the prefilter, a chunk still gets its term ids.
    const unfiltered = sparseStore({ prefilter: false }, other);
    await unfiltered.add([chunks[3]], {
      embeddings: [[1, 3]],
      sparseVectors: [sparseVectors[3] as SparseVector],
    });
    expect(
      (await filtered.searchSparse(sparse({ 999: 1 }), { topK: 10 })).hits.map((hit) => hit.chunk.id),
    ).toEqual(['d']);
  });

  it("the prefilter is the GIN index: the driver's own statement plans a bitmap scan of it", async () => {
    const table = freshTable();
    const statements: { sql: string; params: unknown[] }[] = [];
    const store = createPostgresStore({
      query: (sql, params) => {
        statements.push({ sql, params });
        return db.query(sql, params);
      },
      table,
      dimension: 2,
      index: 'exact',
      sparse: { dimension: 1000, prefilter: true },
    });
    // 5,000 chunks over 500 rare terms (each in 10 rows) and 7 frequent ones.
    const many = Array.from({ length: 5000 }, (_, i) => ({ id: `c${i}`, text: 'x'.repeat(300) }));
    const vectors = many.map((_, i) => sparse({ [i % 500]: 1 + i / 10_000, [500 + (i % 7)]: 0.5 }));
    await store.add(many, { embeddings: many.map(() => [1, 0]), sparseVectors: vectors });
    await db.query(`ANALYZE "${table}"`);
    statements.length = 0;
    const { hits } = await store.searchSparse(sparse({ 3: 2 }), { topK: 5 });
    expect(hits.map((hit) => hit.chunk.id)).toEqual(['c4503', 'c4003', 'c3503', 'c3003', 'c2503']);
    const [statement] = statements;
    expect(statement?.params.at(-1)).toBe('{3}');
    const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement?.sql}`, statement?.params);
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toMatch(new RegExp(`Bitmap Index Scan on "?${table}_terms_gin"?`));
  });

  it('listRecords gives the dense vectors to write chunks again with new sparse vectors (re-encoding)', async () => {
    const store = sparseStore();
    await store.add(chunks, { embeddings, sparseVectors });
    const records: { chunks: unknown[]; vectors: Float32Array[] } = { chunks: [], vectors: [] };
    for await (const page of store.listRecords({ pageSize: 3 })) {
      records.chunks.push(...page.chunks);
      records.vectors.push(...(page.vectors ?? []));
    }
    expect(records.vectors.map((vector) => Array.from(vector))).toEqual(embeddings);
    const reencoded = records.chunks.map(() => sparse({ 42: 1 }));
    await store.add(records.chunks, { embeddings: records.vectors, sparseVectors: reencoded });
    const { hits } = await store.searchSparse(sparse({ 42: 2 }), { topK: 10 });
    expect(hits.map((hit) => [hit.chunk.id, hit.score])).toEqual(chunks.map((chunk) => [chunk.id, 2]));
    expect((await store.searchSparse(sparse({ 0: 1 }), { topK: 10 })).hits).toEqual([]);
    expect(await store.get(['a'])).toEqual([chunks[0]]);
  });
});
