export { BM25_FORMAT_VERSION } from './bm25-format.js';
export {
  type BM25Document,
  type BM25Hit,
  BM25Index,
  type BM25Options,
  type BM25SearchOptions,
  type BM25Stats,
  DEFAULT_B,
  DEFAULT_K1,
} from './bm25-index.js';
export { KeywordRetriever, type KeywordRetrieverOptions } from './keyword-retriever.js';
export {
  BM25SparseEncoder,
  type BM25SparseEncoderOptions,
  type BM25SparseStats,
  SPARSE_DIMENSION,
  SPARSE_TERM_ID_SCHEME,
} from './sparse-encoder.js';
export {
  DatabaseHybridRetriever,
  type DatabaseHybridRetrieverOptions,
  SparseKeywordRetriever,
  type SparseKeywordRetrieverOptions,
} from './sparse-retrievers.js';
