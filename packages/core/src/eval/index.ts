export {
  type BeirDataset,
  type BeirDocument,
  type BeirQuery,
  beirDocumentText,
  type LoadBeirOptions,
  loadBeirFolder,
  readBeirCorpus,
  readBeirQueries,
} from './beir.js';
export { DatasetError } from './dataset-error.js';
export {
  type EmbeddingKind,
  type EmbeddingsFile,
  type ReadEmbeddingsOptions,
  readEmbeddings,
} from './embeddings.js';
export {
  compareCodePoints,
  compareRunEntries,
  countRelevant,
  DEFAULT_METRICS,
  type EvaluateOptions,
  type Evaluation,
  evaluateRun,
  judgedQueryIds,
  type MetricName,
  ndcgAt,
  parseMetric,
  precisionAt,
  rankRunEntries,
  recallAt,
  reciprocalRankAt,
} from './metrics.js';
export {
  type FormatTrecRunOptions,
  formatTrecRun,
  parseQrels,
  parseTrecRun,
  readQrels,
  readTrecRun,
  writeTrecRun,
} from './trec.js';
export type { Qrels, Run, RunEntry } from './types.js';
