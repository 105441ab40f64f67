// @zerda/langchain: LangChain.js adapters, both directions.

// Zerda into LangChain
export {
  chunkToDocument,
  hitToDocument,
  type MetadataMode,
  type ZerdaHitMetadata,
} from './documents.js';
export type { LangChainDriver } from './langchain-driver.js';
// LangChain into Zerda
export {
  fromLangChainEmbeddings,
  LangChainEmbedder,
  type LangChainEmbedderOptions,
} from './langchain-embedder.js';
export { langChainFilter } from './langchain-filter.js';
export {
  fromLangChainModel,
  type GenerateOptions,
  type LangChainLanguageModel,
  type LangChainModelOptions,
  textOf,
} from './langchain-model.js';
export { knownScoreKinds, type ScoreKind } from './langchain-scores.js';
export {
  fromLangChainVectorStore,
  type LangChainStore,
  type LangChainStoreSettings,
} from './langchain-store.js';
export { ZerdaEmbeddings, type ZerdaEmbeddingsParams } from './zerda-embeddings.js';
export {
  type ZerdaCallSettings,
  type ZerdaRetrievable,
  ZerdaRetriever,
  type ZerdaRetrieverInput,
} from './zerda-retriever.js';
export { type ZerdaAddOptions, ZerdaVectorStore, type ZerdaVectorStoreArgs } from './zerda-vector-store.js';
