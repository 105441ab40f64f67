import {
  DEFAULT_FUSION_CONFIG,
  FilterError,
  type FilterInput,
  type HybridFusionMethod,
  parseFilter,
} from '@zerda/core';
import { parseCommandArgs, readNumber } from '../../args.js';
import { UsageError } from '../../io.js';
import { parseJsonAt } from '../../json-position.js';
import { type SearchMode, type SearchOptions, searchFusions, searchModes } from './search-run.js';

/** `--filter`'s JSON, parsed and checked: bad JSON says where, a bad filter says which part. */
export function readFilterOption(text: string, help: string): FilterInput {
  const value = parseJsonAt(text, (description) => {
    throw new UsageError(`--filter is not valid JSON at ${description}`, help);
  });
  try {
    parseFilter(value as FilterInput);
  } catch (error) {
    if (FilterError.isInstance(error)) throw new UsageError(`--filter: ${error.message}`, help);
    throw error;
  }
  return value as FilterInput;
}

export const searchHelp = `Usage: zerda search "<query>" --store <dir> [options]

Searches a store written by 'zerda index': BM25 keyword search, vector search, or both fused
(hybrid, the default). Prints a table of the hits: rank, score (a similarity, higher is better,
in [0, 1]), chunk id, source file and a snippet with the query's words marked (bold on a
terminal, [brackets] otherwise; a word matches when it analyses to a query term, so 'layers'
matches 'layer').

Options:
  --store <dir>        the store directory (required)
  -k <n>               hits to return (default 10)
  --mode <m>           ${searchModes.join(' | ')} (default hybrid)
  --fusion <f>         ${searchFusions.join(' | ')} (hybrid; default ${DEFAULT_FUSION_CONFIG.method})
  --filter <json>      a metadata filter, applied to every branch, for example
                       '{"source": "docs/guide.md"}' or '{"year": {"$gte": 2020}}'; chunks
                       carry source, title (when known), chunk and chunks (for split documents)
                       and their document's own metadata
  --explain            under each hit, each branch's rank and score and how the final score
                       was built
  --json               print the result as JSON (hits with text, metadata, scores, ranks and
                       explanations)
  -h, --help           show this help

Exit codes: 0 success (even with no match); 1 the search failed (no store at --store, a store
that cannot be read); 2 the command was called wrongly (bad flag, invalid --filter JSON: the
message gives the position).

Examples:
  pnpm zerda search "boundary layer heat transfer" --store /tmp/cranfield --explain
  pnpm zerda search "heat transfer" --store /tmp/cranfield -k 5 --mode keyword --json
  pnpm zerda search "install" --store .zerda --filter '{"source": {"$in": ["README.md", "docs/setup.md"]}}'
`;

/** What `zerda search`'s arguments ask for. */
export interface SearchArgs {
  options: SearchOptions;
  json: boolean;
}

/** `zerda search`'s arguments as options, checked; `undefined` when help was asked for. */
export function parseSearchArgs(argv: string[]): SearchArgs | undefined {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      store: { type: 'string' },
      k: { type: 'string', short: 'k' },
      mode: { type: 'string' },
      fusion: { type: 'string' },
      filter: { type: 'string' },
      explain: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    searchHelp,
  );
  if (values.help) return undefined;
  if (positionals.length === 0) throw new UsageError('missing the query', searchHelp);
  if (positionals.length > 1) {
    throw new UsageError(
      `expected one query, got ${positionals.length} words: put the query in quotes ("${positionals.join(' ')}")`,
      searchHelp,
    );
  }
  const query = positionals[0] as string;
  if (query.trim() === '') throw new UsageError('the query is empty', searchHelp);
  if (values.store === undefined || values.store.trim() === '')
    throw new UsageError('--store <dir> is required', searchHelp);
  const mode = values.mode ?? 'hybrid';
  if (!searchModes.includes(mode as SearchMode)) {
    throw new UsageError(`unknown mode '${mode}': expected ${searchModes.join(', ')}`, searchHelp);
  }
  const fusion = values.fusion;
  if (fusion !== undefined) {
    if (!searchFusions.includes(fusion as HybridFusionMethod)) {
      throw new UsageError(`unknown fusion '${fusion}': expected ${searchFusions.join(', ')}`, searchHelp);
    }
    if (mode !== 'hybrid') throw new UsageError('--fusion applies to --mode hybrid', searchHelp);
  }
  const filter = values.filter === undefined ? undefined : readFilterOption(values.filter, searchHelp);
  return {
    options: {
      store: values.store,
      query,
      k: readNumber(values.k, 'k', searchHelp, { min: 1, max: 10_000, integer: true }),
      mode: mode as SearchMode,
      fusion: fusion as HybridFusionMethod | undefined,
      filter,
      explain: values.explain,
    },
    json: values.json,
  };
}
