import type { Chunk } from '@zerda/core';
import type { RetryFailure, SparseVector, VectorRecord } from '@zerda/core/backend';

// The SQL text the driver sends (every value a bound parameter), and what Postgres's errors mean.

export type Row = { readonly [column: string]: unknown };

/** pgvector's distance operator, its HNSW operator class, and what its value means, per metric. */
export const metrics = {
  cosine: { operator: '<=>', opclass: 'vector_cosine_ops', scoreConversion: 'one-minus-distance' },
  dot: { operator: '<#>', opclass: 'vector_ip_ops', scoreConversion: 'negated' },
  l2: { operator: '<->', opclass: 'vector_l2_ops', scoreConversion: 'euclidean-distance' },
} as const;

/** pgvector's largest `sparsevec` dimension, and the id space of core's BM25SparseEncoder. */
export const maxSparseDimension = 1_000_000_000;
/** Most non-zero entries of one sparsevec: pgvector stores 16,000, its HNSW index takes 1,000. */
export const sparseNonZeroLimit = { exact: 16_000, hnsw: 1_000 } as const;

export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
export const columns = 'id, text, doc_id, metadata';
/** The ids in the jsonb array parameter $1. */
export const idList = 'SELECT jsonb_array_elements_text($1::jsonb)';

/** Whether table $1 exists, and the dimensions (type modifiers) of its vector columns. */
const typmod = (column: string) =>
  `(SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = '${column}' AND NOT attisdropped)`;
export const tableShapeSql = `SELECT to_regclass($1) IS NOT NULL AS found, ${typmod('embedding')} AS dimension, ${typmod('sparse')} AS sparse_dimension, ${typmod('terms')} IS NOT NULL AS has_terms`;

/** The sparse column's settings the SQL depends on. */
export type SparseColumns = { dimension: number; prefilter: boolean };

/**
 * CREATE TABLE, and for a new table with term ids, the sparse vectors kept in the row where they
 * fit (STORAGE MAIN): else the extra column pushes them out to TOAST, and every dot product reads
 * it (2.4 times slower scans measured on PGlite at 10,000 rows).
 */
export function createTableSql(
  table: string,
  dimension: number,
  sparse: SparseColumns | undefined,
): string[] {
  const sparseColumns =
    sparse === undefined
      ? ''
      : `, sparse sparsevec(${sparse.dimension})${sparse.prefilter ? ', terms integer[]' : ''}`;
  const create = `CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, text text NOT NULL, doc_id text, metadata jsonb, embedding vector(${dimension}) NOT NULL${sparseColumns})`;
  const inline = `ALTER TABLE ${table} ALTER COLUMN sparse SET STORAGE MAIN`;
  return sparse?.prefilter ? [create, inline] : [create];
}

/** The GIN index on each row's term ids that the sparse prefilter (`terms && $ids`) reads. */
export const termsIndexSql = (table: string, tableName: string) =>
  `CREATE INDEX IF NOT EXISTS ${ident(`${tableName}_terms_gin`)} ON ${table} USING gin (terms)`;

/** A row's term ids (0-based) from its stored sparse vector, whose text form is `{i:v,...}/n` with i from 1. */
const termsFromSparse = `ARRAY(SELECT m[1]::integer - 1 FROM regexp_matches(sparse::text, '(\\d+):', 'g') AS m)`;

/**
 * Why a sparse store cannot use the existing table `shape` (and the statements that fix it), or
 * undefined when it can.
 */
export function sparseShapeProblem(
  table: string,
  shape: Row,
  { dimension, prefilter }: SparseColumns,
  tableName: string,
): string | undefined {
  const stored = Number(shape.sparse_dimension) > 0 ? Number(shape.sparse_dimension) : undefined;
  const index = termsIndexSql(table, tableName);
  if (shape.found !== true || (stored === dimension && (shape.has_terms === true || !prefilter))) return;
  if (stored === undefined) {
    const terms = prefilter ? `, ADD COLUMN terms integer[]; ${index};` : ',';
    return `the table ${table} has no column for sparse vectors: add it with ALTER TABLE ${table} ADD COLUMN sparse sparsevec(${dimension})${terms} then write every chunk's sparse vector again; or create the store without sparse`;
  }
  if (stored !== dimension) {
    return `the table ${table} holds sparse vectors of dimension ${stored}, this store was given ${dimension}: use sparse: { dimension: ${stored} } (the encoder that wrote them), or another table`;
  }
  return `the table ${table} has sparse vectors but no column of their term ids for the prefilter: add it, fill it and index it with ALTER TABLE ${table} ADD COLUMN terms integer[]; UPDATE ${table} SET terms = ${termsFromSparse} WHERE sparse IS NOT NULL; ${index}; or set sparse: { prefilter: false } (every keyword search then scans the table)`;
}

export function hnswIndexSql(
  table: string,
  name: string,
  column: string,
  opclass: string,
  m: number,
  ef: number,
) {
  return `CREATE INDEX IF NOT EXISTS ${ident(name)} ON ${table} USING hnsw (${column} ${opclass}) WITH (m = ${m}, ef_construction = ${ef})`;
}

/** A record as one row of the upsert's jsonb parameter (`terms`: its sparse vector's ids, a JSON array). */
export function recordRow(record: VectorRecord, sparseDimension: number | undefined, terms: boolean) {
  const { id, text, docId = null, metadata = null, vector, sparse } = record;
  return {
    ...{ id, text, doc_id: docId, metadata, embedding: vectorText(vector) },
    sparse:
      sparseDimension === undefined || sparse === undefined ? null : sparsevecText(sparse, sparseDimension),
    terms: terms && sparse !== undefined ? Array.from(sparse.indices) : null,
  };
}

/** One INSERT ... ON CONFLICT for a batch given as one jsonb array of rows ($1); term ids as JSON arrays. */
export function upsertSql(table: string, sparse: boolean, terms: boolean): string {
  let [column, value, type, update] = sparse
    ? [', sparse', ', r.sparse::sparsevec', ', sparse text', ', sparse = EXCLUDED.sparse']
    : ['', '', '', ''];
  if (terms) {
    [column, value] = [`${column}, terms`, `${value}, r.terms`];
    [type, update] = [`${type}, terms integer[]`, `${update}, terms = EXCLUDED.terms`];
  }
  return `INSERT INTO ${table} (${columns}, embedding${column})
    SELECT r.id, r.text, r.doc_id, r.metadata, r.embedding::vector${value} FROM jsonb_to_recordset($1::jsonb)
      AS r(id text, text text, doc_id text, metadata jsonb, embedding text${type})
    ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, doc_id = EXCLUDED.doc_id,
      metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding${update}`;
}

/** pgvector's text form of a vector: `[1,2,3]`. */
export const vectorText = (vector: Float32Array) => `[${vector.join(',')}]`;

/**
 * pgvector's text form of a sparse vector, `{i:v,...}/dimension`. Its indices start at 1,
 * Zerda's at 0: this is the one place that converts.
 */
export function sparsevecText({ indices, values }: SparseVector, dimension: number): string {
  const entries = new Array<string>(indices.length);
  for (let i = 0; i < indices.length; i++) entries[i] = `${(indices[i] as number) + 1}:${values[i]}`;
  return `{${entries.join(',')}}/${dimension}`;
}

/** A Postgres integer[] literal of a sparse vector's term ids (0-based, as the `terms` column keeps them). */
export const termIdsText = ({ indices }: SparseVector) => `{${indices.join(',')}}`;

export function toChunk(row: Row): Chunk {
  const chunk: Chunk = { id: row.id as string, text: row.text as string };
  if (typeof row.doc_id === 'string') chunk.docId = row.doc_id;
  // pg and PGlite parse jsonb; a bare query function may hand back its text.
  const metadata = typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata;
  if (metadata !== null && metadata !== undefined) chunk.metadata = metadata;
  return chunk;
}

/** SQLSTATE classes and Node error codes after which trying again may succeed. */
const transient = /^(08|53|57P0|40001|40P01|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE)/;

/** What to do after a server error, by what its message says. */
const hints: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /iterative_scan/,
    "HNSW searches need pgvector 0.8 or newer (hnsw.iterative_scan): upgrade it, or use index: 'exact'",
  ],
  [/type "sparsevec" does not exist/, 'sparse vectors need pgvector 0.7 or newer: upgrade it'],
  [
    /non-zero elements/,
    "a chunk's sparse vector has more non-zero entries than pgvector allows (1,000 under an HNSW index, 16,000 stored): split the chunk into smaller ones, use sparse: { index: 'exact' }, or keep this collection's keyword side in-process",
  ],
  [
    /sparsevec|column "sparse" does not exist/,
    'sparse vectors must have finite values and indices below the sparse column\'s dimension (sparse.dimension), and the table a "sparse" column: ALTER TABLE ... ADD COLUMN sparse sparsevec(<dimension>)',
  ],
];

/** What went wrong, and what to do about it. */
export function classify(error: unknown): RetryFailure {
  const { code = '', message = String(error) } = error as { code?: string; message?: string };
  const retryable = transient.test(code) || /Connection terminated|trying to connect/.test(message);
  if (/^E[A-Z]+$/.test(code) || /Connection terminated/.test(message)) {
    const reason = `could not reach the Postgres server (${code || message}): check that it is running and that the pool's host, port or connection string are right`;
    return { retryable, reason };
  }
  if (/extension "vector"|vector\.control|type "vector" does not exist/.test(message)) {
    const reason = `the pgvector extension is missing (${message}): install pgvector on the server and run CREATE EXTENSION vector as a superuser, or with PGlite pass extensions: { vector } from @electric-sql/pglite-pgvector`;
    return { retryable, reason };
  }
  const owner = 'grant the role access, or create the table as its owner and set createTable: false';
  const hint = code === '42501' ? owner : hints.find(([pattern]) => pattern.test(message))?.[1];
  return { retryable, reason: `${message}${code === '' ? '' : ` (${code})`}${hint ? `: ${hint}` : ''}` };
}
