// Evaluation: metrics compatible with trec_eval, TREC run and qrels text, fusion tuning. The file
// readers (BEIR folders, run and qrels files, embeddings files) are Node-only: `@zerda/core/node`.
export {
  type BeirDataset,
  type BeirDocument,
  type BeirQuery,
  beirDocumentText,
  type LoadBeirOptions,
} from './beir-types.js';
export { DatasetError } from './dataset-error.js';
export type { EmbeddingKind, EmbeddingsFile, ReadEmbeddingsOptions } from './embeddings.js';
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
export { type FormatTrecRunOptions, formatTrecRun, parseQrels, parseTrecRun } from './trec.js';
export {
  expandGrid,
  type FoldResult,
  type MeanAndSpread,
  MIN_TUNING_QUERIES,
  type TunedSetting,
  type TuneFusionOptions,
  type TuneFusionResult,
  type TuningGrid,
  type TuningQuery,
  tuneFusion,
} from './tune.js';
export type { Qrels, Run, RunEntry } from './types.js';
