import { InvalidArgumentError } from '../errors/index.js';
import { normalizeScores } from './normalize.js';
import type { ScoreCombination, ScoreNormalization } from './types.js';

/** One branch's ranked candidates, best first, as the fast fusion path takes them. */
export interface CandidateListInput {
  name: string;
  /** Ids best first; a repeated id counts once, at its first position, and takes no rank. */
  ids: readonly string[];
  /** The list's own scores, aligned with `ids` (finite numbers). */
  scores: ArrayLike<number>;
  /** The metric's lowest score, for `theoretical-minmax` (0 for BM25, -1 for cosine). */
  lowerBound?: number;
}

/** A list inside a pool: its distinct candidates in rank order. */
export interface PoolList {
  readonly name: string;
  readonly lowerBound: number | undefined;
  /** Candidate index (into `pool.ids`) of rank r + 1 at position r. */
  readonly candidates: Int32Array;
  /** The list's score of rank r + 1 at position r. */
  readonly scores: Float64Array;
}

/**
 * The union of some ranked lists, each candidate once (by id). Built once per query; fusion then
 * works on typed arrays, so that merging a few hundred candidates allocates nothing per
 * candidate, and many fusion settings can be tried over the same lists (`zerda tune`).
 */
export class CandidatePool {
  /** Candidate index to id. */
  readonly ids: string[] = [];
  readonly lists: PoolList[] = [];

  constructor(lists: readonly CandidateListInput[]) {
    const indexOf = new Map<string, number>();
    // The last list each candidate was seen in, to drop an id repeated within one list.
    const seenIn: number[] = [];
    for (let listIndex = 0; listIndex < lists.length; listIndex++) {
      const list = lists[listIndex] as CandidateListInput;
      const count = list.ids.length;
      if (list.scores.length !== count) {
        throw new InvalidArgumentError({
          argument: 'lists',
          value: list.name,
          message: `list '${list.name}' has ${count} ids but ${list.scores.length} scores`,
        });
      }
      const candidates = new Int32Array(count);
      const scores = new Float64Array(count);
      let distinct = 0;
      for (let position = 0; position < count; position++) {
        const id = list.ids[position] as string;
        const score = list.scores[position] as number;
        if (!Number.isFinite(score)) {
          throw new InvalidArgumentError({
            argument: 'lists',
            value: score,
            message: `list '${list.name}' item #${position} (id '${id}') has a non-finite score`,
          });
        }
        let candidate = indexOf.get(id);
        if (candidate === undefined) {
          candidate = this.ids.length;
          this.ids.push(id);
          seenIn.push(-1);
          indexOf.set(id, candidate);
        } else if (seenIn[candidate] === listIndex) {
          continue;
        }
        seenIn[candidate] = listIndex;
        candidates[distinct] = candidate;
        scores[distinct] = score;
        distinct++;
      }
      this.lists.push({
        name: list.name,
        lowerBound: list.lowerBound,
        candidates: distinct === count ? candidates : candidates.slice(0, distinct),
        scores: distinct === count ? scores : scores.slice(0, distinct),
      });
    }
  }

  get size(): number {
    return this.ids.length;
  }
}

/**
 * When a branch's evidence for a query is weak, its weight drops for that query. Evidence is the
 * spread of the branch's top `topN` scores on the metric's own scale: `spread = (s_1 - s_topN) /
 * (s_1 - lower)`, how far the `topN`-th candidate falls below the best, as a share of the best's
 * distance from the metric's minimum (`lower`: 0 for BM25, -1 for cosine; the list's minimum
 * where the metric has none). A flat list (every candidate about as similar as the best, as the
 * hash embedder gives: cosine 0.30 down to 0.24 is a spread of 0.05) has a spread near 0; BM25's
 * top 10 typically spreads 0.2 to 0.4. Below `minSpread`, the weight is multiplied by
 * `spread / minSpread` (not below `floor`), so weights follow the evidence.
 */
export interface WeakBranchGuard {
  /** Candidates whose spread is measured (default 10). */
  topN: number;
  /** The spread under which a branch's weight drops (default 0.5). */
  minSpread: number;
  /** The lowest weight multiplier (default 0). */
  floor: number;
}

/**
 * The guard's defaults, chosen from measurements on CISI and Cranfield with the hash embedder
 * (README, "Fusion"): minSpread 0.25 to 1 all keep hybrid at or above keyword alone there.
 */
export const DEFAULT_WEAK_BRANCH_GUARD: Readonly<WeakBranchGuard> = Object.freeze({
  topN: 10,
  minSpread: 0.5,
  floor: 0,
});

/** A fusion setting with every default filled in, as the fast path takes it. */
export interface FusionSettings {
  method: 'weighted' | 'rrf' | 'weighted+rrf';
  normalization: ScoreNormalization;
  combination: ScoreCombination;
  /** One weight per pool list, in pool order (finite, >= 0). */
  weights: readonly number[];
  rrfK: number;
  /** In 'weighted+rrf', how much the RRF bonus (scaled to [0, 1]) adds (default 0.5). */
  rrfBonusWeight: number;
  /** Only each list's first `depth` candidates take part (default: all). */
  depth?: number;
  guard?: WeakBranchGuard | false;
  /** Per list, whether the guard applies to it (default all); membership lists (metadata) are exempt. */
  guarded?: readonly boolean[];
}

/** The fused scores of a pool, with what explanations need. */
export interface PoolFusion {
  /** Fused score per candidate; -Infinity for a candidate no list (within depth) found. */
  scores: Float64Array;
  /** Per list, the normalised score of each of its ranks (weighted methods), else empty. */
  normalized: number[][];
  /** Per list, its weight in the weighted score for this query (after the guard). */
  weights: number[];
  /** Per list, its weight in the RRF score: the given weight, never lowered by the guard. */
  rrfWeights: number[];
  /** Per list, its evidence spread when the guard is on (else NaN). */
  spreads: number[];
  /** Per candidate, the weighted part (for 'weighted+rrf'), else undefined. */
  weighted?: Float64Array;
  /** Per candidate, the RRF part (for 'rrf' and 'weighted+rrf'), else undefined. */
  rrf?: Float64Array;
  /** RRF's best possible score (rank 1 in every list), which scales the bonus. */
  bestRrf: number;
  /** How many candidates were found within depth. */
  found: number;
}

/** The evidence spread of a list's top `topN` scores (see `WeakBranchGuard`); 1 for a single item. */
export function evidenceSpread(
  scores: ArrayLike<number>,
  count: number,
  lowerBound: number | undefined,
  topN: number,
): number {
  if (count <= 1) return 1;
  const best = scores[0] as number;
  const last = scores[Math.min(topN, count) - 1] as number;
  let lower = lowerBound;
  if (lower === undefined || !(lower <= last)) {
    lower = last;
    for (let i = 0; i < count; i++) if ((scores[i] as number) < lower) lower = scores[i] as number;
  }
  const range = best - lower;
  if (!(range > 0)) return 0;
  return Math.min(1, Math.max(0, (best - last) / range));
}

/** A list's weight multiplier under the guard. */
export function guardFactor(spread: number, guard: WeakBranchGuard): number {
  if (!(guard.minSpread > 0) || spread >= guard.minSpread) return 1;
  return Math.max(guard.floor, spread / guard.minSpread);
}

/**
 * Fuses a pool's lists as `settings` say. Scores equal `scoreFusion` (weighted, with `missing:
 * 'zero'` for the arithmetic mean and `'ignore'` for the others) and `reciprocalRankFusion` over
 * the same lists, up to the last bits of floating-point rounding with three or more lists.
 */
export function fusePool(
  pool: CandidatePool,
  settings: FusionSettings,
  /** Normalised lists kept between calls over the same pool (many settings tried, as `tuneFusion` does). */
  cache?: Map<string, number[]>,
): PoolFusion {
  const n = pool.size;
  const lists = pool.lists;
  const depth = settings.depth ?? Number.POSITIVE_INFINITY;
  const counts = lists.map((list) => Math.min(list.candidates.length, depth));
  // The guard scales the weighted score only: 'rrf' is Σ w / (k + rank) exactly, whatever the setting.
  const guard =
    settings.guard === undefined || settings.guard === false || settings.method === 'rrf'
      ? undefined
      : settings.guard;
  const guarded = (i: number) => guard !== undefined && settings.guarded?.[i] !== false;
  const spreads = lists.map((list, i) =>
    guarded(i)
      ? evidenceSpread(list.scores, counts[i] as number, list.lowerBound, (guard as WeakBranchGuard).topN)
      : Number.NaN,
  );
  const weights = lists.map((_, i) => {
    const weight = settings.weights[i] ?? 1;
    return guarded(i) ? weight * guardFactor(spreads[i] as number, guard as WeakBranchGuard) : weight;
  });
  const rrfWeights = lists.map((_, i) => settings.weights[i] ?? 1);
  // As in `scoreFusion`, the mean is over every list of positive weight, empty ones included.
  let totalWeight = 0;
  for (const weight of weights) totalWeight += weight;

  const found = new Uint8Array(n);
  const method = settings.method;
  const useWeighted = method !== 'rrf';
  const useRrf = method !== 'weighted';
  const normalized: number[][] = [];
  let weighted: Float64Array | undefined;
  let rrf: Float64Array | undefined;
  let bestRrf = 0;

  if (useWeighted) {
    const combination = settings.combination;
    // Arithmetic: Σ w_i n_i over all weight; geometric: Σ w_i ln n_i; harmonic: Σ w_i / n_i,
    // both over the weight of the lists that found the item (missing: 'ignore').
    const sums = new Float64Array(n);
    const weightFound = combination === 'arithmetic' ? undefined : new Float64Array(n);
    const zero = combination === 'arithmetic' ? undefined : new Uint8Array(n);
    const maxWeight = Math.max(0, ...weights);
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l] as PoolList;
      const count = counts[l] as number;
      let values: number[];
      if (count === 0) values = [];
      else {
        const scores = count === list.scores.length ? list.scores : list.scores.subarray(0, count);
        if (cache === undefined) values = normalizeScores(scores, settings.normalization, list.lowerBound);
        else {
          // A key only where there is a cache: making the string costs more than the rest for short lists.
          const key = `${l}:${count}:${settings.normalization}`;
          values = cache.get(key) ?? normalizeScores(scores, settings.normalization, list.lowerBound);
          cache.set(key, values);
        }
      }
      normalized.push(values);
      const weight = weights[l] as number;
      if (!(weight > 0)) {
        for (let r = 0; r < count; r++) found[list.candidates[r] as number] = 1;
        continue;
      }
      // Shares relative to the largest weight keep huge and tiny weights in range.
      const w = weight / maxWeight;
      for (let r = 0; r < count; r++) {
        const c = list.candidates[r] as number;
        const value = values[r] as number;
        found[c] = 1;
        if (combination === 'arithmetic') sums[c] = (sums[c] as number) + w * value;
        else {
          if (value < 0) {
            throw new InvalidArgumentError({
              argument: 'normalization',
              value: settings.normalization,
              message: `the ${combination} mean needs scores >= 0 (list '${list.name}' gives ${value}); use a normalization`,
            });
          }
          (weightFound as Float64Array)[c] = ((weightFound as Float64Array)[c] as number) + w;
          if (value === 0) (zero as Uint8Array)[c] = 1;
          else if (combination === 'geometric') sums[c] = (sums[c] as number) + w * Math.log(value);
          else sums[c] = (sums[c] as number) + w / value;
        }
      }
    }
    const total = totalWeight / (maxWeight || 1);
    // A weighted mean of values in [0, 1] stays there; clamping removes last-bit rounding.
    const clamp = settings.normalization !== 'none';
    weighted = sums;
    for (let c = 0; c < n; c++) {
      const sum = sums[c] as number;
      if (combination === 'arithmetic') sums[c] = total > 0 ? clampUnit(sum / total, clamp) : 0;
      else if ((zero as Uint8Array)[c] === 1 || !((weightFound as Float64Array)[c]! > 0)) sums[c] = 0;
      else if (combination === 'geometric') sums[c] = Math.exp(sum / (weightFound as Float64Array)[c]!);
      else sums[c] = (weightFound as Float64Array)[c]! / sum;
    }
  } else {
    for (let l = 0; l < lists.length; l++) normalized.push([]);
  }

  if (useRrf) {
    const k = settings.rrfK;
    rrf = new Float64Array(n);
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l] as PoolList;
      const count = counts[l] as number;
      const weight = rrfWeights[l] as number;
      bestRrf += weight / (k + 1);
      for (let r = 0; r < count; r++) {
        const c = list.candidates[r] as number;
        found[c] = 1;
        rrf[c] = (rrf[c] as number) + weight / (k + r + 1);
      }
    }
  }

  const scores = new Float64Array(n);
  let foundCount = 0;
  const bonusWeight = settings.rrfBonusWeight;
  const rrfScale = bestRrf || 1;
  for (let c = 0; c < n; c++) {
    if (found[c] === 0) {
      scores[c] = Number.NEGATIVE_INFINITY;
      continue;
    }
    foundCount++;
    if (method === 'rrf') scores[c] = (rrf as Float64Array)[c] as number;
    else if (method === 'weighted') scores[c] = (weighted as Float64Array)[c] as number;
    else {
      const bonus = ((rrf as Float64Array)[c] as number) / rrfScale;
      scores[c] = (((weighted as Float64Array)[c] as number) + bonusWeight * bonus) / (1 + bonusWeight);
    }
  }
  return { scores, normalized, weights, rrfWeights, spreads, weighted, rrf, bestRrf, found: foundCount };
}

/**
 * The best `k` candidates by fused score, best first; equal scores by id (code-unit order, smaller
 * first), the tie order of every retriever. Candidates scored -Infinity (not found) are left out.
 */
export function topCandidates(pool: CandidatePool, scores: Float64Array, k: number): Int32Array {
  const ids = pool.ids;
  const n = scores.length;
  let found = 0;
  for (let c = 0; c < n; c++) if (scores[c] !== Number.NEGATIVE_INFINITY) found++;
  const better = (a: number, b: number): boolean => {
    const sa = scores[a] as number;
    const sb = scores[b] as number;
    if (sa !== sb) return sa > sb;
    return (ids[a] as string) < (ids[b] as string);
  };
  if (k * 4 >= found) {
    // Most of the candidates are returned: one sort of the found ones, in a plain array (a typed
    // array's sort with a comparator, and making one, cost several times as much at this size).
    const all: number[] = [];
    for (let c = 0; c < n; c++) if (scores[c] !== Number.NEGATIVE_INFINITY) all.push(c);
    all.sort((a, b) => {
      const sa = scores[a] as number;
      const sb = scores[b] as number;
      if (sa !== sb) return sb - sa;
      const ia = ids[a] as string;
      const ib = ids[b] as string;
      return ia < ib ? -1 : ia > ib ? 1 : 0;
    });
    return Int32Array.from(k >= found ? all : all.slice(0, k));
  }
  const capacity = Math.min(k, found);
  // A min-heap (worst at the root) of the best `capacity` so far.
  const heap = new Int32Array(capacity);
  let size = 0;
  for (let c = 0; c < n; c++) {
    if (scores[c] === Number.NEGATIVE_INFINITY) continue;
    if (size < capacity) {
      let position = size++;
      while (position > 0) {
        const parent = (position - 1) >> 1;
        if (!better(heap[parent] as number, c)) break;
        heap[position] = heap[parent] as number;
        position = parent;
      }
      heap[position] = c;
    } else if (size > 0 && better(c, heap[0] as number)) {
      siftDown(heap, size, c, better);
    }
  }
  const out = new Int32Array(size);
  for (let end = size; end > 0; end--) {
    out[end - 1] = heap[0] as number;
    siftDown(heap, end - 1, heap[end - 1] as number, better);
  }
  return out;
}

function siftDown(
  heap: Int32Array,
  size: number,
  item: number,
  better: (a: number, b: number) => boolean,
): void {
  if (size === 0) return;
  let position = 0;
  for (;;) {
    const left = 2 * position + 1;
    if (left >= size) break;
    let child = left;
    const right = left + 1;
    // The worse child moves up: the root stays the worst.
    if (right < size && better(heap[left] as number, heap[right] as number)) child = right;
    if (!better(item, heap[child] as number)) break;
    heap[position] = heap[child] as number;
    position = child;
  }
  heap[position] = item;
}

function clampUnit(value: number, clamp: boolean): number {
  return clamp ? Math.min(1, Math.max(0, value)) : value;
}
