export {
  BM25Index,
  DEFAULT_B,
  DEFAULT_K1,
  type BM25Document,
  type BM25Hit,
  type BM25Options,
  type BM25SearchOptions,
  type BM25Stats,
} from './bm25-index.js';
export { BM25_FORMAT_VERSION } from './bm25-format.js';
export { KeywordRetriever, type KeywordRetrieverOptions } from './keyword-retriever.js';
