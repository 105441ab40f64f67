import { BackendError, type Chunk } from '@zerda/core';
import {
  type DriverCallOptions,
  type DriverListOptions,
  type DriverListPage,
  type DriverMatch,
  type DriverQueryOptions,
  type RecordProblem,
  type SparseVector,
  type VectorDriver,
  type VectorRecord,
  withRetry,
  withTimeout,
} from '@zerda/core/backend';
import { type PostgresFilter, postgresFilterConvention, unstorableText } from './postgres-filter.js';
import {
  type PostgresSession,
  type PostgresStoreSettings,
  type QueryFunction,
  resolveSettings,
} from './postgres-settings.js';
import {
  classify,
  columns,
  createTableSql,
  hnswIndexSql,
  ident,
  idList,
  metrics,
  type Row,
  recordRow,
  type SparseColumns,
  sparseShapeProblem,
  sparsevecText,
  tableShapeSql,
  termIdsText,
  termsIndexSql,
  toChunk,
  upsertSql,
  vectorText,
} from './postgres-sql.js';

type Signal = AbortSignal | undefined;
type Index = 'hnsw' | 'exact';
/** What one ranked query compares: a column, pgvector's operator on it, the query value's type. */
type Ranking = { column: string; operator: string; type: string; index: Index };

const positive = (value: unknown) => (Number(value) > 0 ? Number(value) : undefined);

/**
 * The Postgres + pgvector driver (contract v2) over one table: `id text PRIMARY KEY, text,
 * doc_id, metadata jsonb, embedding vector(d)`, and with sparse vectors `sparse sparsevec(n)`
 * (and their term ids, `terms integer[]` under a GIN index). One statement per call, every value bound.
 */
export class PostgresDriver implements VectorDriver<PostgresFilter> {
  readonly specificationVersion = 'v2' as const;
  readonly name = 'postgres';
  readonly filterConvention = postgresFilterConvention;
  readonly capabilities;
  /** The table as SQL: `"schema"."table"`. */
  readonly table: string;
  dimension: number | undefined;
  declare querySparse?: (
    sparse: SparseVector,
    options: DriverQueryOptions<PostgresFilter>,
  ) => Promise<DriverMatch[]>;

  readonly #session: PostgresSession;
  readonly #settings;
  readonly #dense: Ranking;
  readonly #sparse: (Ranking & SparseColumns) | undefined;
  /** Whether writes fill `terms`: with the prefilter on, or when the table has the column anyway. */
  #writesTerms = false;
  #created: Promise<void> | undefined;
  #exists = false;

  constructor(session: PostgresSession, given: PostgresStoreSettings) {
    const settings = resolveSettings(given);
    const { metric, table, schema, index, sparse, maxBatchSize } = settings;
    this.#session = session;
    this.#settings = settings;
    this.table = schema === undefined ? ident(table) : `${ident(schema)}.${ident(table)}`;
    this.dimension = given.dimension ?? given.embedder?.dimension;
    const { scoreConversion, operator } = metrics[metric];
    this.#dense = { column: 'embedding', operator, type: 'vector', index };
    const capabilities = { metric, scoreConversion, persistent: session.persistent, maxBatchSize };
    if (sparse === undefined) {
      this.capabilities = capabilities;
      return;
    }
    const { dimension, maxNonZero, prefilter } = sparse;
    const ranking = { column: 'sparse', operator: '<#>', type: 'sparsevec', index: sparse.index } as const;
    this.#sparse = { ...ranking, dimension, prefilter };
    this.capabilities = { ...capabilities, sparse: { dimension, maxNonZero, hybrid: false } };
    // The dot product of stored and query weights; pgvector's `<#>` is its negation.
    this.querySparse = async (vector, options) => {
      const terms = prefilter ? termIdsText(vector) : undefined;
      const matches = await this.#rank(ranking, sparsevecText(vector, dimension), options, terms);
      return matches.map((match) => ({ ...match, score: -match.score }));
    };
  }

  /** Learns the table's dimension (refusing another one), and creates the table once a dimension is known. */
  async open({ signal }: DriverCallOptions): Promise<void> {
    const { createTable } = this.#settings;
    if (createTable) await this.#sql('open', signal, 'CREATE EXTENSION IF NOT EXISTS vector');
    const [shape = {}] = await this.#sql('open', signal, tableShapeSql, [this.table]);
    if (shape.found !== true && !createTable) {
      throw this.#error(
        `the table ${this.table} does not exist: create it (see the README) or set createTable: true`,
      );
    }
    const dimension = positive(shape.dimension);
    if (dimension !== undefined && this.dimension !== undefined && dimension !== this.dimension) {
      throw this.#error(
        `the table ${this.table} holds vectors of ${dimension} dimensions, this store was given ${this.dimension}: use dimension ${dimension} (and an embedder of that size), or another table`,
      );
    }
    const sparse = this.#sparse;
    const problem = sparse && sparseShapeProblem(this.table, shape, sparse, this.#settings.table);
    if (problem !== undefined) throw this.#error(problem);
    this.#writesTerms = sparse !== undefined && (sparse.prefilter || shape.has_terms === true);
    this.dimension ??= dimension;
    if (createTable && this.dimension !== undefined) await this.#create(this.dimension, signal);
    this.#exists ||= shape.found === true;
  }

  checkRecords(records: readonly VectorRecord[]): RecordProblem[] {
    const reason = 'contains a NUL character or an unpaired surrogate, which Postgres text cannot hold';
    return records.flatMap((record, index) => {
      const texts = [record.id, record.text, record.docId ?? '', ...Object.keys(record.metadata ?? {})];
      texts.push(...Object.values(record.metadata ?? {}).flatMap((value) => [value].flat().map(String)));
      return texts.some((text) => unstorableText.test(text)) ? [{ index, reason }] : [];
    });
  }

  /** One INSERT ... ON CONFLICT per batch, the whole batch one jsonb parameter (vectors as pgvector's text). */
  async upsert(records: readonly VectorRecord[], { signal }: DriverCallOptions): Promise<void> {
    await this.#create(records[0]?.vector.length ?? 0, signal);
    const [sparse, terms] = [this.#sparse?.dimension, this.#writesTerms];
    const rows = records.map((record) => recordRow(record, sparse, terms));
    await this.#sql('add', signal, upsertSql(this.table, sparse !== undefined, terms), [
      JSON.stringify(rows),
    ]);
  }

  query(vector: Float32Array, options: DriverQueryOptions<PostgresFilter>): Promise<DriverMatch[]> {
    return this.#rank(this.#dense, vectorText(vector), options);
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

  /**
   * Keyset pagination by id: the cursor is the last id of the page before. Dense vectors read as
   * pgvector's text (what re-encoding needs to write the records again with new sparse vectors).
   */
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

  /**
   * Nearest first by pgvector's distance, ties by id; the filter's parameters come first. A sparse
   * ranking leaves out rows without a sparse vector or with a zero dot product; given the query's
   * `terms`, it scores only rows sharing one (the GIN-indexed prefilter). Under HNSW, the
   * transaction sets `hnsw.ef_search` (at least topK) and a strict iterative scan, so a filtered
   * search still finds topK rows where they exist.
   */
  async #rank(ranking: Ranking, value: string, options: DriverQueryOptions<PostgresFilter>, terms?: string) {
    const { topK, filter, signal } = options;
    if (!this.#exists) return [];
    const params: unknown[] = [...(filter?.params ?? []), value, topK];
    const limit = params.length;
    const distance = `${ranking.column} ${ranking.operator} $${limit - 1}::${ranking.type}`;
    const conditions = filter === undefined ? [] : [`(${filter.sql})`];
    if (ranking.type === 'sparsevec') conditions.push(`${distance} <> 0`);
    if (terms !== undefined) conditions.push(`terms && $${params.push(terms)}::integer[]`);
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const sql = `SELECT ${columns}, ${distance} AS score FROM ${this.table} ${where}
      ORDER BY ${distance}, id LIMIT $${limit}`;
    const { transaction } = this.#session;
    const efSearch = String(Math.min(1000, Math.max(this.#settings.efSearch, topK)));
    const set =
      "SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'strict_order', true)";
    const { rows } = await this.#run('search', signal, (query) =>
      ranking.index === 'exact' || transaction === undefined
        ? query(sql, params)
        : transaction(async (inTransaction) => {
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

  /** CREATE TABLE and its HNSW indexes, once, with the first dimension known. */
  #create(dimension: number, signal: Signal): Promise<void> {
    const { table, m, efConstruction } = this.#settings;
    this.#created ??= this.#run('create table', signal, async (query) => {
      const statements = createTableSql(this.table, dimension, this.#sparse);
      for (const sql of this.#exists ? statements.slice(0, 1) : statements) await query(sql, []);
      for (const { column, index, type } of this.#sparse ? [this.#dense, this.#sparse] : [this.#dense]) {
        const opclass = type === 'vector' ? metrics[this.capabilities.metric].opclass : 'sparsevec_ip_ops';
        const name = `${table}_${column}_hnsw`;
        if (index === 'hnsw')
          await query(hnswIndexSql(this.table, name, column, opclass, m, efConstruction), []);
      }
      if (this.#sparse?.prefilter) await query(termsIndexSql(this.table, this.#settings.table), []);
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
