import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import {
  type Analyzer,
  type BaseRetriever,
  type BeirDataset,
  DatasetError,
  DEFAULT_METRICS,
  evaluateRun,
  type HybridFusionMethod,
  HybridRetriever,
  loadBeirFolder,
  type Run,
  readTrecRun,
  type SearchResult,
  ZerdaError,
} from '@zerda/core';
import { namedAnalyzers } from '../analyzers.js';
import { parseCommandArgs, percentile, readNumber } from '../args.js';
import {
  buildKeywordRetriever,
  buildVectorRetriever,
  collectionChunks,
  preview,
  type VectorSettings,
  writeRunFile,
} from '../collection.js';
import { type CliIo, UsageError } from '../io.js';
import { ProgressBar } from '../progress.js';
import { renderEvalReport } from '../report/eval-report.js';
import { readWeights } from './fuse.js';

/** The analysers `zerda eval --analyzer` knows by name. */
export const evalAnalyzers = namedAnalyzers;

export type EvalAnalyzerName = keyof typeof evalAnalyzers;

/** What is evaluated: BM25 alone, vector search alone, or both fused by the HybridRetriever. */
export type EvalMode = 'keyword' | 'vector' | 'hybrid';

export const evalModes: readonly EvalMode[] = ['keyword', 'vector', 'hybrid'];
export const evalFusions: readonly HybridFusionMethod[] = ['rrf', 'weighted', 'weighted+rrf'];

/**
 * Anserini's BM25 settings for BEIR (the README's first reference column); the hash embedder's
 * dimension; the HybridRetriever's own default fusion.
 */
export const EVAL_DEFAULTS = {
  k1: 0.9,
  b: 0.4,
  depth: 100,
  analyzer: 'lucene-english',
  mode: 'keyword',
  fusion: 'weighted+rrf',
  hashDimension: 256,
  rrfK: 60,
} as const;

export interface EvalOptions {
  /** A folder in BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv or qrels.tsv). */
  folder: string;
  /** 'keyword' (default), 'vector' or 'hybrid'. */
  mode?: EvalMode;
  /** BM25 term-frequency saturation (default 0.9). */
  k1?: number;
  /** BM25 length normalisation (default 0.4). */
  b?: number;
  /** An analyser name or an Analyzer (default 'lucene-english'); also the hash embedder's. */
  analyzer?: EvalAnalyzerName | Analyzer;
  /** Documents retrieved per query (default 100; Recall@100 needs at least 100). */
  depth?: number;
  /** Hybrid fusion (default 'weighted+rrf', the HybridRetriever's default). */
  fusion?: HybridFusionMethod;
  /** Candidates each hybrid branch fetches (default 2 x depth, the HybridRetriever's default). */
  branchK?: number;
  /** RRF's k in hybrid fusion (default 60). */
  rrfK?: number;
  /** Hybrid branch weights (default 1 each). */
  weights?: { keyword: number; vector: number };
  /**
   * Precomputed embeddings (JSON lines `{"_id", "vector"}`): with `queryEmbeddings`, this file
   * holds the document vectors; alone, every line says `"type": "doc"` or `"type": "query"`.
   * Without it, vectors come from Zerda's HashEmbedder.
   */
  embeddings?: string;
  /** Precomputed query vectors, one `{"_id", "vector"}` per query. */
  queryEmbeddings?: string;
  /** The HashEmbedder's dimension when no embeddings are given (default 256). */
  hashDimension?: number;
  /** Judgments split: `qrels/<split>.tsv` (default 'test'), falling back to `qrels.tsv`. */
  split?: string;
  /** An explicit judgments file. */
  qrelsPath?: string;
  /** Also write Zerda's run as a TREC run file here. */
  writeRunPath?: string;
  /** The tag of the TREC run file (default 'zerda-<mode>'). */
  runTag?: string;
}

/** The settings of an evaluation, as reported. */
export interface EvalSettings {
  /** Documents retrieved per query. */
  depth?: number;
  /** BM25 (keyword and hybrid modes). */
  keyword?: { k1: number; b: number; analyzer: string };
  /** The vectors (vector and hybrid modes). */
  vector?: VectorSettings;
  /** The fusion (hybrid mode). */
  hybrid?: {
    fusion: HybridFusionMethod;
    branchK: number;
    rrfK: number;
    normalization: 'minmax';
    weights: { keyword: number; vector: number };
  };
  /** The run file scored (`--run`). */
  run?: string;
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
  /** What was evaluated: a retrieval mode, or 'run' for a given run file. */
  mode: EvalMode | 'run';
  /** The hybrid fusion (hybrid mode only). */
  fusion?: HybridFusionMethod;
  'ndcg@10': number;
  'recall@100': number;
  'mrr@10': number;
  loadTimeMs: number;
  /** Building the indexes (BM25, and embedding and storing the vectors); not for 'run'. */
  indexTimeMs?: number;
  queryLatencyMs?: { p50: number; p99: number; mean: number };
  settings: EvalSettings;
  /** Where Zerda's run was written, when it was asked for. */
  runFile?: string;
  warnings: string[];
}

/** Each evaluated query's nDCG@10, Recall@100 and MRR@10, by query id. */
export type PerQueryMetrics = Map<string, Record<string, number>>;

/** An evaluation with each query's metrics (for the HTML report). */
export interface DetailedEvaluation {
  report: EvalReport;
  perQuery: PerQueryMetrics;
  dataset: BeirDataset;
}

/** What `runEvalDetailed` and `scoreRunDetailed` take beyond the options. */
export interface EvalRunContext {
  /** A collection loaded already (to evaluate several modes on one load). */
  dataset?: BeirDataset;
  /** Called after each query is run. */
  onQuery?: (done: number, total: number) => void;
}

/**
 * Evaluates Zerda on a BEIR-layout folder: BM25 (title and text as one field), vector search
 * (hash embeddings or the user's own) or both fused by the HybridRetriever; runs every judged
 * query and scores the run as trec_eval does (nDCG@10, Recall@100, MRR@10).
 */
export async function runEval(options: EvalOptions): Promise<EvalReport> {
  return (await runEvalDetailed(options)).report;
}

/** `runEval`, with each query's metrics and the collection loaded. */
export async function runEvalDetailed(
  options: EvalOptions,
  context: EvalRunContext = {},
): Promise<DetailedEvaluation> {
  const mode = options.mode ?? EVAL_DEFAULTS.mode;
  if (!evalModes.includes(mode)) throw new UsageError(`unknown mode '${mode}'`);
  const k1 = options.k1 ?? EVAL_DEFAULTS.k1;
  const b = options.b ?? EVAL_DEFAULTS.b;
  const depth = options.depth ?? EVAL_DEFAULTS.depth;
  const analyzerOption = options.analyzer ?? EVAL_DEFAULTS.analyzer;
  const analyzer = typeof analyzerOption === 'string' ? evalAnalyzers[analyzerOption]() : analyzerOption;
  const analyzerName = typeof analyzerOption === 'string' ? analyzerOption : analyzerOption.name;

  const loadStarted = performance.now();
  const dataset =
    context.dataset ??
    (await loadBeirFolder(options.folder, {
      split: options.split,
      qrelsPath: options.qrelsPath,
    }));
  const loadTimeMs = performance.now() - loadStarted;
  const warnings = [...dataset.warnings];

  const indexStarted = performance.now();
  const chunks = collectionChunks(dataset);
  const settings: EvalSettings = { depth };
  const keyword = mode === 'vector' ? undefined : buildKeywordRetriever(chunks, { analyzer, k1, b });
  if (keyword) settings.keyword = { k1, b, analyzer: analyzerName };
  let vector: BaseRetriever | undefined;
  if (mode !== 'keyword') {
    const built = await buildVectorRetriever(
      dataset,
      chunks,
      options.embeddings === undefined
        ? { kind: 'hash', dimension: options.hashDimension ?? EVAL_DEFAULTS.hashDimension, analyzer }
        : { kind: 'file', documents: options.embeddings, queries: options.queryEmbeddings },
      dataset.judgedQueries,
    );
    vector = built.retriever;
    settings.vector = built.settings;
    warnings.push(...built.warnings);
  }
  let retriever: BaseRetriever;
  let fusion: HybridFusionMethod | undefined;
  if (mode === 'hybrid') {
    fusion = options.fusion ?? EVAL_DEFAULTS.fusion;
    const branchK = Math.max(depth, options.branchK ?? 2 * depth);
    const rrfK = options.rrfK ?? EVAL_DEFAULTS.rrfK;
    const weights = options.weights ?? { keyword: 1, vector: 1 };
    retriever = new HybridRetriever({ keyword, vector, fusion, branchK, rrfK, weights });
    settings.hybrid = { fusion, branchK, rrfK, normalization: 'minmax', weights };
  } else {
    retriever = (keyword ?? vector) as BaseRetriever;
  }
  const indexTimeMs = performance.now() - indexStarted;

  // Warm-up: the first queries, untimed, so that latency measures the compiled search.
  for (const query of dataset.judgedQueries.slice(0, 10)) await retrieveSafely(retriever, query.text, depth);
  const run: Run = new Map();
  const latencies: number[] = [];
  const notes = new Map<string, string[]>();
  for (const query of dataset.judgedQueries) {
    context.onQuery?.(run.size, dataset.judgedQueries.length);
    const started = performance.now();
    const { result, error } = await retrieveSafely(retriever, query.text, depth);
    latencies.push(performance.now() - started);
    if (error !== undefined) {
      // A query the store cannot search (a zero vector, for example): it scores 0, and says so.
      note(notes, error.message, query.id);
      run.set(query.id, []);
      continue;
    }
    for (const warning of result.warnings) note(notes, warning.message.replace(/\s+/gu, ' '), query.id);
    run.set(
      query.id,
      result.hits.map((hit) => ({ docId: hit.chunk.id, score: hit.score })),
    );
  }
  for (const [message, queryIds] of notes) {
    warnings.push(
      `${message} (query ${preview(
        queryIds.map((id) => `'${id}'`),
        3,
      )})`,
    );
  }
  const evaluation = evaluateRun(run, dataset.qrels, {
    metrics: DEFAULT_METRICS,
    queries: dataset.judgedQueries.map((q) => q.id),
  });
  let runFile: string | undefined;
  if (options.writeRunPath) {
    await writeRunFile(options.writeRunPath, run, {
      tag: options.runTag ?? `zerda-${mode}${fusion ? `-${fusion}` : ''}`,
      depth,
    });
    runFile = options.writeRunPath;
  }
  const mean = latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length);
  const report: EvalReport = {
    ...describeDataset(dataset),
    mode,
    ...(fusion === undefined ? {} : { fusion }),
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
    settings,
    ...(runFile === undefined ? {} : { runFile }),
    warnings,
  };
  context.onQuery?.(run.size, dataset.judgedQueries.length);
  return { report, perQuery: evaluation.perQuery, dataset };
}

export interface ScoreRunOptions {
  /** A folder in BEIR layout, for its judgments and queries. */
  folder: string;
  /** The TREC run file to score. */
  runPath: string;
  split?: string;
  qrelsPath?: string;
}

/**
 * Scores a TREC run file against a BEIR folder's judgments, as trec_eval does (documents sorted by
 * score, then id descending; every judged query of queries.jsonl counts, a query the run lacks
 * scores 0).
 */
export async function scoreRun(options: ScoreRunOptions): Promise<EvalReport> {
  return (await scoreRunDetailed(options)).report;
}

/** `scoreRun`, with each query's metrics and the collection loaded. */
export async function scoreRunDetailed(
  options: ScoreRunOptions,
  context: EvalRunContext = {},
): Promise<DetailedEvaluation> {
  const loadStarted = performance.now();
  const dataset =
    context.dataset ??
    (await loadBeirFolder(options.folder, {
      split: options.split,
      qrelsPath: options.qrelsPath,
    }));
  const run = await readTrecRun(options.runPath);
  const loadTimeMs = performance.now() - loadStarted;
  const warnings = [...dataset.warnings];
  const queryIds = dataset.judgedQueries.map((q) => q.id);
  const evaluation = evaluateRun(run, dataset.qrels, { metrics: DEFAULT_METRICS, queries: queryIds });
  if (run.size === 0) warnings.push(`${options.runPath} holds no results`);
  else if (evaluation.missingFromRun.length > 0) {
    warnings.push(
      `${evaluation.missingFromRun.length} judged query(ies) have no results in the run and score 0: ${preview(evaluation.missingFromRun)}`,
    );
  }
  const judged = new Set(queryIds);
  const unjudged = [...run.keys()].filter((id) => !judged.has(id));
  if (unjudged.length > 0) {
    warnings.push(
      `${unjudged.length} query(ies) of the run have no relevant judgment (or are not in queries.jsonl) and were not scored: ${preview(unjudged)}`,
    );
  }
  const documentIds = new Set(dataset.corpus.map((d) => d.id));
  let unknown = 0;
  for (const entries of run.values())
    for (const entry of entries) if (!documentIds.has(entry.docId)) unknown++;
  if (unknown > 0) warnings.push(`${unknown} line(s) of the run name documents that are not in corpus.jsonl`);
  const report: EvalReport = {
    ...describeDataset(dataset),
    mode: 'run',
    'ndcg@10': evaluation.metrics['ndcg@10'] ?? 0,
    'recall@100': evaluation.metrics['recall@100'] ?? 0,
    'mrr@10': evaluation.metrics['mrr@10'] ?? 0,
    loadTimeMs: round(loadTimeMs, 3),
    settings: { run: options.runPath },
    warnings,
  };
  return { report, perQuery: evaluation.perQuery, dataset };
}

function describeDataset(dataset: BeirDataset) {
  return {
    collection: dataset.name,
    folder: dataset.folder,
    qrels: dataset.files.qrels,
    documents: dataset.corpus.length,
    queries: dataset.queries.length,
    judgedQueries: dataset.judgedQueries.length,
  };
}

async function retrieveSafely(
  retriever: BaseRetriever,
  query: string,
  k: number,
): Promise<{ result: SearchResult; error?: undefined } | { result?: undefined; error: ZerdaError }> {
  try {
    return { result: await retriever.retrieve(query, { k }) };
  } catch (error) {
    if (ZerdaError.isInstance(error)) return { error };
    throw error;
  }
}

function note(notes: Map<string, string[]>, message: string, queryId: string): void {
  const ids = notes.get(message);
  if (ids) ids.push(queryId);
  else notes.set(message, [queryId]);
}

/** A readable table of an evaluation. */
export function formatEvalReport(report: EvalReport): string {
  const { settings } = report;
  const rows: Array<[string, string]> = [
    ['collection', `${report.collection} (${report.folder})`],
    ['documents', report.documents.toLocaleString('en-US')],
    ['queries', `${report.judgedQueries} judged of ${report.queries}`],
    ['mode', report.mode === 'hybrid' ? `hybrid (${report.fusion})` : report.mode],
  ];
  if (settings.run) rows.push(['run', settings.run]);
  if (settings.keyword) {
    const { k1, b, analyzer } = settings.keyword;
    rows.push(['BM25', `k1=${k1} b=${b}, analyzer ${analyzer}`]);
  }
  if (settings.vector) {
    const v = settings.vector;
    rows.push([
      'vectors',
      v.embedder === 'hash'
        ? `HashEmbedder, dimension ${v.dimension}, ${v.metric}`
        : `${v.documentVectors}${v.queryVectors ? ` + ${v.queryVectors}` : ''}, dimension ${v.dimension}, ${v.metric}`,
    ]);
  }
  if (settings.hybrid) {
    const h = settings.hybrid;
    rows.push([
      'fusion',
      `${h.fusion}, ${h.branchK} candidates per branch, weights keyword ${h.weights.keyword} vector ${h.weights.vector}${h.fusion === 'weighted' ? '' : `, RRF k=${h.rrfK}`}`,
    ]);
  }
  if (settings.depth !== undefined) rows.push(['depth', String(settings.depth)]);
  rows.push(
    ['nDCG@10', report['ndcg@10'].toFixed(4)],
    ['Recall@100', report['recall@100'].toFixed(4)],
    ['MRR@10', report['mrr@10'].toFixed(4)],
  );
  if (report.indexTimeMs !== undefined) rows.push(['index time', `${report.indexTimeMs.toFixed(1)} ms`]);
  if (report.queryLatencyMs) {
    rows.push([
      'query latency',
      `p50 ${report.queryLatencyMs.p50.toFixed(3)} ms, p99 ${report.queryLatencyMs.p99.toFixed(3)} ms`,
    ]);
  }
  if (report.runFile) rows.push(['run file', report.runFile]);
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`);
  for (const warning of report.warnings) lines.push(`  warning: ${warning}`);
  return `${lines.join('\n')}\n`;
}

export const evalHelp = `Usage: zerda eval <folder> [options]
       zerda eval <folder> --run <file> [--json]

Evaluates retrieval on a test collection in BEIR layout (corpus.jsonl, queries.jsonl,
qrels/test.tsv or qrels.tsv). Title and text are indexed as one field; every query with at
least one relevant judgment is run; nDCG@10 (linear gain), Recall@100 and MRR@10 are computed
as trec_eval computes them. With --run, scores a TREC run file instead of retrieving.

Modes:
  keyword   Zerda's BM25 (default)
  vector    an in-memory vector store (cosine) searched with each query's vector; vectors
            come from --embeddings, or from Zerda's HashEmbedder (no model needed)
  hybrid    both, fused by the HybridRetriever (each branch fetches --branch-k candidates)

Options:
  --mode <m>               keyword | vector | hybrid (default ${EVAL_DEFAULTS.mode})
  --k1 <n>                 BM25 term-frequency saturation (default ${EVAL_DEFAULTS.k1})
  --b <n>                  BM25 length normalisation, 0 to 1 (default ${EVAL_DEFAULTS.b})
  --analyzer <name>        ${Object.keys(evalAnalyzers).join(' | ')} (default ${EVAL_DEFAULTS.analyzer}); BM25's, and
                           the hash embedder's
  --depth <n>              documents retrieved per query (default ${EVAL_DEFAULTS.depth})
  --embeddings <file>      your own vectors, JSON lines {"_id": "...", "vector": [...]}: one line
                           per document of corpus.jsonl and per judged query of queries.jsonl.
                           Documents and queries may share ids, so in one file every line says
                           "type": "doc" or "type": "query"; or use --query-embeddings
  --query-embeddings <f>   the query vectors in a file of their own; --embeddings then holds
                           the document vectors only (no "type" needed)
  --dimension <n>          the hash embedder's dimension, without --embeddings (default ${EVAL_DEFAULTS.hashDimension})
  --fusion <f>             ${evalFusions.join(' | ')} (hybrid; default ${EVAL_DEFAULTS.fusion})
  --branch-k <n>           candidates each hybrid branch fetches (default 2 x depth)
  --rrf-k <n>              RRF's k in hybrid fusion (default ${EVAL_DEFAULTS.rrfK})
  --weights <kw,vec>       hybrid branch weights (default 1,1)
  --split <name>           read qrels/<name>.tsv (default test; falls back to qrels.tsv)
  --qrels <file>           read the judgments from this file instead
  --write-run <file>       also write Zerda's run as a TREC run file (qid Q0 docid rank score tag)
  --run <file>             score this TREC run file instead of retrieving (no other options
                           but --split, --qrels, --report and --json)
  --report <file.html>     also write a self-contained HTML report (no external request): the
                           metrics table and charts of keyword vs vector vs hybrid (all three
                           are run, with the options given) and of per-query nDCG@10; with --run,
                           of that run
  --json                   print a JSON object (with the mode, fusion and settings) instead of
                           a table
  -h, --help               show this help

A vector that is missing, of the wrong length or holds a value that is not a finite number is
an error that names the file, the line and the id.

Exit codes: 0 success; 1 the evaluation failed (a missing folder or file, a malformed line: the
message names the file and the line); 2 the command was called wrongly (bad flag or value).

Examples:
  pnpm zerda eval ../shared/data/cisi
  pnpm zerda eval ../shared/data/cranfield --k1 1.2 --b 0.75 --json
  pnpm zerda eval ../shared/data/cisi --mode vector
  pnpm zerda eval ../shared/data/cisi --mode hybrid --fusion rrf --json
  pnpm zerda eval ../shared/data/cisi --mode hybrid --embeddings docs.jsonl --query-embeddings queries.jsonl
  pnpm zerda eval ../shared/data/cisi --mode hybrid --write-run hybrid.run
  pnpm zerda eval ../shared/data/cisi --run hybrid.run --json
  pnpm zerda eval ../shared/data/cranfield --report cranfield.html
`;

/** `zerda eval` from command-line arguments; returns the exit code. */
export async function evalCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      mode: { type: 'string' },
      k1: { type: 'string' },
      b: { type: 'string' },
      analyzer: { type: 'string' },
      depth: { type: 'string' },
      embeddings: { type: 'string' },
      'query-embeddings': { type: 'string' },
      dimension: { type: 'string' },
      fusion: { type: 'string' },
      'branch-k': { type: 'string' },
      'rrf-k': { type: 'string' },
      weights: { type: 'string' },
      split: { type: 'string' },
      qrels: { type: 'string' },
      'write-run': { type: 'string' },
      run: { type: 'string' },
      report: { type: 'string' },
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
  const folder = positionals[0] as string;
  const print = (report: EvalReport) =>
    io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatEvalReport(report));

  if (values.run !== undefined) {
    const retrievalFlags = [
      'mode',
      'k1',
      'b',
      'analyzer',
      'depth',
      'embeddings',
      'query-embeddings',
      'dimension',
      'fusion',
      'branch-k',
      'rrf-k',
      'weights',
      'write-run',
    ] as const;
    const extra = retrievalFlags.filter((flag) => values[flag] !== undefined);
    if (extra.length > 0) {
      throw new UsageError(
        `--run scores a given run file; ${extra.map((flag) => `--${flag}`).join(', ')} cannot go with it (use --write-run to write the run Zerda produces)`,
        evalHelp,
      );
    }
    const bar = new ProgressBar(io);
    const scored = await scoreRunDetailed({
      folder,
      runPath: values.run,
      split: values.split,
      qrelsPath: values.qrels,
    });
    print(scored.report);
    if (values.report !== undefined) {
      await writeEvalReport(values.report, [{ ...scored, name: basename(values.run) }], scored.dataset, argv);
      bar.log(`report written to ${values.report}`);
    }
    return 0;
  }

  const mode = values.mode ?? EVAL_DEFAULTS.mode;
  if (!evalModes.includes(mode as EvalMode)) {
    throw new UsageError(`unknown mode '${mode}': expected ${evalModes.join(', ')}`, evalHelp);
  }
  const analyzer = values.analyzer ?? EVAL_DEFAULTS.analyzer;
  if (!(analyzer in evalAnalyzers)) {
    throw new UsageError(
      `unknown analyzer '${analyzer}': expected ${Object.keys(evalAnalyzers).join(' or ')}`,
      evalHelp,
    );
  }
  const fusion = values.fusion;
  if (fusion !== undefined && !evalFusions.includes(fusion as HybridFusionMethod)) {
    throw new UsageError(`unknown fusion '${fusion}': expected ${evalFusions.join(', ')}`, evalHelp);
  }
  const only = (flags: ReadonlyArray<keyof typeof values>, modes: readonly EvalMode[]) => {
    for (const flag of flags) {
      if (values[flag] !== undefined && !modes.includes(mode as EvalMode)) {
        throw new UsageError(`--${flag} applies to --mode ${modes.join(' or ')}, not ${mode}`, evalHelp);
      }
    }
  };
  // With --report every mode runs, so every mode's flags apply.
  if (values.report === undefined) {
    only(['k1', 'b'], ['keyword', 'hybrid']);
    only(['embeddings', 'query-embeddings', 'dimension'], ['vector', 'hybrid']);
    only(['fusion', 'branch-k', 'rrf-k', 'weights'], ['hybrid']);
  }
  if (values['query-embeddings'] !== undefined && values.embeddings === undefined) {
    throw new UsageError('--query-embeddings needs --embeddings (the document vectors)', evalHelp);
  }
  if (values.dimension !== undefined && values.embeddings !== undefined) {
    throw new UsageError(
      "--dimension sets the hash embedder's; with --embeddings the vectors set it",
      evalHelp,
    );
  }
  if (values['rrf-k'] !== undefined && fusion === 'weighted') {
    throw new UsageError('--rrf-k does not apply to --fusion weighted', evalHelp);
  }
  const depth = readNumber(values.depth, 'depth', evalHelp, { min: 1, integer: true });
  const branchK = readNumber(values['branch-k'], 'branch-k', evalHelp, { min: 1, integer: true });
  if (branchK !== undefined && branchK < (depth ?? EVAL_DEFAULTS.depth)) {
    throw new UsageError(
      `--branch-k must be at least the depth (${depth ?? EVAL_DEFAULTS.depth}), got ${branchK}`,
      evalHelp,
    );
  }
  const weights = readWeights(values.weights, 2, 'branch: keyword,vector', evalHelp);
  const options: EvalOptions = {
    folder,
    mode: mode as EvalMode,
    k1: readNumber(values.k1, 'k1', evalHelp, { min: 0 }),
    b: readNumber(values.b, 'b', evalHelp, { min: 0, max: 1 }),
    depth,
    analyzer: analyzer as EvalAnalyzerName,
    fusion: fusion as HybridFusionMethod | undefined,
    branchK,
    rrfK: readNumber(values['rrf-k'], 'rrf-k', evalHelp, { min: 0 }),
    weights: weights && { keyword: weights[0] as number, vector: weights[1] as number },
    embeddings: values.embeddings,
    queryEmbeddings: values['query-embeddings'],
    hashDimension: readNumber(values.dimension, 'dimension', evalHelp, {
      min: 1,
      max: 65_536,
      integer: true,
    }),
    split: values.split,
    qrelsPath: values.qrels,
    writeRunPath: values['write-run'],
  };
  const bar = new ProgressBar(io);
  const onQuery = (label: string) => (done: number, total: number) =>
    bar.update(
      `evaluating ${label}`,
      total > 0 ? done / total : undefined,
      `${done}/${total} queries`,
      done === total,
    );
  let detailed: DetailedEvaluation;
  try {
    detailed = await runEvalDetailed(options, { onQuery: onQuery(mode) });
  } finally {
    bar.clear();
  }
  print(detailed.report);
  if (values.report !== undefined) {
    // The report compares the three modes: run the two not run yet on the same collection.
    const results = new Map<EvalMode, DetailedEvaluation>([[mode as EvalMode, detailed]]);
    try {
      for (const other of evalModes) {
        if (results.has(other)) continue;
        const { writeRunPath: _, ...rest } = options;
        results.set(
          other,
          await runEvalDetailed(
            { ...rest, mode: other },
            { dataset: detailed.dataset, onQuery: onQuery(other) },
          ),
        );
      }
    } finally {
      bar.clear();
    }
    await writeEvalReport(
      values.report,
      evalModes.map((m) => ({ ...(results.get(m) as DetailedEvaluation), name: m })),
      detailed.dataset,
      argv,
    );
    bar.log(`report written to ${values.report}`);
  }
  return 0;
}

/** Writes the HTML report of evaluations; a file that cannot be written is a DatasetError naming it. */
async function writeEvalReport(
  path: string,
  series: ReadonlyArray<DetailedEvaluation & { name: string }>,
  dataset: BeirDataset,
  argv: readonly string[],
): Promise<void> {
  const page = renderEvalReport({
    series: series.map(({ name, report, perQuery }) => ({ name, report, perQuery })),
    queries: new Map(dataset.queries.map((query) => [query.id, query.text])),
    command: `zerda eval ${argv.join(' ')}`,
  });
  try {
    await mkdir(dirname(resolve(path)), { recursive: true });
    await writeFile(path, page);
  } catch (error) {
    const reason =
      error instanceof Error && 'code' in error && typeof error.code === 'string'
        ? error.code
        : String(error);
    throw new DatasetError({ path, message: `the report cannot be written (${reason})`, cause: error });
  }
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
