import { BackendError, type Chunk, InvalidArgumentError } from '@zerda/core';
import {
  checkPositiveIntegers,
  type DriverCallOptions,
  type DriverListOptions,
  type DriverListPage,
  type DriverMatch,
  type DriverQueryOptions,
  type RecordProblem,
  type RetryFailure,
  resolveRetrySettings,
  type VectorDriver,
  type VectorRecord,
  withRetry,
  withTimeout,
} from '@zerda/core/backend';
import { type PostgresFilter, postgresFilterConvention, unstorableText } from './postgres-filter.js';
import type { PostgresStoreSettings } from './postgres-store.js';

/** Runs one statement with bound parameters: what `pg` and PGlite both offer as `query`. */
export type QueryFunction = (sql: string, params: unknown[]) => Promise<{ rows: readonly unknown[] }>;

/** How the driver reaches the database: statements, and where it can, transactions on one connection. */
export interface PostgresSession {
  readonly query: QueryFunction;
  readonly transaction?: <T>(work: (query: QueryFunction) => Promise<T>) => Promise<T>;
  readonly persistent: boolean;
}

type Row = { readonly [column: string]: unknown };
type Signal = AbortSignal | undefined;

/** pgvector's distance operator, its HNSW operator class, and what its value means, per metric. */
const metrics = {
  cosine: { operator: '<=>', opclass: 'vector_cosine_ops', scoreConversion: 'one-minus-distance' },
  dot: { operator: '<#>', opclass: 'vector_ip_ops', scoreConversion: 'negated' },
  l2: { operator: '<->', opclass: 'vector_l2_ops', scoreConversion: 'euclidean-distance' },
} as const;

/** SQLSTATE classes and Node error codes after which trying again may succeed. */
const transient = /^(08|53|57P0|40001|40P01|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE)/;
const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
const columns = 'id, text, doc_id, metadata';
/** The dimension of an existing table's vector column (its type modifier). */
const dimensionSql =
  "SELECT atttypmod AS dimension FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'embedding'";
/** The ids in the jsonb array parameter $1. */
const idList = 'SELECT jsonb_array_elements_text($1::jsonb)';

function toChunk(row: Row): Chunk {
  const chunk: Chunk = { id: row.id as string, text: row.text as string };
  if (typeof row.doc_id === 'string') chunk.docId = row.doc_id;
  // pg and PGlite parse jsonb; a bare query function may hand back its text.
  const metadata = typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata;
  if (metadata !== null && metadata !== undefined) chunk.metadata = metadata;
  return chunk;
}

/**
 * The Postgres + pgvector driver (contract v2) over one table: `id text PRIMARY KEY, text,
 * doc_id, metadata jsonb, embedding vector(d)`. One statement per call, every value bound.
 */
export class PostgresDriver implements VectorDriver<PostgresFilter> {
  readonly specificationVersion = 'v2' as const;
  readonly name = 'postgres';
  readonly filterConvention = postgresFilterConvention;
  readonly capabilities;
  /** The table as SQL: `"schema"."table"`. */
  readonly table: string;
  dimension: number | undefined;

  readonly #session: PostgresSession;
  readonly #settings;
  #created: Promise<void> | undefined;
  #exists = false;

  constructor(session: PostgresSession, settings: PostgresStoreSettings) {
    const { metric = 'cosine', table = 'zerda_chunks', schema, index = 'hnsw', hnsw = {} } = settings;
    const { maxBatchSize = 500, timeoutMs = 30_000, createTable = true } = settings;
    const { m = 16, efConstruction = 64, efSearch = 40 } = hnsw;
    const refuse = (argument: string, value: unknown, message: string) => {
      throw new InvalidArgumentError({ argument, value, message });
    };
    if (!Object.hasOwn(metrics, metric)) refuse('metric', metric, "expected 'cosine', 'dot' or 'l2'");
    if (index !== 'hnsw' && index !== 'exact') refuse('index', index, "expected 'hnsw' or 'exact'");
    for (const [argument, name] of Object.entries({ table, schema })) {
      if (name !== undefined && !/^[^\0]+$/.test(name)) refuse(argument, name, 'expected a name without NUL');
    }
    checkPositiveIntegers({ maxBatchSize, timeoutMs });
    checkPositiveIntegers({ 'hnsw.m': m, 'hnsw.efConstruction': efConstruction, 'hnsw.efSearch': efSearch });
    const retry = resolveRetrySettings(settings.retry);
    this.#session = session;
    this.#settings = { metric, table, index, m, efConstruction, efSearch, createTable, timeoutMs, retry };
    this.table = schema === undefined ? ident(table) : `${ident(schema)}.${ident(table)}`;
    this.dimension = settings.dimension ?? settings.embedder?.dimension;
    const { scoreConversion } = metrics[metric];
    this.capabilities = { metric, scoreConversion, persistent: session.persistent, maxBatchSize };
  }

  /** Learns the table's dimension (refusing another one), and creates the table once a dimension is known. */
  async open({ signal }: DriverCallOptions): Promise<void> {
    const { createTable } = this.#settings;
    if (createTable) await this.#sql('open', signal, 'CREATE EXTENSION IF NOT EXISTS vector');
    const [found] = await this.#sql('open', signal, dimensionSql, [this.table]);
    if (found === undefined && !createTable) {
      throw this.#error(
        `the table ${this.table} does not exist: create it (see the README) or set createTable: true`,
      );
    }
    const dimension = Number(found?.dimension) > 0 ? Number(found?.dimension) : undefined;
    if (dimension !== undefined && this.dimension !== undefined && dimension !== this.dimension) {
      throw this.#error(
        `the table ${this.table} holds vectors of ${dimension} dimensions, this store was given ${this.dimension}: use dimension ${dimension} (and an embedder of that size), or another table`,
      );
    }
    this.dimension ??= dimension;
    if (createTable && this.dimension !== undefined) await this.#create(this.dimension, signal);
    this.#exists ||= found !== undefined;
  }

  checkRecords(records: readonly VectorRecord[]): RecordProblem[] {
    const reason = 'contains a NUL character or an unpaired surrogate, which Postgres text cannot hold';
    return records.flatMap((record, index) => {
      const texts = [record.id, record.text, record.docId ?? '', ...Object.keys(record.metadata ?? {})];
      texts.push(...Object.values(record.metadata ?? {}).flatMap((value) => [value].flat().map(String)));
      return texts.some((text) => unstorableText.test(text)) ? [{ index, reason }] : [];
    });
  }

  /** One INSERT ... ON CONFLICT per batch, the whole batch one jsonb parameter. */
  async upsert(records: readonly VectorRecord[], { signal }: DriverCallOptions): Promise<void> {
    await this.#create(records[0]?.vector.length ?? 0, signal);
    const rows = records.map(({ id, text, docId, metadata, vector }) => ({
      ...{ id, text, doc_id: docId ?? null, metadata: metadata ?? null },
      embedding: `[${vector.join(',')}]`,
    }));
    const sql = `INSERT INTO ${this.table} (${columns}, embedding)
      SELECT r.id, r.text, r.doc_id, r.metadata, r.embedding::vector FROM jsonb_to_recordset($1::jsonb)
        AS r(id text, text text, doc_id text, metadata jsonb, embedding text)
      ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, doc_id = EXCLUDED.doc_id,
        metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding`;
    await this.#sql('add', signal, sql, [JSON.stringify(rows)]);
  }

  /**
   * Nearest first by pgvector's distance; the filter's parameters come first. Under HNSW, the
   * transaction sets `hnsw.ef_search` (at least topK) and a strict iterative scan, so a filtered
   * search still finds topK rows where they exist.
   */
  async query(vector: Float32Array, options: DriverQueryOptions<PostgresFilter>): Promise<DriverMatch[]> {
    const { topK, filter, signal } = options;
    if (!this.#exists) return [];
    const params = [...(filter?.params ?? []), `[${vector.join(',')}]`, topK];
    const distance = `embedding ${metrics[this.#settings.metric].operator} $${params.length - 1}::vector`;
    const where = filter === undefined ? '' : `WHERE (${filter.sql})`;
    const sql = `SELECT ${columns}, ${distance} AS score FROM ${this.table} ${where}
      ORDER BY ${distance}, id LIMIT $${params.length}`;
    const { transaction } = this.#session;
    const efSearch = String(Math.min(1000, Math.max(this.#settings.efSearch, topK)));
    const { rows } = await this.#run('search', signal, (query) =>
      this.#settings.index === 'exact' || transaction === undefined
        ? query(sql, params)
        : transaction(async (inTransaction) => {
            const set =
              "SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'strict_order', true)";
            await inTransaction(set, [efSearch]);
            return inTransaction(sql, params);
          }),
    );
    return (rows as Row[]).map((row) => ({
      id: String(row.id),
      score: Number(row.score),
      chunk: toChunk(row),
    }));
  }

  async get(ids: readonly string[], { signal }: DriverCallOptions): Promise<Chunk[]> {
    const storable = ids.filter((id) => !unstorableText.test(id));
    if (storable.length === 0 || !this.#exists) return [];
    const sql = `SELECT ${columns} FROM ${this.table} WHERE id IN (${idList})`;
    return (await this.#sql('get', signal, sql, [JSON.stringify(storable)])).map(toChunk);
  }

  async count({ signal }: DriverCallOptions): Promise<number> {
    if (!this.#exists) return 0;
    const [row] = await this.#sql('count', signal, `SELECT count(*) AS count FROM ${this.table}`);
    return Number(row?.count);
  }

  async delete(ids: readonly string[], { signal }: DriverCallOptions): Promise<number> {
    const storable = ids.filter((id) => !unstorableText.test(id));
    if (storable.length === 0 || !this.#exists) return 0;
    const sql = `WITH removed AS (DELETE FROM ${this.table} WHERE id IN (${idList}) RETURNING 1)
      SELECT count(*) AS count FROM removed`;
    const [row] = await this.#sql('delete', signal, sql, [JSON.stringify(storable)]);
    return Number(row?.count);
  }

  /** Keyset pagination by id: the cursor is the last id of the page before. Vectors read as pgvector's text. */
  async list({ cursor, limit, includeVectors, signal }: DriverListOptions): Promise<DriverListPage> {
    if (!this.#exists) return { chunks: [] };
    const selected = includeVectors ? `${columns}, embedding::text AS embedding` : columns;
    const sql = `SELECT ${selected} FROM ${this.table} WHERE id > $1 ORDER BY id LIMIT $2`;
    const rows = await this.#sql('list', signal, sql, [cursor ?? '', limit]);
    const chunks = rows.map(toChunk);
    const vectors = includeVectors
      ? rows.map((row) => Float32Array.from(JSON.parse(String(row.embedding))))
      : undefined;
    return { chunks, vectors, nextCursor: chunks.length < limit ? undefined : chunks.at(-1)?.id };
  }

  /** CREATE TABLE and its HNSW index, once, with the first dimension known. */
  #create(dimension: number, signal: Signal): Promise<void> {
    const { metric, index, table, m, efConstruction } = this.#settings;
    this.#created ??= this.#run('create table', signal, async (query) => {
      const vector = `vector(${dimension}) NOT NULL`;
      const create = `CREATE TABLE IF NOT EXISTS ${this.table} (id text PRIMARY KEY, text text NOT NULL, doc_id text, metadata jsonb, embedding ${vector})`;
      await query(create, []);
      const hnsw = `CREATE INDEX IF NOT EXISTS ${ident(`${table}_embedding_hnsw`)} ON ${this.table} USING hnsw
        (embedding ${metrics[metric].opclass}) WITH (m = ${m}, ef_construction = ${efConstruction})`;
      if (index === 'hnsw') await query(hnsw, []);
      this.dimension = dimension;
      this.#exists = true;
    }).catch((error: unknown) => {
      this.#created = undefined;
      throw error;
    });
    return this.#created;
  }

  /** One call: retried while that may help, the whole bounded by `timeoutMs` and the caller's signal. */
  #run<T>(operation: string, signal: Signal, work: (query: QueryFunction) => Promise<T>): Promise<T> {
    const { timeoutMs, retry } = this.#settings;
    const bounds = { timeoutMs, signal, backend: 'postgres', operation, where: 'the Postgres server' };
    const retries = { backend: 'postgres', operation, retry, deadline: Date.now() + timeoutMs, classify };
    return withTimeout(
      (bounded) => withRetry(() => work(this.#session.query), { ...retries, signal: bounded }),
      bounds,
    );
  }

  async #sql(operation: string, signal: Signal, sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.#run(operation, signal, (query) => query(sql, params))).rows as Row[];
  }

  #error(message: string): BackendError {
    return new BackendError({ backend: 'postgres', operation: 'open', message });
  }
}

/** What went wrong, and what to do about it. */
function classify(error: unknown): RetryFailure {
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
  const owner = ': grant the role access, or create the table as its owner and set createTable: false';
  const older =
    ": HNSW searches need pgvector 0.8 or newer (hnsw.iterative_scan): upgrade it, or use index: 'exact'";
  const hint = code === '42501' ? owner : /iterative_scan/.test(message) ? older : '';
  return { retryable, reason: `${message}${code === '' ? '' : ` (${code})`}${hint}` };
}
