import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  type Analyzer,
  type BaseRetriever,
  DatasetError,
  type MeanAndSpread,
  MIN_TUNING_QUERIES,
  type TuneFusionResult,
  type TuningGrid,
  type TuningQuery,
  tuneFusion,
  ZerdaError,
} from '@zerda/core';
import { loadBeirFolder } from '@zerda/core/node';
import { namedAnalyzers } from '../../analyzers.js';
import { buildKeywordRetriever, buildVectorRetriever, collectionChunks } from '../../collection.js';
import { UsageError } from '../../io.js';
import { EVAL_PRESETS } from '../eval/eval-run.js';

/** Defaults of `zerda tune`: `zerda eval`'s BM25 (the library's settings) and hash embedder, 5 folds, seed 1. */
export const TUNE_DEFAULTS = {
  k1: EVAL_PRESETS.library.k1,
  b: EVAL_PRESETS.library.b,
  depth: 100,
  analyzer: EVAL_PRESETS.library.analyzer,
  hashDimension: 256,
  folds: 5,
  seed: 1,
} as const;

export interface TuneOptions {
  /** A folder in BEIR layout with judgments. */
  folder: string;
  k1?: number;
  b?: number;
  analyzer?: keyof typeof namedAnalyzers;
  /** Hits per query (default 100): Recall@depth, and the branch depths tried (depth, 2x, 4x). */
  depth?: number;
  /** Precomputed embeddings, as `zerda eval --embeddings` takes them (default: the hash embedder). */
  embeddings?: string;
  queryEmbeddings?: string;
  hashDimension?: number;
  folds?: number;
  seed?: number;
  split?: string;
  qrelsPath?: string;
  /** Where to write the chosen fusion setting (JSON). */
  out?: string;
  /**
   * Also choose BM25's k1 and b (from `BM25_GRID`, or these pairs): the fusion search runs for
   * each pair, and the pair whose cross-validated nDCG@10 is highest is kept. Not with k1 or b.
   */
  tuneBm25?: boolean | ReadonlyArray<{ k1: number; b: number }>;
  grid?: TuningGrid;
}

/** The BM25 settings `zerda tune --tune-bm25` tries. */
export const BM25_GRID: ReadonlyArray<{ k1: number; b: number }> = [
  { k1: 0.9, b: 0.4 },
  { k1: 1.2, b: 0.75 },
  { k1: 0.9, b: 0.75 },
  { k1: 1.2, b: 0.4 },
  { k1: 1.5, b: 0.6 },
];

/** What `zerda tune --json` prints. */
export interface TuneReport extends TuneFusionResult {
  /** With `--tune-bm25`: each BM25 setting tried, its tuned fusion's and keyword's held-out nDCG@10. */
  bm25Search?: Array<{ k1: number; b: number; tuned: MeanAndSpread; keyword: MeanAndSpread }>;
  collection: string;
  folder: string;
  documents: number;
  judgedQueries: number;
  settingsFile?: string;
  /** Running each branch once per query, and searching the settings. */
  timeMs: { branches: number; search: number };
}

export interface TuneContext {
  /** Progress: a phase and a fraction. */
  onProgress?: (phase: string, done: number, total: number) => void;
}

/**
 * Tunes the fusion of keyword and vector retrieval on a BEIR folder's judged queries: each
 * branch runs once per query, as deep as the deepest setting tried, then every fusion setting
 * of the grid is scored over those cached candidate lists, with k-fold cross-validation.
 */
export async function runTune(options: TuneOptions, context: TuneContext = {}): Promise<TuneReport> {
  const dataset = await loadBeirFolder(options.folder, {
    split: options.split,
    qrelsPath: options.qrelsPath,
  });
  const queries = dataset.judgedQueries;
  if (queries.length < MIN_TUNING_QUERIES) {
    throw new UsageError(
      `${dataset.folder} has ${queries.length} judged quer${queries.length === 1 ? 'y' : 'ies'}; tuning needs at least ${MIN_TUNING_QUERIES}, so that every fold holds some out and the choice is not fitted to a handful of queries`,
    );
  }
  const depth = options.depth ?? TUNE_DEFAULTS.depth;
  const analyzer: Analyzer = namedAnalyzers[options.analyzer ?? TUNE_DEFAULTS.analyzer]();
  const chunks = collectionChunks(dataset);
  const built = await buildVectorRetriever(
    dataset,
    chunks,
    options.embeddings === undefined
      ? { kind: 'hash', dimension: options.hashDimension ?? TUNE_DEFAULTS.hashDimension, analyzer }
      : { kind: 'file', documents: options.embeddings, queries: options.queryEmbeddings },
    queries,
  );
  const grid: TuningGrid = options.grid ?? {};
  const depths = grid.depths ?? [depth, 2 * depth, 4 * depth];
  const fetch = Math.max(depth, ...depths);

  if (options.tuneBm25 && (options.k1 !== undefined || options.b !== undefined)) {
    throw new UsageError('--tune-bm25 chooses k1 and b; --k1 and --b cannot go with it');
  }
  const bm25Grid =
    options.tuneBm25 === true
      ? BM25_GRID
      : Array.isArray(options.tuneBm25)
        ? options.tuneBm25
        : [{ k1: options.k1 ?? TUNE_DEFAULTS.k1, b: options.b ?? TUNE_DEFAULTS.b }];

  // The vector branch does not depend on BM25's settings: it runs once per query.
  const branchesStarted = performance.now();
  const vectorRuns: TuningQuery['vector'][] = [];
  for (const [index, query] of queries.entries()) {
    context.onProgress?.('running the vector branch', index, queries.length);
    vectorRuns.push(await branchRun(built.retriever, query.text, fetch));
  }
  context.onProgress?.('running the vector branch', queries.length, queries.length);
  let branches = performance.now() - branchesStarted;
  let search = 0;
  let best: { k1: number; b: number; result: TuneFusionResult } | undefined;
  const bm25Search: NonNullable<TuneReport['bm25Search']> = [];
  for (const { k1, b } of bm25Grid) {
    const started = performance.now();
    const keyword = buildKeywordRetriever(chunks, { analyzer, k1, b });
    const tuningQueries: TuningQuery[] = [];
    const label =
      bm25Grid.length > 1 ? `running the keyword branch (k1 ${k1}, b ${b})` : 'running the keyword branch';
    for (const [index, query] of queries.entries()) {
      context.onProgress?.(label, index, queries.length);
      tuningQueries.push({
        id: query.id,
        keyword: await branchRun(keyword, query.text, fetch),
        vector: vectorRuns[index] as TuningQuery['vector'],
      });
    }
    context.onProgress?.(label, queries.length, queries.length);
    const searchStarted = performance.now();
    branches += searchStarted - started;
    const result = tuneFusion({
      queries: tuningQueries,
      qrels: dataset.qrels,
      lowerBounds: { keyword: keyword.scoreLowerBound, vector: built.retriever.scoreLowerBound },
      folds: options.folds ?? TUNE_DEFAULTS.folds,
      seed: options.seed ?? TUNE_DEFAULTS.seed,
      k: depth,
      grid: { ...grid, depths },
      onProgress: (done, total) => context.onProgress?.('scoring fusion settings', done, total),
    });
    search += performance.now() - searchStarted;
    bm25Search.push({ k1, b, tuned: result.tuned, keyword: result.keyword });
    if (best === undefined || result.tuned.mean > best.result.tuned.mean + 1e-12) best = { k1, b, result };
  }
  const { result, k1, b } = best as { k1: number; b: number; result: TuneFusionResult };
  const config = {
    ...result.config,
    bm25: { k1, b },
    description: `zerda tune on ${dataset.name}: ${result.folds.length}-fold held-out nDCG@10 ${result.tuned.mean.toFixed(4)} ± ${result.tuned.std.toFixed(4)} (keyword ${result.keyword.mean.toFixed(4)}, vector ${result.vector.mean.toFixed(4)}), seed ${result.seed}, ${options.embeddings === undefined ? 'hash embedder' : 'embeddings from file'}`,
  };
  if (options.out !== undefined) await writeSettings(options.out, config);
  return {
    collection: dataset.name,
    folder: dataset.folder,
    documents: dataset.corpus.length,
    judgedQueries: queries.length,
    ...result,
    config,
    ...(bm25Grid.length > 1 ? { bm25Search } : {}),
    ...(options.out === undefined ? {} : { settingsFile: options.out }),
    timeMs: { branches: Math.round(branches), search: Math.round(search) },
  };
}

/** One branch's candidates for a query (an unsearchable query, a zero vector: none). */
async function branchRun(
  retriever: BaseRetriever,
  text: string,
  k: number,
): Promise<{ ids: string[]; scores: number[] }> {
  try {
    const { hits } = await retriever.retrieve(text, { k });
    return { ids: hits.map((hit) => hit.chunk.id), scores: hits.map((hit) => hit.score) };
  } catch (error) {
    if (ZerdaError.isInstance(error)) return { ids: [], scores: [] };
    throw error;
  }
}

async function writeSettings(path: string, config: object): Promise<void> {
  try {
    await mkdir(dirname(resolve(path)), { recursive: true });
    await writeFile(path, `${JSON.stringify(config, null, 2)}\n`);
  } catch (error) {
    const reason =
      error instanceof Error && 'code' in error && typeof error.code === 'string'
        ? error.code
        : String(error);
    throw new DatasetError({
      path,
      message: `the fusion setting cannot be written (${reason})`,
      cause: error,
    });
  }
}
