import type { SparseSearchable, VectorStoreOf } from '@zerda/core';
import { createVectorStore } from '@zerda/core/backend';
import { PostgresDriver } from './postgres-driver.js';
import type { PostgresFilter } from './postgres-filter.js';
import { type PostgresSparseSettings, type PostgresStoreSettings, sessionOf } from './postgres-settings.js';

/**
 * A Postgres store: the v2 store core makes from the Postgres driver (`driver.table` names its
 * table), with `searchSparse` when made with `sparse` on.
 */
export type PostgresStore<Sparse extends boolean = false> = VectorStoreOf<PostgresDriver> & {
  readonly driver: PostgresDriver;
} & (Sparse extends true ? SparseSearchable<PostgresFilter> : unknown);

/**
 * A Zerda vector store over Postgres with pgvector: a `pg` Pool or Client against any server
 * (Supabase, Neon, RDS, Citus, your own), or PGlite in-process. Filters are pushed down whole, as
 * SQL over the jsonb metadata column with every key and value a bound parameter. With `sparse`,
 * each chunk also keeps a sparse (BM25) vector, ranked in the database by `store.searchSparse`.
 */
export function createPostgresStore<const Settings extends PostgresStoreSettings>(
  settings: Settings,
): PostgresStore<Settings['sparse'] extends true | PostgresSparseSettings ? true : false> {
  const driver = new PostgresDriver(sessionOf(settings), settings);
  const { embedder, strictFilters } = settings;
  return createVectorStore(driver, { embedder, dimension: driver.dimension, strictFilters }) as never;
}
