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
