export {
  BaseRetriever,
  compareHits,
  validateK,
  type BaseRetrieverOptions,
  type BatchRetrieveOptions,
  type RerankHook,
  type RetrieveChunksOptions,
  type RetrievedChunks,
  type RetrieveOptions,
} from './base-retriever.js';
export { type ChunkSource, MetadataRetriever, type MetadataRetrieverOptions } from './metadata-retriever.js';
export {
  type HybridBranch,
  type HybridFusionMethod,
  HybridRetriever,
  type HybridRetrieverOptions,
} from './hybrid-retriever.js';
