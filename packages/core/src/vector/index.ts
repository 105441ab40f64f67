export type {
  DistanceMetric,
  DriverCapabilities,
  ScoreConversion,
  SparseCapabilities,
  SparseVector,
  VectorDriver,
  VectorRecord,
} from './driver.js';
export type { Embedder } from './embedder.js';
export * from './embedders/index.js';
export {
  createInMemoryVectorStore,
  type InMemoryArenaSnapshot,
  type InMemorySearchOptions,
  type InMemorySearchResult,
  type InMemoryStoreSnapshot,
  InMemoryVectorStore,
  type InMemoryVectorStoreSettings,
  type InMemoryVectorStoreStats,
  type VectorQuantization,
} from './in-memory-vector-store.js';
export type { IvfIndexSettings, VectorIndexSetting } from './ivf-index.js';
export { type KernelPreference, wasmSimdSupported } from './kernels/kernels.js';
export type {
  ScanThreadHost,
  ScanThreadsState,
  ScanWorkerData,
  ScanWorkerHandle,
} from './kernels/scan-threads.js';
export { webScanThreads } from './kernels/scan-threads-web.js';
export { type FirstAtLeast, selectTopK, type TopK } from './top-k.js';
export type {
  AddOptions,
  AddResult,
  CallOptions,
  Deletable,
  HybridSearchable,
  HybridSearchOptions,
  Listable,
  ListedRecords,
  ListOptions,
  SparseSearchable,
  VectorDatabase,
  VectorDatabaseCapabilities,
  VectorHit,
  VectorSearchOptions,
  VectorSearchResult,
  VectorStoreOf,
} from './vector-database.js';
export { VectorRetriever, type VectorRetrieverOptions } from './vector-retriever.js';
export { createVectorStore, isVectorStore, toVectorStore, type VectorStoreSettings } from './vector-store.js';
