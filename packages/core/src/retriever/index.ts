export {
  BaseRetriever,
  type BaseRetrieverOptions,
  type BatchRetrieveOptions,
  compareHits,
  type RerankHook,
  type RetrieveChunksOptions,
  type RetrievedChunks,
  type RetrieveOptions,
  validateK,
} from './base-retriever.js';
export {
  type HybridBranch,
  type HybridFusionMethod,
  HybridRetriever,
  type HybridRetrieverOptions,
} from './hybrid-retriever.js';
export { type ChunkSource, MetadataRetriever, type MetadataRetrieverOptions } from './metadata-retriever.js';
