import {
  type FilterInput,
  HashEmbedder,
  type HybridFusionMethod,
  HybridRetriever,
  InMemoryVectorStore,
  KeywordRetriever,
  type ScoredChunk,
  type SearchResult,
  VectorRetriever,
} from '@zerda/core';
import { parseCommandArgs, readNumber } from '../args.js';
import { type CliIo, UsageError } from '../io.js';
import { type DemoQuery, demoQueries, samplePassages } from '../sample/passages.js';
import { type ConversationTurnReport, formatConversation, runConversationDemo } from './demo-conversation.js';
import { readFilterOption } from './search.js';

/** The hash embedder's dimension in the demo. */
export const DEMO_DIMENSION = 256;

export interface DemoOptions {
  /** Queries to run (default: the sample queries: English, Arabic, mixed, and one with a filter). */
  queries?: ReadonlyArray<string | DemoQuery>;
  /** Hits per query and retriever (default 3). */
  k?: number;
  /** How the hybrid retriever fuses (default 'weighted+rrf', the HybridRetriever's default). */
  fusion?: HybridFusionMethod;
}

/** One query's results from the three retrievers. */
export interface DemoQueryResult {
  query: string;
  label?: string;
  filter?: FilterInput;
  keyword: SearchResult;
  vector: SearchResult;
  hybrid: SearchResult;
}

export interface DemoReport {
  /** The context engine answering a question and a follow-up that uses the recorded answer. */
  conversation: ConversationTurnReport[];
  documents: number;
  fusion: HybridFusionMethod;
  embedder: { name: string; dimension: number };
  k: number;
  results: DemoQueryResult[];
}

/**
 * Indexes the bundled sample corpus twice, into a BM25 keyword retriever and into the in-memory
 * vector store with the hash embedder (no model, no network), then runs each query through the
 * keyword, vector and hybrid retrievers, with its metadata filter where it has one.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoReport> {
  const k = options.k ?? 3;
  const fusion = options.fusion ?? 'weighted+rrf';
  const keyword = new KeywordRetriever({ k });
  keyword.add(samplePassages);
  const embedder = new HashEmbedder({ dimension: DEMO_DIMENSION });
  const store = new InMemoryVectorStore({ embedder, metric: 'cosine' });
  await store.add(samplePassages);
  const vector = new VectorRetriever({ store, embedder, k });
  const hybrid = new HybridRetriever({ keyword, vector, fusion, k });

  const results: DemoQueryResult[] = [];
  for (const input of options.queries ?? demoQueries) {
    const query: DemoQuery = typeof input === 'string' ? { text: input } : input;
    const retrieve = { k, ...(query.filter === undefined ? {} : { filter: query.filter }) };
    const [keywordResult, vectorResult, hybridResult] = await Promise.all([
      keyword.retrieve(query.text, retrieve),
      vector.retrieve(query.text, retrieve),
      hybrid.retrieve(query.text, retrieve),
    ]);
    results.push({
      query: query.text,
      ...(query.label === undefined ? {} : { label: query.label }),
      ...(query.filter === undefined ? {} : { filter: query.filter }),
      keyword: keywordResult,
      vector: vectorResult,
      hybrid: hybridResult,
    });
  }
  const conversation = await runConversationDemo(hybrid);
  return {
    conversation,
    documents: samplePassages.length,
    fusion,
    embedder: { name: 'HashEmbedder', dimension: DEMO_DIMENSION },
    k,
    results,
  };
}

/**
 * Why a hybrid hit scored what it did, in a few words: each branch's rank and score
 * (`keyword #1 1.000`), or that a branch did not find it.
 */
export function explainHit(hit: ScoredChunk, branches: readonly string[] = ['keyword', 'vector']): string {
  return branches
    .map((branch) => {
      const rank = hit.ranks[branch];
      const score = hit.scores[branch];
      return rank === undefined ? `${branch} -` : `${branch} #${rank} ${(score ?? 0).toFixed(3)}`;
    })
    .join(', ');
}

/** The demo as text: for each query a compact table of the three retrievers' top hits. */
export function formatDemoReport(report: DemoReport): string {
  const lines = [
    `Indexed ${report.documents} sample passages (English, Arabic and mixed) into a BM25 keyword index and an`,
    `in-memory vector store (${report.embedder.name}, ${report.embedder.dimension} dimensions, cosine). Top ${report.k} per retriever;`,
    `hybrid fuses the keyword and vector rankings by ${describeFusion(report.fusion)}.`,
  ];
  report.results.forEach((result, index) => {
    lines.push('', `${index + 1}. ${result.label ? `[${result.label}] ` : ''}"${result.query}"`);
    if (result.filter !== undefined) lines.push(`   filter ${JSON.stringify(result.filter)}`);
    const columns = [
      { title: 'keyword (BM25)', hits: result.keyword.hits },
      { title: 'vector (cosine)', hits: result.vector.hits },
      { title: `hybrid (${report.fusion})`, hits: result.hybrid.hits },
    ];
    const cell = (hit: ScoredChunk | undefined) => (hit ? `${hit.chunk.id} ${hit.score.toFixed(3)}` : '');
    const width = Math.max(
      16,
      ...columns.flatMap((c) => [c.title.length, ...c.hits.map((h) => cell(h).length)]),
    );
    const rows = Math.max(...columns.map((c) => c.hits.length));
    lines.push(
      `   #  ${columns.map((c) => c.title.padEnd(width)).join('  ')}  why (hybrid: rank and score per branch)`,
    );
    if (rows === 0) lines.push('   no match');
    for (let i = 0; i < rows; i++) {
      const hybridHit = result.hybrid.hits[i];
      lines.push(
        `   ${i + 1}  ${columns.map((c) => cell(c.hits[i]).padEnd(width)).join('  ')}  ${hybridHit ? explainHit(hybridHit) : ''}`.trimEnd(),
      );
    }
    for (const hit of result.hybrid.hits) {
      const m = hit.chunk.metadata ?? {};
      const tags = [m.lang, m.year, m.category].filter((v) => v !== undefined).join(' ');
      lines.push(`   ${hit.chunk.id.padEnd(6)} ${tags.padEnd(20)} ${truncate(hit.chunk.text, 70)}`);
    }
    const warnings = [...result.keyword.warnings, ...result.vector.warnings, ...result.hybrid.warnings];
    for (const warning of warnings) lines.push(`   warning: ${warning.message}`);
  });
  lines.push(...formatConversation(report.conversation));
  return `${lines.join('\n')}\n`;
}

function describeFusion(fusion: HybridFusionMethod): string {
  if (fusion === 'rrf') return 'reciprocal rank fusion (k=60)';
  if (fusion === 'weighted') return 'the mean of min-max normalised scores';
  return 'the mean of min-max normalised scores plus an RRF bonus';
}

export const demoHelp = `Usage: zerda demo [query...] [options]

Indexes a small bundled corpus (English, Arabic and mixed passages with category, year and
language metadata) into a BM25 keyword index and into the in-memory vector store with the
hash embedder (no model, no network), then prints, for each query, the top hits of keyword,
vector and hybrid retrieval side by side, with each hybrid hit's rank and score in each branch.
Without queries it runs four sample queries: English, Arabic, mixed, and one with a metadata
filter.

Options:
  -k <n>             hits per query and retriever (default 3)
  --fusion <f>       rrf | weighted | weighted+rrf (default weighted+rrf)
  --filter <json>    a metadata filter for the queries given, for example
                     '{"lang": "en", "year": {"$gte": 2022}}'
  --json             print the results as JSON
  -h, --help         show this help

Exit codes: 0 success; 1 the demo failed; 2 the command was called wrongly (bad flag or value).

Examples:
  pnpm zerda demo
  pnpm zerda demo "reciprocal rank fusion" "القهوة العربية"
  pnpm zerda demo "vector search" --filter '{"lang": "en", "year": {"$gte": 2022}}' --fusion rrf
`;

/** `zerda demo` from command-line arguments; returns the exit code. */
export async function demoCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      k: { type: 'string', short: 'k' },
      fusion: { type: 'string' },
      filter: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    demoHelp,
  );
  if (values.help) {
    io.stdout(demoHelp);
    return 0;
  }
  if (positionals.some((query) => query.trim().length === 0))
    throw new UsageError('a query is empty', demoHelp);
  const fusion = values.fusion ?? 'weighted+rrf';
  if (!['rrf', 'weighted', 'weighted+rrf'].includes(fusion)) {
    throw new UsageError(`unknown fusion '${fusion}': expected rrf, weighted or weighted+rrf`, demoHelp);
  }
  let filter: FilterInput | undefined;
  if (values.filter !== undefined) {
    if (positionals.length === 0) throw new UsageError('--filter applies to the queries given', demoHelp);
    filter = readFilterOption(values.filter, demoHelp);
  }
  const report = await runDemo({
    queries:
      positionals.length > 0
        ? positionals.map((text) => ({ text, ...(filter ? { filter } : {}) }))
        : undefined,
    k: readNumber(values.k, 'k', demoHelp, { min: 1, integer: true }),
    fusion: fusion as HybridFusionMethod,
  });
  io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatDemoReport(report));
  return 0;
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}
