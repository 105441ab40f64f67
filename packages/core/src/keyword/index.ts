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
