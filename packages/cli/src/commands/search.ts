import {
  FilterError,
  type FilterInput,
  type HybridFusionMethod,
  type Metadata,
  parseFilter,
  type ScoredChunk,
  type ScoreExplanation,
  type SignalValues,
} from '@zerda/core';
import { type AnalyzerName, namedAnalyzers } from '../analyzers.js';
import { parseCommandArgs, readNumber } from '../args.js';
import { type CliIo, ExitCode, UsageError } from '../io.js';
import { parseJsonAt } from '../json-position.js';
import { type HighlightStyle, makeSnippet, queryMatcher } from '../snippet.js';
import { type SearchMode, searchModes, ZerdaStore } from '../store/store.js';

export const searchFusions: readonly HybridFusionMethod[] = ['weighted+rrf', 'rrf', 'weighted'];

export interface SearchOptions {
  /** The store directory (written by `zerda index`). */
  store: string;
  query: string;
  /** Hits to return (default 10). */
  k?: number;
  /** 'hybrid' (default), 'keyword' or 'vector'. */
  mode?: SearchMode;
  /** Hybrid fusion (default 'weighted+rrf'). */
  fusion?: HybridFusionMethod;
  /** A metadata filter in Zerda's filter language, applied to every branch. */
  filter?: FilterInput;
  /** Also run each branch alone to report its own rank, score and explanation per hit. */
  explain?: boolean;
}

/** What one branch says about a hit (with `explain`). */
export interface BranchExplanation {
  /** Rank in the branch's own list of `branchK` candidates; absent when it did not find the hit. */
  rank?: number;
  score?: number;
  explanation?: ScoreExplanation;
}

export interface SearchHitReport {
  rank: number;
  score: number;
  id: string;
  docId?: string;
  source?: string;
  title?: string;
  text: string;
  metadata: Metadata;
  /** The score and rank each signal gave it. */
  scores: SignalValues;
  ranks: SignalValues;
  /** How the final score was built. */
  explanation?: ScoreExplanation;
  /** Each branch on its own (hybrid with `explain`). */
  branches?: Record<string, BranchExplanation>;
}

/** What `zerda search --json` prints. */
export interface SearchReport {
  query: string;
  store: string;
  mode: SearchMode;
  fusion?: HybridFusionMethod;
  k: number;
  filter?: FilterInput;
  /** Matching candidates before truncation to k (a lower bound for vector search). */
  total: number;
  latencyMs: number;
  /** Documents and chunks in the store. */
  storeCounts: { documents: number; chunks: number };
  /** The store's analyser, which also decides which words of a snippet match. */
  analyzer: AnalyzerName;
  hits: SearchHitReport[];
  warnings: string[];
}

/** Opens a store and runs one query. */
export async function runSearch(options: SearchOptions): Promise<SearchReport> {
  const mode = options.mode ?? 'hybrid';
  const k = options.k ?? 10;
  const store = await ZerdaStore.open(options.store);
  try {
    const fusion = mode === 'hybrid' ? (options.fusion ?? 'weighted+rrf') : undefined;
    const retriever = store.retriever(mode, { fusion });
    const retrieve = { k, ...(options.filter === undefined ? {} : { filter: options.filter }) };
    const result = await retriever.retrieve(options.query, retrieve);
    let branches: Map<string, Map<string, ScoredChunk>> | undefined;
    if (options.explain && mode === 'hybrid') {
      // Each branch alone, with the hybrid retriever's candidate count (2k), to show its own view.
      branches = new Map();
      for (const name of ['keyword', 'vector'] as const) {
        const own = await store
          .retriever(name)
          .retrieve(options.query, { ...retrieve, k: 2 * k })
          .catch(() => undefined);
        branches.set(name, new Map((own?.hits ?? []).map((hit) => [hit.chunk.id, hit])));
      }
    }
    return {
      query: options.query,
      store: options.store,
      mode,
      ...(fusion === undefined ? {} : { fusion }),
      k,
      ...(options.filter === undefined ? {} : { filter: options.filter }),
      total: result.total,
      latencyMs: Math.round(result.latencyMs * 1000) / 1000,
      storeCounts: store.manifest.counts,
      analyzer: store.manifest.analyzer.name,
      hits: result.hits.map((hit) => describeHit(hit, branches)),
      warnings: result.warnings.map((warning) =>
        warning.source ? `${warning.source}: ${warning.message}` : warning.message,
      ),
    };
  } finally {
    await store.close();
  }
}

function describeHit(
  hit: ScoredChunk,
  branches: Map<string, Map<string, ScoredChunk>> | undefined,
): SearchHitReport {
  const metadata = hit.chunk.metadata ?? {};
  const source = typeof metadata.source === 'string' ? metadata.source : undefined;
  const title = typeof metadata.title === 'string' ? metadata.title : undefined;
  const report: SearchHitReport = {
    rank: hit.rank,
    score: hit.score,
    id: hit.chunk.id,
    ...(hit.chunk.docId === undefined ? {} : { docId: hit.chunk.docId }),
    ...(source === undefined ? {} : { source }),
    ...(title === undefined ? {} : { title }),
    text: hit.chunk.text,
    metadata,
    scores: hit.scores,
    ranks: hit.ranks,
    ...(hit.explanation === undefined ? {} : { explanation: hit.explanation }),
  };
  if (branches) {
    report.branches = {};
    for (const [name, hits] of branches) {
      const own = hits.get(hit.chunk.id);
      report.branches[name] = own
        ? { rank: own.rank, score: own.score, ...(own.explanation ? { explanation: own.explanation } : {}) }
        : {};
    }
  }
  return report;
}

export interface FormatSearchOptions {
  /** How query words are marked in snippets (default 'brackets'). */
  style?: HighlightStyle;
  /** Line width to fit the table to (default 100). */
  width?: number;
  /** Print each hit's per-branch explanation. */
  explain?: boolean;
}

/** The result as a table: rank, score, id, source and a snippet with the query words marked. */
export function formatSearchReport(report: SearchReport, options: FormatSearchOptions = {}): string {
  const style = options.style ?? 'brackets';
  const width = Math.max(60, options.width ?? 100);
  const analyzer = namedAnalyzers[report.analyzer]();
  const matches = queryMatcher(report.query, analyzer);
  const lines: string[] = [];
  const how = report.mode === 'hybrid' ? `hybrid (${report.fusion})` : report.mode;
  lines.push(
    `${how} search for "${report.query}"${report.filter === undefined ? '' : ` with filter ${JSON.stringify(report.filter)}`}: ${report.hits.length} hit${report.hits.length === 1 ? '' : 's'} (of ${report.total.toLocaleString('en-US')} ${report.mode === 'hybrid' ? 'candidates' : 'matching chunks'}) in ${report.latencyMs.toFixed(1)} ms (store: ${report.storeCounts.documents.toLocaleString('en-US')} documents, ${report.storeCounts.chunks.toLocaleString('en-US')} chunks)`,
  );
  if (report.hits.length === 0) {
    lines.push('', 'No match.');
  } else {
    const idWidth = Math.min(24, Math.max(2, ...report.hits.map((hit) => hit.id.length)));
    const sources = report.hits.map((hit) => shorten(hit.source ?? '', 28));
    const sourceWidth = Math.max(6, ...sources.map((source) => source.length));
    const rankWidth = Math.max(1, String(report.hits.length).length);
    const fixed = rankWidth + 2 + 5 + 2 + idWidth + 2 + sourceWidth + 2;
    const snippetWidth = Math.max(30, width - fixed - 2);
    lines.push(
      '',
      `${'#'.padStart(rankWidth)}  score  ${'id'.padEnd(idWidth)}  ${'source'.padEnd(sourceWidth)}  snippet`,
    );
    report.hits.forEach((hit, index) => {
      const snippet = makeSnippet(hit.text, matches, { width: snippetWidth, style });
      lines.push(
        `${String(hit.rank).padStart(rankWidth)}  ${hit.score.toFixed(3)}  ${shorten(hit.id, idWidth).padEnd(idWidth)}  ${(sources[index] ?? '').padEnd(sourceWidth)}  ${snippet.text}`,
      );
      if (options.explain) {
        const indent = ' '.repeat(rankWidth + 2);
        for (const line of explainLines(hit, report)) lines.push(`${indent}${line}`);
        lines.push('');
      }
    });
  }
  for (const warning of report.warnings) lines.push(`warning: ${warning}`);
  return `${lines.join('\n').trimEnd()}\n`;
}

function explainLines(hit: SearchHitReport, report: SearchReport): string[] {
  const lines: string[] = [];
  if (hit.title) lines.push(`title    ${hit.title}`);
  if (report.mode === 'hybrid') {
    for (const branch of ['keyword', 'vector']) {
      const rank = hit.ranks[branch];
      const score = hit.scores[branch];
      const own = hit.branches?.[branch];
      const detail = own?.explanation?.components?.bm25;
      const label = branch.padEnd(8);
      if (rank === undefined) {
        lines.push(`${label} not in its top ${2 * report.k}`);
      } else {
        lines.push(
          `${label} #${rank}  score ${(score ?? 0).toFixed(3)}${detail === undefined ? '' : `  (BM25 ${detail.toFixed(4)})`}${branch === 'vector' ? '  (cosine similarity)' : ''}`,
        );
      }
    }
    if (hit.explanation) lines.push(`fused    ${hit.score.toFixed(4)} = ${hit.explanation.description}`);
  } else if (hit.explanation) {
    lines.push(`${report.mode.padEnd(8)} ${hit.explanation.description}`);
  }
  return lines;
}

function shorten(text: string, width: number): string {
  return text.length <= width ? text : `…${text.slice(text.length - width + 1)}`;
}

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
  --fusion <f>         ${searchFusions.join(' | ')} (hybrid; default weighted+rrf)
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

/** `zerda search` from command-line arguments; returns the exit code. */
export async function searchCommand(argv: string[], io: CliIo): Promise<number> {
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
  if (values.help) {
    io.stdout(searchHelp);
    return ExitCode.ok;
  }
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
  const report = await runSearch({
    store: values.store,
    query,
    k: readNumber(values.k, 'k', searchHelp, { min: 1, max: 10_000, integer: true }),
    mode: mode as SearchMode,
    fusion: fusion as HybridFusionMethod | undefined,
    filter,
    explain: values.explain,
  });
  io.stdout(
    values.json
      ? `${JSON.stringify(report, null, 2)}\n`
      : formatSearchReport(report, {
          style: io.color ? 'ansi' : 'brackets',
          width: io.stdoutIsTTY ? io.columns : undefined,
          explain: values.explain,
        }),
  );
  return ExitCode.ok;
}
