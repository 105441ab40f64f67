/*
 * `zerda index`: reads documents into a store folder's collection. Split by concern:
 * index-args.ts reads the command line and holds the help, index-run.ts runs an index,
 * index-format.ts formats the progress and the summary.
 */
import { type CliIo, ExitCode } from '../../io.js';
import { ProgressBar } from '../../progress.js';
import { indexHelp, parseIndexArgs } from './index-args.js';
import { formatIndexSummary, progressReporter } from './index-format.js';
import { type IndexSummary, runIndex } from './index-run.js';

export { chunkDocuments } from '../../ingest/chunk-documents.js';
export { type IndexArgs, indexHelp, parseIndexArgs } from './index-args.js';
export { describeProblem, formatIndexSummary, progressReporter } from './index-format.js';
export {
  INDEX_DEFAULTS,
  type IndexEvent,
  type IndexOptions,
  type IndexSummary,
  knownEmbedders,
  runIndex,
} from './index-run.js';

/** `zerda index` from command-line arguments; returns the exit code. */
export async function indexCommand(argv: string[], io: CliIo): Promise<number> {
  const parsed = parseIndexArgs(argv);
  if (parsed === undefined) {
    io.stdout(indexHelp);
    return ExitCode.ok;
  }
  const bar = new ProgressBar(io);
  const controller = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts++;
    if (interrupts === 1) {
      bar.log(
        'interrupted: committing the whole batches read so far (press Ctrl-C again to stop at once; the store keeps every batch already added)',
      );
      controller.abort();
      return;
    }
    bar.clear();
    io.stderr('stopped at once: the store keeps every batch already added\n');
    process.exit(ExitCode.interrupted);
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  let summary: IndexSummary;
  try {
    summary = await runIndex({
      ...parsed.options,
      signal: controller.signal,
      onEvent: progressReporter(io, bar),
    });
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
    bar.clear();
  }
  io.stdout(parsed.json ? `${JSON.stringify(summary, null, 2)}\n` : formatIndexSummary(summary));
  if (summary.interrupted) return ExitCode.interrupted;
  if (summary.documents === 0 && summary.problems.length > 0) return ExitCode.failure;
  return summary.problems.length > 0 ? ExitCode.partial : ExitCode.ok;
}
