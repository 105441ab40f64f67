import { type DistanceMetric, type Embedder, InvalidArgumentError } from '@zerda/core';
import { checkPositiveIntegers, type RetrySettings, resolveRetrySettings } from '@zerda/core/backend';
import { maxSparseDimension, metrics, sparseNonZeroLimit } from './postgres-sql.js';

/** Runs one statement with bound parameters: what `pg` and PGlite both offer as `query`. */
export type QueryFunction = (sql: string, params: unknown[]) => Promise<{ rows: readonly unknown[] }>;

/** What the store needs of a connection: `query(sql, params)` resolving to `{ rows }`, as pg and PGlite have. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: readonly unknown[] }>;
}

export interface PostgresStoreSettings {
  /** A PGlite database with pgvector: `await PGlite.create({ extensions: { vector } })`. */
  pglite?: Queryable & {
    transaction<T>(work: (transaction: Queryable) => Promise<T>): Promise<T>;
    readonly dataDir?: string | undefined;
  };
  /** A `pg` Pool (the usual choice against a server): `new pg.Pool({ connectionString })`. */
  pool?: Queryable & { connect(): Promise<Queryable & { release(): void }> };
  /** One connected `pg` Client; the store sends its calls one at a time. */
  client?: Queryable;
  /**
   * Any `(sql, params) => Promise<{ rows }>` (another driver, a proxy). With no transactions, HNSW
   * searches use the database's own `hnsw.ef_search` and `hnsw.iterative_scan` settings.
   */
  query?: QueryFunction;
  /** The table (default 'zerda_chunks'); created when missing unless `createTable` is false. */
  table?: string;
  /** The table's schema (default: the connection's search_path). */
  schema?: string;
  /** 'cosine' (default; pgvector `<=>`), 'dot' (`<#>`) or 'l2' (`<->`). */
  metric?: DistanceMetric;
  /** Embeds chunk texts on `add` (when no `embeddings` are given) and query texts on `search`. */
  embedder?: Embedder;
  /** Vector dimension. Default: the embedder's, else the table's, else the first vectors added. */
  dimension?: number;
  /** 'hnsw' (default): an approximate HNSW index; 'exact': no index, each search scans the table. */
  index?: 'hnsw' | 'exact';
  /** HNSW parameters (default m 16, efConstruction 64, efSearch 40; a search uses at least topK, at most 1,000). */
  hnsw?: { m?: number; efConstruction?: number; efSearch?: number };
  /**
   * Keep a sparse (BM25) vector beside each dense one, in a `sparse sparsevec(dimension)` column,
   * for `store.add(chunks, { sparseVectors })` and `store.searchSparse` (default off: the table
   * has no such column). `true` is `{}`.
   */
  sparse?: boolean | PostgresSparseSettings;
  /** Run CREATE EXTENSION vector, and create the table and index when missing (default true). */
  createTable?: boolean;
  /** Longest wait for one call, retries included, in ms (default 30,000). */
  timeoutMs?: number;
  /** Most records per INSERT statement (default 500). */
  maxBatchSize?: number;
  /** Retries of connection errors and transient server errors (default 5, backoff from 250 ms), within `timeoutMs`. */
  retry?: RetrySettings;
  /** Refuse any `filter` the store cannot push down whole (FilterError); Postgres takes the whole language. */
  strictFilters?: boolean;
}

export interface PostgresSparseSettings {
  /**
   * The `sparsevec` column's dimension: the encoder's `dimension` (default 1,000,000,000, the id
   * space of `BM25SparseEncoder` and pgvector's largest).
   */
  dimension?: number;
  /**
   * 'exact' (default): no index, a keyword search scans the table, up to 16,000 non-zero entries
   * per vector (pgvector's limit for a stored sparsevec); 'hnsw': an HNSW index
   * (`sparsevec_ip_ops`, with the `hnsw` parameters), approximate, up to 1,000 non-zero entries.
   */
  index?: 'hnsw' | 'exact';
  /**
   * Score only the rows that share a term with the query (default false): each row also keeps its
   * term ids in a `terms integer[]` column with a GIN index, and `searchSparse` adds
   * `WHERE terms && <the query's term ids>`. Rows sharing no term have a zero dot product and are
   * left out anyway, so the ranking is unchanged. It pays off only when queries are made of rare
   * terms (17x faster at 100k chunks on PGlite); a query with a term in over 10% of the rows gets
   * slower (3.6x: the planner scans and checks `&&` on every row), and writes halve. `false`: no
   * such column, every search scans the table (a table that has the column still gets it
   * written, so turning the prefilter on later misses no row).
   */
  prefilter?: boolean;
}

const refuse = (argument: string, value: unknown, message: string): never => {
  throw new InvalidArgumentError({ argument, value, message });
};

/** The settings with their defaults, checked: an InvalidArgumentError names the first bad one. */
export function resolveSettings(settings: PostgresStoreSettings) {
  const { metric = 'cosine', table = 'zerda_chunks', schema, index = 'hnsw', hnsw = {} } = settings;
  const { maxBatchSize = 500, timeoutMs = 30_000, createTable = true } = settings;
  const { m = 16, efConstruction = 64, efSearch = 40 } = hnsw;
  const sparse = settings.sparse === true ? {} : settings.sparse === false ? undefined : settings.sparse;
  if (sparse !== undefined && (sparse === null || typeof sparse !== 'object')) {
    refuse('sparse', sparse, 'expected true, false or { dimension?, index?, prefilter? }');
  }
  const { dimension: sparseDimension = maxSparseDimension, index: sparseIndex = 'exact' } = sparse ?? {};
  const { prefilter = false } = sparse ?? {};
  if (typeof prefilter !== 'boolean') refuse('sparse.prefilter', prefilter, 'expected true or false');
  if (!Object.hasOwn(metrics, metric)) refuse('metric', metric, "expected 'cosine', 'dot' or 'l2'");
  for (const [argument, value] of Object.entries({ index, 'sparse.index': sparseIndex })) {
    if (value !== 'hnsw' && value !== 'exact') refuse(argument, value, "expected 'hnsw' or 'exact'");
  }
  for (const [argument, name] of Object.entries({ table, schema })) {
    if (name !== undefined && !/^[^\0]+$/.test(name)) refuse(argument, name, 'expected a name without NUL');
  }
  checkPositiveIntegers({ maxBatchSize, timeoutMs, 'sparse.dimension': sparseDimension });
  checkPositiveIntegers({ 'hnsw.m': m, 'hnsw.efConstruction': efConstruction, 'hnsw.efSearch': efSearch });
  if (sparseDimension > maxSparseDimension) {
    refuse('sparse.dimension', sparseDimension, `pgvector's sparsevec has at most ${maxSparseDimension}`);
  }
  const retry = resolveRetrySettings(settings.retry);
  const resolved = { metric, table, schema, index, m, efConstruction, efSearch, maxBatchSize, timeoutMs };
  const maxNonZero = sparseNonZeroLimit[sparseIndex];
  const sparseSettings = sparse && { dimension: sparseDimension, index: sparseIndex, maxNonZero, prefilter };
  return { ...resolved, createTable, retry, sparse: sparseSettings };
}

/** How the driver reaches the database: statements, and where it can, transactions on one connection. */
export interface PostgresSession {
  readonly query: QueryFunction;
  readonly transaction?: <T>(work: (query: QueryFunction) => Promise<T>) => Promise<T>;
  readonly persistent: boolean;
}

/** The one connection the settings give, as a session. */
export function sessionOf({ pglite, pool, client, query }: PostgresStoreSettings): PostgresSession {
  if ([pglite, pool, client, query].filter((given) => given !== undefined).length !== 1) {
    const message = 'give exactly one of pglite, pool, client or query';
    throw new InvalidArgumentError({ argument: 'settings', message });
  }
  if (pglite !== undefined) {
    return {
      query: (sql, params) => pglite.query(sql, params),
      transaction: (work) => pglite.transaction((tx) => work((sql, params) => tx.query(sql, params))),
      persistent: pglite.dataDir !== undefined && !pglite.dataDir.startsWith('memory://'),
    };
  }
  if (pool !== undefined) {
    const transaction = async <T>(work: (query: QueryFunction) => Promise<T>): Promise<T> => {
      const connection = await pool.connect();
      try {
        return await inTransaction(connection, work);
      } finally {
        connection.release();
      }
    };
    return { query: (sql, params) => pool.query(sql, params), transaction, persistent: true };
  }
  if (client !== undefined) {
    // One connection: the store's calls take turns, so a transaction holds only its own statements.
    let tail: Promise<unknown> = Promise.resolve();
    const serial = <T>(call: () => Promise<T>): Promise<T> => {
      const result = tail.then(call);
      tail = result.catch(() => {});
      return result;
    };
    return {
      query: (sql, params) => serial(() => client.query(sql, params)),
      transaction: (work) => serial(() => inTransaction(client, work)),
      persistent: true,
    };
  }
  return { query: query as QueryFunction, persistent: true };
}

async function inTransaction<T>(
  connection: Queryable,
  work: (query: QueryFunction) => Promise<T>,
): Promise<T> {
  await connection.query('BEGIN');
  try {
    const result = await work((sql, params) => connection.query(sql, params));
    await connection.query('COMMIT');
    return result;
  } catch (error) {
    await connection.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
