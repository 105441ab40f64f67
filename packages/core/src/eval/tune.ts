import { InvalidArgumentError } from '../errors/index.js';
import {
  type CandidateListInput,
  CandidatePool,
  DEFAULT_WEAK_BRANCH_GUARD,
  type FusionConfig,
  type FusionSettings,
  fusePool,
  topCandidates,
} from '../fusion/index.js';
import type { ScoreNormalization } from '../fusion/types.js';
import { ndcgAt, rankRunEntries, recallAt } from './metrics.js';
import type { Qrels, RunEntry } from './types.js';

/** The fewest judged queries `tuneFusion` accepts: fewer cannot be split into folds that say anything. */
export const MIN_TUNING_QUERIES = 10;

/** One judged query's branch runs, each as deep as the deepest setting tried. */
export interface TuningQuery {
  id: string;
  keyword: { ids: readonly string[]; scores: ArrayLike<number> };
  vector: { ids: readonly string[]; scores: ArrayLike<number> };
}

/** What is searched. Every list has a default; the grid is their product. */
export interface TuningGrid {
  /** Normalisations for the convex combination (default minmax, zscore, theoretical-minmax). */
  normalizations?: readonly ScoreNormalization[];
  /** The keyword branch's share alpha; the vector branch gets 1 - alpha (default 0, 0.1, ..., 1). */
  alphas?: readonly number[];
  /** RRF's k (default 1, 5, 10, 20, 40, 60, 100). */
  rrfKs?: readonly number[];
  /** Keyword shares tried for RRF (default 0.3, 0.5, 0.7). */
  rrfAlphas?: readonly number[];
  /** Candidates per branch (default k, 2k and 4k for the evaluation depth k). */
  depths?: readonly number[];
  /** The weak-branch guard, off and on (default both). */
  guards?: readonly boolean[];
}

export interface TuneFusionOptions {
  /** The queries, each with its branch runs. At least 10, each with a relevant judgment. */
  queries: readonly TuningQuery[];
  qrels: Qrels;
  /** Lowest scores of the branches' metrics (default keyword 0, vector -1: cosine). */
  lowerBounds?: { keyword?: number; vector?: number };
  /** Folds of cross-validation (default 5; at most the number of queries). */
  folds?: number;
  /** Seeds the split of the queries into folds (default 1): the same seed, the same result. */
  seed?: number;
  /** Hits a query returns, for Recall@k and the depths (default 100). */
  k?: number;
  grid?: TuningGrid;
  /** Called as settings are scored. */
  onProgress?: (done: number, total: number) => void;
}

/** One fusion setting tried, and how it did over every query. */
export interface TunedSetting {
  config: FusionConfig;
  /** Mean nDCG@10 over all queries. */
  ndcg10: number;
}

export interface FoldResult {
  fold: number;
  /** Queries held out. */
  queries: number;
  /** The setting chosen on the other folds. */
  chosen: FusionConfig;
  /** nDCG@10 on the held-out queries: the chosen setting, keyword alone, vector alone. */
  ndcg10: number;
  keywordNdcg10: number;
  vectorNdcg10: number;
}

export interface MeanAndSpread {
  mean: number;
  /** Standard deviation over the folds (population). */
  std: number;
  min: number;
  max: number;
}

export interface TuneFusionResult {
  /** The setting chosen on all queries, to write and use. */
  config: FusionConfig;
  folds: FoldResult[];
  /** Held-out nDCG@10 of the tuned setting (chosen afresh in each fold), over the folds. */
  tuned: MeanAndSpread;
  keyword: MeanAndSpread;
  vector: MeanAndSpread;
  /** Over all queries: the chosen setting, keyword alone and vector alone. */
  all: {
    tuned: { ndcg10: number; recall: number };
    keyword: { ndcg10: number; recall: number };
    vector: { ndcg10: number; recall: number };
  };
  /** How many settings were tried. */
  settings: number;
  /** The best settings over all queries, best first (up to 10). */
  leaderboard: TunedSetting[];
  queries: number;
  k: number;
  seed: number;
}

/**
 * Chooses a fusion setting by k-fold cross-validation on judged queries: every setting of the
 * grid (a convex combination over min-max, z-score or theoretical-min-max normalised scores,
 * or RRF; the keyword weight alpha; RRF's k; the depth per branch; the weak-branch guard) is
 * scored on each query once, over candidate lists fetched once; in each fold the setting best on
 * the other folds is scored on the held-out queries. Reports each fold, the mean and spread of
 * the held-out nDCG@10 beside keyword alone and vector alone, and the setting best on all
 * queries. Deterministic for a seed.
 */
export function tuneFusion(options: TuneFusionOptions): TuneFusionResult {
  const { queries, qrels } = options;
  if (queries.length < MIN_TUNING_QUERIES) {
    throw new InvalidArgumentError({
      argument: 'queries',
      value: queries.length,
      message: `tuning needs at least ${MIN_TUNING_QUERIES} judged queries to hold some out in every fold, got ${queries.length}`,
    });
  }
  const k = options.k ?? 100;
  const seed = options.seed ?? 1;
  const folds = Math.min(options.folds ?? 5, queries.length);
  if (!Number.isInteger(folds) || folds < 2) {
    throw new InvalidArgumentError({
      argument: 'folds',
      value: options.folds,
      message: 'must be an integer >= 2',
    });
  }
  const keywordBound = options.lowerBounds?.keyword ?? 0;
  const vectorBound = options.lowerBounds?.vector ?? -1;
  const grid = expandGrid(options.grid ?? {}, k);

  const pools = queries.map((query) => {
    const lists: CandidateListInput[] = [
      { name: 'keyword', ...query.keyword, lowerBound: keywordBound },
      { name: 'vector', ...query.vector, lowerBound: vectorBound },
    ];
    return new CandidatePool(lists);
  });
  const judgments = queries.map((query) => qrels.get(query.id) ?? new Map<string, number>());
  // Each query's normalised lists, computed once per depth and normalisation, not per setting.
  const caches = queries.map(() => new Map<string, number[]>());

  // nDCG@10 of every setting on every query: settings x queries.
  const scores = grid.map(() => new Float64Array(queries.length));
  grid.forEach((setting, s) => {
    const row = scores[s] as Float64Array;
    for (let q = 0; q < queries.length; q++) {
      const pool = pools[q] as CandidatePool;
      const fused = fusePool(pool, setting.settings, caches[q]);
      row[q] = ndcgOfTop(pool, fused.scores, judgments[q] as Map<string, number>, k);
    }
    options.onProgress?.(s + 1, grid.length);
  });
  const single = (list: 'keyword' | 'vector') =>
    queries.map((query, q) => {
      const run = query[list];
      const entries = listEntries(run.ids, run.scores, k);
      const ranking = rankRunEntries(entries);
      return {
        ndcg10: ndcgAt(ranking, judgments[q] as Map<string, number>, 10),
        recall: recallAt(ranking, judgments[q] as Map<string, number>, k),
      };
    });
  const keywordAlone = single('keyword');
  const vectorAlone = single('vector');

  // Seeded shuffle, then round-robin into folds.
  const order = shuffle(
    queries.map((_, q) => q),
    seed,
  );
  const foldOf = new Int32Array(queries.length);
  order.forEach((q, position) => {
    foldOf[q] = position % folds;
  });
  const foldResults: FoldResult[] = [];
  for (let fold = 0; fold < folds; fold++) {
    const train: number[] = [];
    const test: number[] = [];
    for (let q = 0; q < queries.length; q++) (foldOf[q] === fold ? test : train).push(q);
    const best = bestSetting(scores, train);
    foldResults.push({
      fold: fold + 1,
      queries: test.length,
      chosen: (grid[best] as GridSetting).config,
      ndcg10: mean(test.map((q) => (scores[best] as Float64Array)[q] as number)),
      keywordNdcg10: mean(test.map((q) => (keywordAlone[q] as { ndcg10: number }).ndcg10)),
      vectorNdcg10: mean(test.map((q) => (vectorAlone[q] as { ndcg10: number }).ndcg10)),
    });
  }
  const everyQuery = queries.map((_, q) => q);
  const chosen = bestSetting(scores, everyQuery);
  const chosenSetting = grid[chosen] as GridSetting;
  let recall = 0;
  for (let q = 0; q < queries.length; q++) {
    const pool = pools[q] as CandidatePool;
    const fused = fusePool(pool, chosenSetting.settings);
    const top = topCandidates(pool, fused.scores, k);
    const ranking = rankRunEntries(
      Array.from(top, (c) => ({ docId: pool.ids[c] as string, score: fused.scores[c] as number })),
    );
    recall += recallAt(ranking, judgments[q] as Map<string, number>, k);
  }
  const means = grid.map((_, s) => mean(Array.from(scores[s] as Float64Array)));
  const leaderboard = grid
    .map((setting, s) => ({ config: setting.config, ndcg10: means[s] as number, s }))
    .sort((a, b) => b.ndcg10 - a.ndcg10 || a.s - b.s)
    .slice(0, 10)
    .map(({ config, ndcg10 }) => ({ config, ndcg10 }));
  return {
    config: chosenSetting.config,
    folds: foldResults,
    tuned: spread(foldResults.map((f) => f.ndcg10)),
    keyword: spread(foldResults.map((f) => f.keywordNdcg10)),
    vector: spread(foldResults.map((f) => f.vectorNdcg10)),
    all: {
      tuned: { ndcg10: means[chosen] as number, recall: recall / queries.length },
      keyword: {
        ndcg10: mean(keywordAlone.map((r) => r.ndcg10)),
        recall: mean(keywordAlone.map((r) => r.recall)),
      },
      vector: {
        ndcg10: mean(vectorAlone.map((r) => r.ndcg10)),
        recall: mean(vectorAlone.map((r) => r.recall)),
      },
    },
    settings: grid.length,
    leaderboard,
    queries: queries.length,
    k,
    seed,
  };
}

interface GridSetting {
  config: FusionConfig;
  settings: FusionSettings;
}

/** Every setting of the grid, in a fixed order (ties between settings go to the earlier one). */
export function expandGrid(grid: TuningGrid, k: number): GridSetting[] {
  const normalizations = grid.normalizations ?? ['theoretical-minmax', 'minmax', 'zscore'];
  const alphas = grid.alphas ?? [0.5, 0.6, 0.7, 0.8, 0.9, 0.4, 0.3, 0.2, 0.1, 1, 0];
  const rrfKs = grid.rrfKs ?? [60, 1, 5, 10, 20, 40, 100];
  const rrfAlphas = grid.rrfAlphas ?? [0.5, 0.7, 0.3];
  const depths = grid.depths ?? [2 * k, k, 4 * k];
  const guards = grid.guards ?? [true, false];
  const out: GridSetting[] = [];
  const round = (x: number) => Math.round(x * 1e6) / 1e6;
  for (const depth of depths) {
    for (const guard of guards) {
      for (const normalization of normalizations) {
        for (const alpha of alphas) {
          const weights = { keyword: round(alpha), vector: round(1 - alpha) };
          out.push({
            config: { version: 1, method: 'weighted', normalization, weights, depth, guard },
            settings: {
              method: 'weighted',
              normalization,
              combination: 'arithmetic',
              weights: [weights.keyword, weights.vector],
              rrfK: 60,
              rrfBonusWeight: 0.5,
              depth,
              guard: guard ? DEFAULT_WEAK_BRANCH_GUARD : false,
            },
          });
        }
      }
      // RRF is RRF: the guard scales normalised scores only, so RRF settings are tried once, without it.
      if (guard !== guards[0]) continue;
      for (const rrfK of rrfKs) {
        for (const alpha of rrfAlphas) {
          const weights = { keyword: round(alpha), vector: round(1 - alpha) };
          out.push({
            config: { version: 1, method: 'rrf', rrfK, weights, depth },
            settings: {
              method: 'rrf',
              normalization: 'minmax',
              combination: 'arithmetic',
              weights: [weights.keyword, weights.vector],
              rrfK,
              rrfBonusWeight: 0.5,
              depth,
              guard: false,
            },
          });
        }
      }
    }
  }
  return out;
}

/**
 * nDCG@10 of a fused pool as `zerda eval` computes it: the run is the top `k` hits (Zerda's
 * order: score, then id), ranked by trec_eval's order (score, then id descending).
 */
function ndcgOfTop(
  pool: CandidatePool,
  scores: Float64Array,
  judgments: ReadonlyMap<string, number>,
  k: number,
): number {
  const top = topCandidates(pool, scores, Math.min(k, 11));
  // With no tie across the 10th place, the top 10 are the same set in either order.
  const tied = k > 10 && top.length === 11 && scores[top[9] as number] === scores[top[10] as number];
  const candidates = tied ? topCandidates(pool, scores, k) : top.subarray(0, Math.min(10, top.length));
  const entries: RunEntry[] = Array.from(candidates, (c) => ({
    docId: pool.ids[c] as string,
    score: scores[c] as number,
  }));
  return ndcgAt(rankRunEntries(entries), judgments, 10);
}

function listEntries(ids: readonly string[], scores: ArrayLike<number>, k: number): RunEntry[] {
  const entries: RunEntry[] = [];
  for (let i = 0; i < Math.min(k, ids.length); i++)
    entries.push({ docId: ids[i] as string, score: scores[i] as number });
  return entries;
}

function bestSetting(scores: readonly Float64Array[], queries: readonly number[]): number {
  let best = 0;
  let bestMean = Number.NEGATIVE_INFINITY;
  scores.forEach((row, s) => {
    let sum = 0;
    for (const q of queries) sum += row[q] as number;
    const value = sum / Math.max(1, queries.length);
    // A setting must beat the best so far by more than rounding to replace it.
    if (value > bestMean + 1e-12) {
      best = s;
      bestMean = value;
    }
  });
  return best;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, v) => sum + v, 0) / values.length;
}

function spread(values: readonly number[]): MeanAndSpread {
  const m = mean(values);
  const variance = mean(values.map((v) => (v - m) * (v - m)));
  return { mean: m, std: Math.sqrt(variance), min: Math.min(...values), max: Math.max(...values) };
}

/** Fisher-Yates with a seeded generator (mulberry32): the same seed, the same order. */
function shuffle<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}
