import { type DistanceMetric, type Embedder, InvalidArgumentError, type VectorStoreOf } from '@zerda/core';
import { createVectorStore, type RetrySettings } from '@zerda/core/backend';
import { PostgresDriver, type PostgresSession, type QueryFunction } from './postgres-driver.js';

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

/** A Postgres store: the v2 store core makes from the Postgres driver (`driver.table` names its table). */
export type PostgresStore = VectorStoreOf<PostgresDriver> & { readonly driver: PostgresDriver };

/**
 * A Zerda vector store over Postgres with pgvector: a `pg` Pool or Client against any server
 * (Supabase, Neon, RDS, Citus, your own), or PGlite in-process. Filters are pushed down whole, as
 * SQL over the jsonb metadata column with every key and value a bound parameter.
 */
export function createPostgresStore(settings: PostgresStoreSettings): PostgresStore {
  const driver = new PostgresDriver(sessionOf(settings), settings);
  const { embedder, strictFilters } = settings;
  return createVectorStore(driver, { embedder, dimension: driver.dimension, strictFilters }) as PostgresStore;
}

function sessionOf({ pglite, pool, client, query }: PostgresStoreSettings): PostgresSession {
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
