export { type FaissFilter, faissFilterConvention, matchesDocIdFilter } from './faiss-filter.js';
export type { FaissIndex, FaissModule } from './faiss-module.js';
export { loadFaissModule } from './faiss-module.js';
export { HNSW_DEFAULTS } from './faiss-settings.js';
export {
  createFaissStore,
  type FaissHnswSettings,
  type FaissIndexType,
  type FaissStore,
  type FaissStoreOperations,
  type FaissStoreSettings,
  type FaissStoreStats,
  loadFaissStore,
} from './faiss-store.js';
