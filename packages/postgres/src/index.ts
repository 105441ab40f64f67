export type { PostgresDriver, QueryFunction } from './postgres-driver.js';
export { type PostgresFilter, postgresFilterConvention } from './postgres-filter.js';
export {
  createPostgresStore,
  type PostgresStore,
  type PostgresStoreSettings,
  type Queryable,
} from './postgres-store.js';
