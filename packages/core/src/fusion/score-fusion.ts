import { InvalidArgumentError } from '../errors/index.js';
import { normalizeScores } from './normalize.js';
import { assertFinite, canonicalSum, prepareLists, sortFused } from './prepare.js';
import type {
  Contribution,
  FusedItem,
  MissingPolicy,
  RankedList,
  ScoreCombination,
  ScoreFusionOptions,
  ScoreNormalization,
} from './types.js';

const normalizations: readonly ScoreNormalization[] = [
  'minmax',
  'theoretical-minmax',
  'zscore',
  'dbsf',
  'none',
];
const combinations: readonly ScoreCombination[] = ['arithmetic', 'geometric', 'harmonic'];
const missingPolicies: readonly MissingPolicy[] = ['zero', 'ignore'];

interface Entry {
  contribution: Contribution;
  weight: number;
  /** w_i / W. */
  share: number;
  normalized: number;
}

/**
 * Score fusion: each list's scores are normalised on their own, then combined per id with a
 * weighted mean. With weights `w_i`, normalised scores `n_i`, `P` the lists that found the item
 * and `W` the total weight (`Σ_all w_i` for `missing: 'zero'`, `Σ_P w_i` for `'ignore'`):
 * - arithmetic: `Σ_P w_i n_i / W` (with `zero`, items found by more lists win);
 * - geometric: `exp(Σ_P w_i ln n_i / W)`; harmonic: `W / Σ_P (w_i / n_i)`; both are 0 when some
 *   `n_i` is 0, and with `missing: 'zero'` they are 0 unless every list found the item.
 * Every item needs a finite score. Lists of weight 0 are ignored entirely; with no list of
 * positive weight the result is empty. Returns every id found, best first, ties by id.
 */
export function scoreFusion(lists: readonly RankedList[], options: ScoreFusionOptions = {}): FusedItem[] {
  const normalization = options.normalization ?? 'minmax';
  const combination = options.combination ?? 'arithmetic';
  const missing = options.missing ?? (combination === 'arithmetic' ? 'zero' : 'ignore');
  checkChoice('normalization', normalization, normalizations);
  checkChoice('combination', combination, combinations);
  checkChoice('missing', missing, missingPolicies);

  const prepared = prepareLists(lists, options.weights, true);
  if (prepared.length === 0) return [];

  const byId = new Map<string, Entry[]>();
  for (const list of prepared) {
    const normalized = normalizeScores(
      list.items.map((item) => item.score as number),
      normalization,
      list.lowerBound,
    );
    list.items.forEach((item, i) => {
      const n = normalized[i] as number;
      if (combination !== 'arithmetic' && n < 0) {
        throw new InvalidArgumentError({
          argument: 'lists',
          value: item.score,
          message: `${list.where} item #${item.position} (id '${item.id}'): the ${combination} mean needs scores >= 0 (got ${n}); use a normalization`,
        });
      }
      const contribution: Contribution = { list: list.label, rank: item.rank, contribution: 0 };
      contribution.score = item.score as number;
      contribution.normalized = n;
      let entries = byId.get(item.id);
      if (entries === undefined) {
        entries = [];
        byId.set(item.id, entries);
      }
      entries.push({ contribution, weight: list.weight, share: 0, normalized: n });
    });
  }

  const allWeights = prepared.map((list) => list.weight);
  const fused: FusedItem[] = [];
  for (const [id, entries] of byId) {
    const foundByAll = entries.length === prepared.length;
    // Each list's share w_i / W of the mean, over all lists or over those that found the item.
    const weights = entries.map((e) => e.weight);
    const shares = relativeShares(weights, missing === 'zero' ? allWeights : weights);
    entries.forEach((e, i) => {
      e.share = shares[i] as number;
      e.contribution.contribution = e.share * e.normalized;
    });
    let score: number;
    if (combination === 'arithmetic') {
      score = canonicalSum(entries.map((e) => e.contribution.contribution));
    } else if ((missing === 'zero' && !foundByAll) || entries.some((e) => e.normalized === 0)) {
      score = 0;
    } else if (combination === 'geometric') {
      score = Math.exp(canonicalSum(entries.map((e) => e.share * Math.log(e.normalized))));
    } else {
      score = 1 / canonicalSum(entries.map((e) => e.share / e.normalized));
    }
    // A weighted mean lies within its inputs (0 counts as one for a list missing the item);
    // clamping removes the last-bit rounding that could push it past them, or past 1e308.
    score = clampToInputs(score, entries, missing === 'zero' && !foundByAll);
    assertFinite(id, score);
    fused.push({ id, score, contributions: entries.map((e) => e.contribution) });
  }
  return sortFused(fused);
}

function checkChoice<T extends string>(argument: string, value: T, allowed: readonly T[]): void {
  if (!allowed.includes(value)) {
    throw new InvalidArgumentError({
      argument,
      value,
      message: `expected one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${String(value)}`,
    });
  }
}

function clampToInputs(score: number, entries: readonly Entry[], includeZero: boolean): number {
  let lo = includeZero ? 0 : Number.POSITIVE_INFINITY;
  let hi = includeZero ? 0 : Number.NEGATIVE_INFINITY;
  for (const e of entries) {
    if (e.normalized < lo) lo = e.normalized;
    if (e.normalized > hi) hi = e.normalized;
  }
  return Math.min(Math.max(score, lo), hi);
}

/**
 * `w_i / Σ total`, computed after dividing by the largest of `total`: only ratios matter, and
 * this keeps both huge weights (whose sum would overflow) and tiny ones (whose quotient by a
 * global maximum would underflow to 0/0) in range.
 */
function relativeShares(weights: readonly number[], total: readonly number[]): number[] {
  const max = Math.max(...total);
  const sum = canonicalSum(total.map((w) => w / max));
  return weights.map((w) => w / max / sum);
}
