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
  DEMO_DIMENSION,
  type DemoOptions,
  type DemoQueryResult,
  type DemoReport,
  demoCommand,
  demoHelp,
  explainHit,
  formatDemoReport,
  runDemo,
} from './commands/demo.js';
export {
  EVAL_DEFAULTS,
  type EvalAnalyzerName,
  type EvalMode,
  type EvalOptions,
  type EvalReport,
  type EvalSettings,
  evalAnalyzers,
  evalCommand,
  evalFusions,
  evalHelp,
  evalModes,
  formatEvalReport,
  runEval,
  type ScoreRunOptions,
  scoreRun,
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
export { type CliIo, ExitCode, UsageError } from './io.js';
export { commands, main, mainHelp } from './main.js';
export {
  type DemoQuery,
  demoQueries,
  type SamplePassage,
  samplePassages,
  sampleQueries,
} from './sample/passages.js';
