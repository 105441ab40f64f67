export { type AnalyzerName, isAnalyzerName, namedAnalyzers } from './analyzers.js';
export {
  type BenchChart,
  type BenchReportLike,
  type BenchRowLike,
  benchCharts,
  checkBenchReport,
} from './charts/bench-charts.js';
export {
  type BarChartOptions,
  type BarSeries,
  barChart,
  escapeXml,
  type LineChartOptions,
  type LineSeries,
  lineChart,
  PALETTE,
} from './charts/svg.js';
export {
  type BuiltVectorRetriever,
  buildKeywordRetriever,
  buildVectorRetriever,
  collectionChunks,
  PrecomputedQueryEmbedder,
  type VectorSettings,
  type VectorSource,
} from './collection.js';
export {
  benchCommand,
  benchHelp,
  type DrawBenchOptions,
  type DrawnCharts,
  drawBenchCharts,
  findBenchRoot,
} from './commands/bench.js';
export {
  DEMO_DIMENSION,
  type DemoArgs,
  type DemoOptions,
  type DemoQueryResult,
  type DemoReport,
  demoCommand,
  demoHelp,
  explainHit,
  formatDemoReport,
  parseDemoArgs,
  runDemo,
} from './commands/demo/index.js';
export {
  type DetailedEvaluation,
  EVAL_DEFAULTS,
  type EvalAnalyzerName,
  type EvalMode,
  type EvalOptions,
  type EvalReport,
  type EvalRunContext,
  type EvalSettings,
  evalAnalyzers,
  evalCommand,
  evalFusions,
  evalHelp,
  evalModes,
  formatEvalReport,
  type PerQueryMetrics,
  runEval,
  runEvalDetailed,
  type ScoreRunOptions,
  scoreRun,
  scoreRunDetailed,
} from './commands/eval.js';
export {
  type FusedRunEntry,
  type FuseFilesOptions,
  type FuseMethod,
  type FuseOptions,
  type FuseReport,
  formatFuseReport,
  fuseCommand,
  fuseHelp,
  fuseMethods,
  fuseRuns,
  rankRun,
  runFuse,
} from './commands/fuse.js';
export {
  chunkDocuments,
  describeProblem,
  formatIndexSummary,
  INDEX_DEFAULTS,
  type IndexArgs,
  type IndexEvent,
  type IndexOptions,
  type IndexSummary,
  indexCommand,
  indexHelp,
  knownEmbedders,
  parseIndexArgs,
  progressReporter,
  runIndex,
} from './commands/index/index.js';
export {
  type BranchExplanation,
  type FormatSearchOptions,
  formatSearchReport,
  parseSearchArgs,
  readFilterOption,
  runSearch,
  type SearchArgs,
  type SearchHitReport,
  type SearchMode,
  type SearchOptions,
  type SearchReport,
  searchCommand,
  searchFusions,
  searchHelp,
  searchModes,
} from './commands/search/index.js';
export { type ChunkingOptions, checkChunking, splitIntoChunks, type TextChunk } from './ingest/chunker.js';
export {
  listSources,
  parseDocumentLine,
  readSourceFile,
  type SourceDocument,
  type SourceFile,
  type SourceListing,
  type SourceProblem,
  SUPPORTED_EXTENSIONS,
} from './ingest/sources.js';
export { type CliIo, ExitCode, UsageError } from './io.js';
export {
  describeJsonProblem,
  findJsonSyntaxError,
  type JsonSyntaxProblem,
  parseJsonAt,
} from './json-position.js';
export { commands, main, mainHelp } from './main.js';
export { bar, formatDuration, ProgressBar } from './progress.js';
export { type EvalReportPage, type ReportSeries, renderEvalReport } from './report/eval-report.js';
export {
  type DemoQuery,
  demoQueries,
  type SamplePassage,
  samplePassages,
  sampleQueries,
} from './sample/passages.js';
export { type HighlightStyle, makeSnippet, queryMatcher, type Snippet } from './snippet.js';
export {
  type BackendAdapter,
  type BackendContext,
  type BackendName,
  type BackendOptions,
  BackendUnavailableError,
  backendAdapter,
  knownBackends,
  type OpenedBackend,
  readBackendOptions,
} from './store-folder/backends.js';
export {
  makeStoreConfig,
  readStoreConfig,
  STORE_CONFIG,
  STORE_FORMAT,
  STORE_FORMAT_VERSION,
  type StoreConfig,
  StoreError,
  type StoreSettings,
} from './store-folder/store-config.js';
export {
  documentOf,
  type OpenStore,
  openStoreForReading,
  openStoreForWriting,
  storeCounts,
} from './store-folder/store-folder.js';
