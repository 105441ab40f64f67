import {
  type Analyzer,
  BM25Index,
  beirDocumentText,
  DEFAULT_METRICS,
  defaultAnalyzer,
  evaluateRun,
  loadBeirFolder,
  luceneEnglishAnalyzer,
  type Run,
  writeTrecRun,
} from '@zerda/core';
import { parseCommandArgs, percentile, readNumber } from '../args.js';
import { type CliIo, UsageError } from '../io.js';

/** The analysers `zerda eval --analyzer` knows by name. */
export const evalAnalyzers = {
  /** Lucene's English analysis: 33 stop words, possessive removal, Porter stemming. */
  'lucene-english': () => luceneEnglishAnalyzer,
  /** Zerda's default analyser. */
  default: () => defaultAnalyzer,
} as const satisfies Record<string, () => Analyzer>;

export type EvalAnalyzerName = keyof typeof evalAnalyzers;

/** Anserini's BM25 settings for BEIR; the README's first reference column. */
export const EVAL_DEFAULTS = { k1: 0.9, b: 0.4, depth: 100, analyzer: 'lucene-english' } as const;

export interface EvalOptions {
  /** A folder in BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv or qrels.tsv). */
  folder: string;
  /** BM25 term-frequency saturation (default 0.9). */
  k1?: number;
  /** BM25 length normalisation (default 0.4). */
  b?: number;
  /** An analyser name or an Analyzer (default 'lucene-english'). */
  analyzer?: EvalAnalyzerName | Analyzer;
  /** Documents retrieved per query (default 100; Recall@100 needs at least 100). */
  depth?: number;
  /** Judgments split: `qrels/<split>.tsv` (default 'test'), falling back to `qrels.tsv`. */
  split?: string;
  /** An explicit judgments file. */
  qrelsPath?: string;
  /** Also write the run as a TREC run file here. */
  runPath?: string;
  /** The tag of the TREC run file (default 'zerda-bm25'). */
  runTag?: string;
}

/** What `zerda eval --json` prints. */
export interface EvalReport {
  collection: string;
  folder: string;
  qrels: string;
  documents: number;
  /** Queries in queries.jsonl. */
  queries: number;
  /** Queries evaluated: those with at least one relevant judgment. */
  judgedQueries: number;
  'ndcg@10': number;
  'recall@100': number;
  'mrr@10': number;
  loadTimeMs: number;
  indexTimeMs: number;
  queryLatencyMs: { p50: number; p99: number; mean: number };
  settings: { k1: number; b: number; analyzer: string; depth: number };
  /** Where the TREC run file was written, when it was asked for. */
  runFile?: string;
  warnings: string[];
}

/**
 * Evaluates Zerda's BM25 on a BEIR-layout folder: indexes title and text as one field, runs
 * every judged query, and scores the run as trec_eval does (nDCG@10, Recall@100, MRR@10).
 */
export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const k1 = options.k1 ?? EVAL_DEFAULTS.k1;
  const b = options.b ?? EVAL_DEFAULTS.b;
  const depth = options.depth ?? EVAL_DEFAULTS.depth;
  const analyzerOption = options.analyzer ?? EVAL_DEFAULTS.analyzer;
  const analyzer = typeof analyzerOption === 'string' ? evalAnalyzers[analyzerOption]() : analyzerOption;
  const analyzerName = typeof analyzerOption === 'string' ? analyzerOption : analyzerOption.name;

  const loadStarted = performance.now();
  const dataset = await loadBeirFolder(options.folder, {
    split: options.split,
    qrelsPath: options.qrelsPath,
  });
  const loadTimeMs = performance.now() - loadStarted;

  const index = new BM25Index({ analyzer, k1, b });
  const documents = dataset.corpus.map((document) => ({ id: document.id, text: beirDocumentText(document) }));
  const indexStarted = performance.now();
  index.add(documents);
  const indexTimeMs = performance.now() - indexStarted;

  // Warm-up: the first queries, untimed, so that latency measures the compiled search.
  for (const query of dataset.judgedQueries.slice(0, 10)) index.search(query.text, depth);
  const run: Run = new Map();
  const latencies: number[] = [];
  for (const query of dataset.judgedQueries) {
    const started = performance.now();
    const hits = index.search(query.text, depth);
    latencies.push(performance.now() - started);
    run.set(
      query.id,
      hits.map((hit) => ({ docId: hit.id, score: hit.score })),
    );
  }
  const evaluation = evaluateRun(run, dataset.qrels, {
    metrics: DEFAULT_METRICS,
    queries: dataset.judgedQueries.map((q) => q.id),
  });
  let runFile: string | undefined;
  if (options.runPath) {
    await writeTrecRun(options.runPath, run, { tag: options.runTag ?? 'zerda-bm25', depth });
    runFile = options.runPath;
  }
  const mean = latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length);
  return {
    collection: dataset.name,
    folder: dataset.folder,
    qrels: dataset.files.qrels,
    documents: dataset.corpus.length,
    queries: dataset.queries.length,
    judgedQueries: dataset.judgedQueries.length,
    'ndcg@10': evaluation.metrics['ndcg@10'] ?? 0,
    'recall@100': evaluation.metrics['recall@100'] ?? 0,
    'mrr@10': evaluation.metrics['mrr@10'] ?? 0,
    loadTimeMs: round(loadTimeMs, 3),
    indexTimeMs: round(indexTimeMs, 3),
    queryLatencyMs: {
      p50: round(percentile(latencies, 50), 4),
      p99: round(percentile(latencies, 99), 4),
      mean: round(mean, 4),
    },
    settings: { k1, b, analyzer: analyzerName, depth },
    ...(runFile === undefined ? {} : { runFile }),
    warnings: dataset.warnings,
  };
}

/** A readable table of an evaluation. */
export function formatEvalReport(report: EvalReport): string {
  const { settings } = report;
  const rows: Array<[string, string]> = [
    ['collection', `${report.collection} (${report.folder})`],
    ['documents', report.documents.toLocaleString('en-US')],
    ['queries', `${report.judgedQueries} judged of ${report.queries}`],
    [
      'settings',
      `BM25 k1=${settings.k1} b=${settings.b}, analyzer ${settings.analyzer}, depth ${settings.depth}`,
    ],
    ['nDCG@10', report['ndcg@10'].toFixed(4)],
    ['Recall@100', report['recall@100'].toFixed(4)],
    ['MRR@10', report['mrr@10'].toFixed(4)],
    ['index time', `${report.indexTimeMs.toFixed(1)} ms`],
    [
      'query latency',
      `p50 ${report.queryLatencyMs.p50.toFixed(3)} ms, p99 ${report.queryLatencyMs.p99.toFixed(3)} ms`,
    ],
  ];
  if (report.runFile) rows.push(['run file', report.runFile]);
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`);
  for (const warning of report.warnings) lines.push(`  warning: ${warning}`);
  return `${lines.join('\n')}\n`;
}

export const evalHelp = `Usage: zerda eval <folder> [options]

Evaluates Zerda's BM25 on a test collection in BEIR layout (corpus.jsonl, queries.jsonl,
qrels/test.tsv or qrels.tsv). Title and text are indexed as one field; every query with at
least one relevant judgment is run; nDCG@10 (linear gain), Recall@100 and MRR@10 are computed
as trec_eval computes them.

Options:
  --k1 <n>           BM25 term-frequency saturation (default ${EVAL_DEFAULTS.k1})
  --b <n>            BM25 length normalisation, 0 to 1 (default ${EVAL_DEFAULTS.b})
  --analyzer <name>  ${Object.keys(evalAnalyzers).join(' | ')} (default ${EVAL_DEFAULTS.analyzer})
  --depth <n>        documents retrieved per query (default ${EVAL_DEFAULTS.depth})
  --split <name>     read qrels/<name>.tsv (default test; falls back to qrels.tsv)
  --qrels <file>     read the judgments from this file instead
  --run <file>       also write the run as a TREC run file (qid Q0 docid rank score tag)
  --json             print a JSON object instead of a table
  -h, --help         show this help

Examples:
  pnpm zerda eval ../shared/data/cisi
  pnpm zerda eval ../shared/data/cranfield --k1 1.2 --b 0.75 --json
`;

/** `zerda eval` from command-line arguments; returns the exit code. */
export async function evalCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      k1: { type: 'string' },
      b: { type: 'string' },
      analyzer: { type: 'string' },
      depth: { type: 'string' },
      split: { type: 'string' },
      qrels: { type: 'string' },
      run: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    evalHelp,
  );
  if (values.help) {
    io.stdout(evalHelp);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'missing the collection folder'
        : `expected one folder, got ${positionals.length}`,
      evalHelp,
    );
  }
  const analyzer = values.analyzer ?? EVAL_DEFAULTS.analyzer;
  if (!(analyzer in evalAnalyzers)) {
    throw new UsageError(
      `unknown analyzer '${analyzer}': expected ${Object.keys(evalAnalyzers).join(' or ')}`,
      evalHelp,
    );
  }
  const report = await runEval({
    folder: positionals[0] as string,
    k1: readNumber(values.k1, 'k1', evalHelp, { min: 0 }),
    b: readNumber(values.b, 'b', evalHelp, { min: 0, max: 1 }),
    depth: readNumber(values.depth, 'depth', evalHelp, { min: 1, integer: true }),
    analyzer: analyzer as EvalAnalyzerName,
    split: values.split,
    qrelsPath: values.qrels,
    runPath: values.run,
  });
  io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatEvalReport(report));
  return 0;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
