/*
 * `zerda search`: searches a store folder's collection. Split by concern: search-args.ts reads
 * the command line and holds the help, search-run.ts runs a search, search-format.ts formats it.
 */
import { type CliIo, ExitCode } from '../../io.js';
import { parseSearchArgs, searchHelp } from './search-args.js';
import { formatSearchReport } from './search-format.js';
import { runSearch } from './search-run.js';

export { parseSearchArgs, readFilterOption, type SearchArgs, searchHelp } from './search-args.js';
export { type FormatSearchOptions, formatSearchReport } from './search-format.js';
export {
  type BranchExplanation,
  runSearch,
  type SearchHitReport,
  type SearchMode,
  type SearchOptions,
  type SearchReport,
  searchFusions,
  searchModes,
} from './search-run.js';

/** `zerda search` from command-line arguments; returns the exit code. */
export async function searchCommand(argv: string[], io: CliIo): Promise<number> {
  const parsed = parseSearchArgs(argv);
  if (parsed === undefined) {
    io.stdout(searchHelp);
    return ExitCode.ok;
  }
  const report = await runSearch(parsed.options);
  io.stdout(
    parsed.json
      ? `${JSON.stringify(report, null, 2)}\n`
      : formatSearchReport(report, {
          style: io.color ? 'ansi' : 'brackets',
          width: io.stdoutIsTTY ? io.columns : undefined,
          explain: parsed.options.explain,
        }),
  );
  return ExitCode.ok;
}
