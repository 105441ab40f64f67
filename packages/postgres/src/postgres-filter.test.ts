import type { PGlite } from '@electric-sql/pglite';
import {
  type Chunk,
  ChunkValidationError,
  evaluateFilter,
  type FilterNode,
  type FilterRecord,
  type NativeFilter,
  nativeFilter,
  parseFilter,
  resolveFilter,
  serializeFilter,
} from '@zerda/core';
import { filterNodeArbitraryWith, filterRecordArbitrary } from '@zerda/core/testing';
import { seededUnitVectors } from '@zerda/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresFilter, postgresFilterConvention } from './postgres-filter.js';
import { createPostgresStore, type PostgresStore } from './postgres-store.js';
import { createPGlite, freshTable } from './test-utils/databases.js';

const RECORDS = 80;
const FILTERS = 500;

let db: PGlite;
beforeAll(async () => {
  db = await createPGlite();
});
afterAll(async () => {
  await db?.close();
});

const sortedIds = (items: readonly { id: string }[]) => items.map((item) => item.id).sort();

function chunkOf(record: FilterRecord): Chunk {
  const chunk: Chunk = { id: record.id, text: `record ${record.id}` };
  if (record.docId !== undefined) chunk.docId = record.docId;
  if (record.metadata !== undefined) chunk.metadata = { ...record.metadata } as Chunk['metadata'];
  return chunk;
}

describe('postgres convention: translation', () => {
  it('binds every key and value as a parameter and never writes them into the SQL', () => {
    const hostile = "x'; DROP TABLE sentinel; --";
    const node = parseFilter({
      [hostile]: { $in: [hostile, 1, true] },
      $or: [{ [`${hostile}2`]: { $ne: `${hostile}\\` } }, { docId: hostile }, { id: { $gte: 3 } }],
      $not: { 'a"b': { $exists: true } },
    });
    const { sql, params } = postgresFilterConvention.translate(node);
    expect(sql).not.toContain('DROP');
    expect(sql).not.toContain('a"b');
    expect(params).toContain(hostile);
    expect(params).toContain('a"b');
    expect(params).toContain(JSON.stringify([hostile, 1, true]));
    // Placeholders are $1..$n for exactly the params.
    const used = new Set([...sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
    expect([...used].sort((a, b) => a - b)).toEqual(params.map((_, index) => index + 1));
  });

  it('takes the whole language, except text Postgres cannot hold (left client-side)', () => {
    expect(
      postgresFilterConvention.canPushDown(parseFilter({ a: { $nin: ['x'] }, $not: { b: { $gt: 1 } } })),
    ).toBe(true);
    expect(postgresFilterConvention.canPushDown(parseFilter({ a: 'x\0y' }))).toBe(false);
    expect(postgresFilterConvention.canPushDown(parseFilter({ 'a\0': 'x' }))).toBe(false);
    expect(postgresFilterConvention.canPushDown(parseFilter({ a: { $in: ['\ud800'] } }))).toBe(false);
  });

  it('checks hand-written native filters', () => {
    expect(
      postgresFilterConvention.checkNative?.({ sql: "metadata ->> 'a' = $1", params: ['x'] }),
    ).toBeUndefined();
    expect(postgresFilterConvention.checkNative?.({ year: 2020 })).toMatch(/sql: string, params/);
    expect(postgresFilterConvention.checkNative?.({ sql: '', params: [] })).toMatch(/sql: string/);
  });
});

/**
 * Random filters over the whole language against a real Postgres (PGlite): each filter's SQL
 * must select exactly what core's reference evaluator selects. The records mix ints and
 * fractions, booleans, strings, string arrays, missing fields, a docId in either place and
 * records without metadata.
 */
describe.each(['exact', 'hnsw'] as const)(
  'postgres SQL vs the reference evaluator (differential, %s)',
  (index) => {
    let store: PostgresStore;
    const records: FilterRecord[] = fc
      .sample(filterRecordArbitrary(), { numRuns: RECORDS, seed: 7 })
      .map((record, i) => ({ ...record, id: `r${i}` }));
    const [query, ...vectors] = seededUnitVectors(8, RECORDS + 1, 8) as [number[], ...number[][]];

    beforeAll(async () => {
      store = createPostgresStore({ pglite: db, table: freshTable('differential'), dimension: 8, index });
      await store.add(records.map(chunkOf), { embeddings: vectors });
      // Make the planner take the HNSW index even on 80 rows, so the iterative scan is what is tested.
      if (index === 'hnsw') await db.query('SET enable_seqscan = off');
    });
    afterAll(async () => {
      await db.query('RESET enable_seqscan');
    });

    it.skipIf(index !== 'hnsw')('the HNSW store searches through its index', async () => {
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM ${store.driver.table} ORDER BY embedding <=> $1::vector, id LIMIT 5`,
        [`[${query.join(',')}]`],
      );
      expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Index Scan using .*hnsw/);
    });

    it(`selects the same ids for ${FILTERS} random filters, pushed whole to Postgres`, {
      timeout: 240_000,
    }, async () => {
      const nodes = fc.sample(filterNodeArbitraryWith(), { numRuns: FILTERS, seed: 11 });
      const mismatches: string[] = [];
      let nonTrivial = 0;
      for (const node of nodes) {
        const resolved = resolveFilter(store, node);
        expect(resolved.residual).toBeUndefined();
        const expected = sortedIds(records.filter((record) => evaluateFilter(node, record)));
        if (expected.length > 0 && expected.length < RECORDS) nonTrivial++;
        const { hits } = await store.search(query, {
          topK: RECORDS,
          ...(resolved.native ? { nativeFilter: resolved.native as NativeFilter<PostgresFilter> } : {}),
        });
        const got = sortedIds(hits.map((hit) => hit.chunk));
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          mismatches.push(
            `${JSON.stringify(serializeFilter(node))}: expected ${expected.join(',')}, got ${got.join(',')}`,
          );
        }
      }
      expect(mismatches, mismatches.slice(0, 10).join('\n')).toEqual([]);
      expect(nonTrivial).toBeGreaterThan(FILTERS / 2);
    });
  },
);

const hostileText = fc.oneof(
  fc.constantFrom(
    "'",
    '"',
    "'; DROP TABLE sentinel; --",
    '"; DROP TABLE sentinel; --',
    '\\',
    "\\'",
    '$1',
    '$$',
    '?',
    '::jsonb',
    "-> 'a'",
    '%s',
    '😀🇩🇿',
    'é\u0301',
    ' ',
    'x'.repeat(10_000),
    "🙂'".repeat(2_500),
  ),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);
const hostileKey = hostileText.filter((key) => key.length > 0 && !key.startsWith('$'));
const hostileValue = fc.oneof(
  hostileText,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.array(hostileText, { maxLength: 3 }),
);

describe('hostile keys and values', () => {
  let sentinelRows: number;
  beforeAll(async () => {
    await db.query('CREATE TABLE IF NOT EXISTS sentinel (id int PRIMARY KEY, note text)');
    await db.query("INSERT INTO sentinel VALUES (1, 'keep'), (2, 'me') ON CONFLICT DO NOTHING");
    sentinelRows = 2;
  });

  const tables = async () =>
    (
      await db.query<{ name: string }>(
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
      )
    ).rows.map((row) => row.name);

  it('are stored, read and filtered exactly, and nothing else is read or written', {
    timeout: 240_000,
  }, async () => {
    const before = await tables();
    const table = freshTable('hostile');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.record({
            id: hostileText.filter((id) => id.length > 0),
            metadata: fc.dictionary(hostileKey, hostileValue, { maxKeys: 4 }),
          }),
          { minLength: 1, maxLength: 5, selector: (record) => record.id },
        ),
        fc.array(fc.tuple(hostileKey, hostileValue), { minLength: 1, maxLength: 4 }),
        async (records, conditions) => {
          // Records without NUL: a NUL is refused below, on its own.
          const clean = records.filter((record) => !JSON.stringify(record).includes('\\u0000'));
          if (clean.length === 0) return;
          const store = createPostgresStore({
            pglite: db,
            table: `${table}_${run++}`,
            dimension: 2,
            index: 'exact',
          });
          const chunks = clean.map((record) => ({
            id: record.id,
            text: record.id,
            metadata: record.metadata,
          }));
          await store.add(chunks, { embeddings: chunks.map((_, i) => [1, i + 1]) });
          expect(await store.count()).toBe(chunks.length);
          const read = await store.get(chunks.map((chunk) => chunk.id));
          expect(read).toEqual(chunks.map(normalise));
          // Filters on hostile keys with hostile values, through every kind of condition.
          for (const [key, value] of conditions) {
            const scalar = Array.isArray(value) ? (value[0] ?? 'x') : value;
            const filters: FilterNode[] = [
              parseFilter({ [key]: scalar }),
              parseFilter({ [key]: { $ne: scalar } }),
              parseFilter({ [key]: { $in: Array.isArray(value) ? value : [value] } }),
              parseFilter({ [key]: { $exists: true } }),
              parseFilter({
                $or: [
                  { [key]: { $gt: typeof scalar === 'number' ? scalar : 0 } },
                  { [key]: { $nin: [scalar] } },
                ],
              }),
            ];
            for (const node of filters) {
              const expected = sortedIds(chunks.filter((chunk) => evaluateFilter(node, chunk)));
              const { hits } = await store.search([1, 0], { topK: 10, filter: node });
              expect(
                sortedIds(hits.map((hit) => hit.chunk)),
                JSON.stringify(serializeFilter(node)).slice(0, 200),
              ).toEqual(expected);
            }
          }
          expect(await store.delete(chunks.map((chunk) => chunk.id))).toBe(chunks.length);
          expect(await store.count()).toBe(0);
        },
      ),
      { numRuns: 40, seed: 42 },
    );
    // The sentinel table and the list of tables are as they were (plus the stores' own tables).
    const sentinel = await db.query<{ id: number; note: string }>(
      'SELECT id, note FROM sentinel ORDER BY id',
    );
    expect(sentinel.rows).toEqual([
      { id: 1, note: 'keep' },
      { id: 2, note: 'me' },
    ]);
    expect(sentinel.rows).toHaveLength(sentinelRows);
    const after = await tables();
    expect(after.filter((name) => !name.startsWith(table))).toEqual(before);
  });

  it('refuse a NUL (Postgres text cannot hold it) with a ChunkValidationError, writing nothing', async () => {
    const store = createPostgresStore({ pglite: db, table: freshTable('nul'), dimension: 2 });
    await store.add([{ id: 'ok', text: 'fine' }], { embeddings: [[1, 0]] });
    for (const chunk of [
      { id: 'a\0b', text: 't' },
      { id: 'x', text: 'nul \0 inside' },
      { id: 'x', text: 't', docId: '\0' },
      { id: 'x', text: 't', metadata: { 'k\0': 'v' } },
      { id: 'x', text: 't', metadata: { k: ['v', 'w\0'] } },
      { id: 'x', text: 't', metadata: { k: '\ud800' } },
    ]) {
      const error = await store
        .add([{ id: 'fine', text: 'ok' }, chunk], {
          embeddings: [
            [1, 0],
            [0, 1],
          ],
        })
        .catch((e: unknown) => e);
      expect(ChunkValidationError.isInstance(error), String(error)).toBe(true);
      expect((error as ChunkValidationError).problems[0]?.reason).toMatch(/NUL/);
    }
    expect(await store.count()).toBe(1);
    // Reading, deleting and filtering with a NUL are fine: nothing can match it.
    expect(await store.get(['a\0b'])).toEqual([]);
    expect(await store.delete?.(['a\0b'])).toBe(0);
    const { hits, warnings } = await store.search([1, 0], { topK: 5, filter: { k: { $ne: 'x\0' } } });
    expect(hits.map((hit) => hit.chunk.id)).toEqual(['ok']);
    expect(warnings.length).toBeGreaterThan(0);
  });

  it('a hand-written native filter binds its own parameters', async () => {
    const store = createPostgresStore({ pglite: db, table: freshTable('native'), dimension: 2 });
    await store.add(
      [
        { id: 'a', text: 'a', metadata: { "it's": "'; DROP TABLE sentinel; --" } },
        { id: 'b', text: 'b', metadata: { "it's": 'other' } },
      ],
      {
        embeddings: [
          [1, 0],
          [0, 1],
        ],
      },
    );
    const filter = nativeFilter(postgresFilterConvention, {
      sql: 'metadata ->> $1 = $2',
      params: ["it's", "'; DROP TABLE sentinel; --"],
    });
    const { hits } = await store.search([1, 0], { topK: 5, nativeFilter: filter });
    expect(hits.map((hit) => hit.chunk.id)).toEqual(['a']);
    expect((await db.query('SELECT count(*)::int AS n FROM sentinel')).rows).toEqual([{ n: sentinelRows }]);
  });
});

/** What the store gives back for a chunk: floats as JSON round-trips them (-0 becomes 0). */
function normalise(chunk: Chunk): Chunk {
  return JSON.parse(JSON.stringify(chunk)) as Chunk;
}
