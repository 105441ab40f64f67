export type { Embedder } from './embedder.js';
export * from './embedders/index.js';
export {
  createInMemoryVectorStore,
  type InMemoryFilterOptions,
  type InMemorySearchOptions,
  InMemoryVectorStore,
  type InMemoryVectorStoreSettings,
  type InMemoryVectorStoreStats,
  type VectorQuantization,
} from './in-memory-vector-store.js';
export { type KernelPreference, wasmSimdSupported } from './kernels/kernels.js';
export {
  checkStoreSettings,
  checkVectorSearchOptions,
  embedChunksForStore,
  embedQueryForStore,
  prepareAddBatch,
} from './store-helpers.js';
export { selectTopK, type TopK } from './top-k.js';
export type {
  AddOptions,
  AddResult,
  DistanceMetric,
  VectorDatabase,
  VectorDatabaseCapabilities,
  VectorHit,
  VectorSearchOptions,
  VectorSearchResult,
} from './vector-database.js';
export { checkVector, isNumberArray } from './vector-input.js';
export { VectorRetriever, type VectorRetrieverOptions, wrapBackendError } from './vector-retriever.js';
