export type { Embedder } from './embedder.js';
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
