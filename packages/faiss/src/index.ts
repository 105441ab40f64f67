export type { FaissIndex, FaissModule } from './faiss-module.js';
export { loadFaissModule } from './faiss-module.js';
export {
  createFaissStore,
  type FaissFilterOptions,
  type FaissHnswSettings,
  type FaissIndexType,
  type FaissSearchOptions,
  FaissStore,
  type FaissStoreSettings,
  type FaissStoreStats,
} from './faiss-store.js';
