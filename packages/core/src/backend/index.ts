// `@zerda/core/backend`: the toolkit for backend authors, one copy of each mechanism every driver
// needs (retries, a bounded pool, timeouts and abort races, settings read lazily), plus the
// driver contract itself. Applications do not need it.

export { ContractVersionError } from '../errors/index.js';
// For filter-convention authors: the tree's shape and the normalisations core's conventions use.
export {
  andNode,
  equalityNode,
  existsNode,
  inNode,
  isRangeNode,
  notNode,
  orNode,
  rangeNode,
} from '../filter/nodes.js';
export { conjunctsOf, pushNegations, simplifyFilter } from '../filter/normalize-filter.js';
export type {
  DistanceMetric,
  DriverCallOptions,
  DriverCapabilities,
  DriverListOptions,
  DriverListPage,
  DriverMatch,
  DriverQueryOptions,
  RecordProblem,
  ScoreConversion,
  SparseCapabilities,
  SparseVector,
  VectorDriver,
  VectorRecord,
} from '../vector/driver.js';
export { toSimilarity } from '../vector/score-conversion.js';
export {
  createVectorStore,
  type VectorStoreSettings,
  wrapBackendError,
} from '../vector/vector-store.js';
export { chunked, mapWithConcurrency } from './pool.js';
export {
  isRetryableStatus,
  parseRetryAfter,
  type ResolvedRetrySettings,
  type RetryEvent,
  type RetryFailure,
  type RetryOptions,
  type RetrySettings,
  resolveRetrySettings,
  withRetry,
} from './retry.js';
export { checkPositiveIntegers, lazySetting, readEnv } from './settings.js';
export { abortable, RequestTimeoutError, sleep, type TimeoutOptions, withTimeout } from './timeout.js';
