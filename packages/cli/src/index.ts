export {
  type DemoOptions,
  type DemoReport,
  demoCommand,
  demoHelp,
  formatDemoReport,
  runDemo,
} from './commands/demo.js';
export {
  EVAL_DEFAULTS,
  type EvalAnalyzerName,
  type EvalOptions,
  type EvalReport,
  evalAnalyzers,
  evalCommand,
  evalHelp,
  formatEvalReport,
  runEval,
} from './commands/eval.js';
export { type CliIo, ExitCode, UsageError } from './io.js';
export { commands, main, mainHelp } from './main.js';
export { type SamplePassage, samplePassages, sampleQueries } from './sample/passages.js';
