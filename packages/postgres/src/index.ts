export type { PostgresDriver } from './postgres-driver.js';
export { type PostgresFilter, postgresFilterConvention } from './postgres-filter.js';
export type {
  PostgresSparseSettings,
  PostgresStoreSettings,
  Queryable,
  QueryFunction,
} from './postgres-settings.js';
export { createPostgresStore, type PostgresStore } from './postgres-store.js';
