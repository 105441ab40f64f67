import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  type Analyzer,
  type BaseRetriever,
  type BeirDataset,
  DatasetError,
  DEFAULT_B,
  DEFAULT_K1,
  DEFAULT_METRICS,
  evaluateRun,
  type FusionConfig,
  type HybridFusionMethod,
  HybridRetriever,
  parseFusionConfig,
  type Run,
  type ScoreNormalization,
  type SearchResult,
  ZerdaError,
} from '@zerda/core';
import { loadBeirFolder, readTrecRun } from '@zerda/core/node';
import { namedAnalyzers } from '../../analyzers.js';
import { percentile } from '../../args.js';
import {
  buildKeywordRetriever,
  buildVectorRetriever,
  collectionChunks,
  preview,
  type VectorSettings,
  writeRunFile,
} from '../../collection.js';
import { UsageError } from '../../io.js';
import { renderEvalReport } from '../../report/eval-report.js';

/*
 * `zerda eval`, running: building the retrievers, running the judged queries, scoring a run;
 * the arguments are read in eval-args.ts, the report formatted (and the help) in eval-format.ts.
 */

/** The analysers `zerda eval --analyzer` knows by name. */
export const evalAnalyzers = namedAnalyzers;

export type EvalAnalyzerName = keyof typeof evalAnalyzers;

/** What is evaluated: BM25 alone, vector search alone, or both fused by the HybridRetriever. */
export type EvalMode = 'keyword' | 'vector' | 'hybrid';

export const evalModes: readonly EvalMode[] = ['keyword', 'vector', 'hybrid'];
export const evalFusions: readonly HybridFusionMethod[] = ['rrf', 'weighted', 'weighted+rrf'];

/**
 * Named BM25 settings: `library`, what Zerda serves by default (`BM25Index`'s k1 and b, the
 * default analyser), so that an evaluation measures what an application gets; `pyserini`,
 * Anserini's settings for BEIR (k1 0.9, b 0.4, Lucene's English analysis: the collections'
 * first reference column).
 */
export const EVAL_PRESETS = {
  library: { k1: DEFAULT_K1, b: DEFAULT_B, analyzer: 'default' },
  pyserini: { k1: 0.9, b: 0.4, analyzer: 'lucene-english' },
} as const satisfies Record<string, { k1: number; b: number; analyzer: EvalAnalyzerName }>;

export type EvalPresetName = keyof typeof EVAL_PRESETS;

/**
 * The library's BM25 settings (the `library` preset); the hash embedder's dimension; the
 * HybridRetriever's own default fusion.
 */
export const EVAL_DEFAULTS = {
  preset: 'library',
  k1: EVAL_PRESETS.library.k1,
  b: EVAL_PRESETS.library.b,
  depth: 100,
  analyzer: EVAL_PRESETS.library.analyzer,
  mode: 'keyword',
  fusion: 'weighted',
  hashDimension: 256,
  rrfK: 60,
} as const;

export interface EvalOptions {
  /** A folder in BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv or qrels.tsv). */
  folder: string;
  /** 'keyword' (default), 'vector' or 'hybrid'. */
  mode?: EvalMode;
  /** Named BM25 settings (default 'library', what Zerda serves); `k1`, `b` and `analyzer` override it. */
  preset?: EvalPresetName;
  /** BM25 term-frequency saturation (default: the preset's; 1.2 for 'library'). */
  k1?: number;
  /** BM25 length normalisation (default: the preset's; 0.75 for 'library'). */
  b?: number;
  /** An analyser name or an Analyzer (default: the preset's; 'default' for 'library'); also the hash embedder's. */
  analyzer?: EvalAnalyzerName | Analyzer;
  /** Documents retrieved per query (default 100; Recall@100 needs at least 100). */
  depth?: number;
  /** Hybrid fusion (default 'weighted', the HybridRetriever's default: min-max, weak-branch guard on). */
  fusion?: HybridFusionMethod;
  /** Candidates each hybrid branch fetches (default 2 x depth, the HybridRetriever's default). */
  branchK?: number;
  /** RRF's k in hybrid fusion (default 60). */
  rrfK?: number;
  /** Hybrid branch weights (default 1 each). */
  weights?: { keyword: number; vector: number };
  /**
   * A fusion setting (as `zerda tune` writes it, checked by `parseFusionConfig`) for hybrid mode,
   * in place of `fusion`, `branchK`, `rrfK` and `weights`; its `bm25` applies where `k1` and `b`
   * are not given.
   */
  fusionConfig?: FusionConfig;
  /** Where `fusionConfig` was read from, for the report. */
  fusionConfigPath?: string;
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
  /** BM25 (keyword and hybrid modes), with the preset its defaults came from. */
  keyword?: { preset: EvalPresetName; k1: number; b: number; analyzer: string };
  /** The vectors (vector and hybrid modes). */
  vector?: VectorSettings;
  /** The fusion (hybrid mode). */
  hybrid?: {
    fusion: HybridFusionMethod;
    /** Candidates per branch. */
    branchK: number;
    rrfK: number;
    normalization: ScoreNormalization;
    weights: { keyword: number; vector: number };
    /** The weak-branch guard is on. */
    guard: boolean;
    /** The fusion setting file read (`--fusion-config`). */
    configFile?: string;
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
  const presetName = options.preset ?? EVAL_DEFAULTS.preset;
  const preset = EVAL_PRESETS[presetName];
  if (preset === undefined) {
    throw new UsageError(
      `unknown preset '${presetName}': expected ${Object.keys(EVAL_PRESETS).join(' or ')}`,
    );
  }
  const k1 = options.k1 ?? options.fusionConfig?.bm25?.k1 ?? preset.k1;
  const b = options.b ?? options.fusionConfig?.bm25?.b ?? preset.b;
  const depth = options.depth ?? EVAL_DEFAULTS.depth;
  const analyzerOption = options.analyzer ?? preset.analyzer;
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
  if (keyword) settings.keyword = { preset: presetName, k1, b, analyzer: analyzerName };
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
    const config = options.fusionConfig;
    const hybrid =
      config === undefined
        ? new HybridRetriever({
            keyword,
            vector,
            fusion: options.fusion ?? EVAL_DEFAULTS.fusion,
            branchK: Math.max(depth, options.branchK ?? 2 * depth),
            ...(options.rrfK === undefined ? {} : { rrfK: options.rrfK }),
            weights: options.weights ?? { keyword: 1, vector: 1 },
          })
        : new HybridRetriever({
            keyword,
            vector,
            fusion: config,
            ...(config.depth === undefined ? { branchK: Math.max(depth, 2 * depth) } : {}),
          });
    const resolved = hybrid.fusionSettings;
    fusion = resolved.method;
    retriever = hybrid;
    settings.hybrid = {
      fusion,
      branchK: Math.max(depth, config?.depth ?? options.branchK ?? 2 * depth),
      rrfK: resolved.rrfK,
      normalization: resolved.normalization,
      weights: { keyword: resolved.weights.keyword ?? 1, vector: resolved.weights.vector ?? 1 },
      guard: resolved.guard !== false,
      ...(options.fusionConfigPath === undefined ? {} : { configFile: options.fusionConfigPath }),
    };
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

/**
 * Reads and checks a fusion setting file: a missing file is a DatasetError, a bad setting a
 * FusionConfigError naming the key (both exit 1 with the file named).
 */
export async function readFusionConfigFile(path: string): Promise<FusionConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason =
      error instanceof Error && 'code' in error && typeof error.code === 'string'
        ? error.code
        : String(error);
    throw new DatasetError({ path, message: `the fusion setting cannot be read (${reason})`, cause: error });
  }
  return parseFusionConfig(text, { path });
}

/** Writes the HTML report of evaluations; a file that cannot be written is a DatasetError naming it. */
export async function writeEvalReport(
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
