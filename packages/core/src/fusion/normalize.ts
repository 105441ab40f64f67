import { InvalidArgumentError } from '../errors/index.js';
import { FUSION_NORMALIZATIONS } from './config.js';
import type { ScoreNormalization } from './types.js';

/**
 * Normalises one list's scores (see `ScoreNormalization`). A list whose scores are all equal
 * maps to 1 everywhere (except with `none`). Values are first divided by a power of two near
 * the largest magnitude: every method here is invariant to that scaling, and it keeps extreme
 * scores (near ±1e308) from overflowing in the differences and sums.
 */
export function normalizeScores(
  scores: ArrayLike<number>,
  method: ScoreNormalization,
  lowerBound?: number,
): number[] {
  // An exported function: a list that is not one, or an unknown method, is named rather than
  // failing later as a TypeError (or being taken for 'dbsf').
  if (scores === null || typeof scores !== 'object' || typeof scores.length !== 'number') {
    throw new InvalidArgumentError({
      argument: 'scores',
      value: scores,
      message: 'expected an array of numbers',
    });
  }
  if (!FUSION_NORMALIZATIONS.includes(method)) {
    throw new InvalidArgumentError({
      argument: 'method',
      value: method,
      message: `expected one of ${FUSION_NORMALIZATIONS.join(', ')}`,
    });
  }
  const n = scores.length;
  // Plain loops into a preallocated array: this runs once per list per query.
  const out = new Array<number>(n);
  if (method === 'none') {
    for (let i = 0; i < n; i++) out[i] = scores[i] as number;
    return out;
  }
  if (n === 0) return out;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const s = scores[i] as number;
    if (s < min) min = s;
    if (s > max) max = s;
  }
  if (method === 'theoretical-minmax') {
    // The metric's minimum, not the list's: a score's value does not move with the list's depth.
    // A bound above the list's minimum (a wrong declaration) falls back to the list's minimum.
    if (lowerBound !== undefined && Number.isFinite(lowerBound) && lowerBound <= min) {
      if (max === lowerBound) return out.fill(1);
      const range = max - lowerBound;
      if (Number.isFinite(range)) {
        for (let i = 0; i < n; i++) out[i] = clamp01(((scores[i] as number) - lowerBound) / range);
        return out;
      }
    }
    method = 'minmax';
  }
  // All equal: no spread to normalise by, only membership; each item is the list's best.
  if (min === max) return out.fill(1);
  // A power of two divides exactly, so ordinary scores come out bit-for-bit as unscaled.
  const scale = 2 ** Math.min(1023, Math.floor(Math.log2(Math.max(Math.abs(min), Math.abs(max)))));
  if (method === 'minmax') {
    const lo = min / scale;
    const range = max / scale - lo;
    for (let i = 0; i < n; i++) out[i] = clamp01(((scores[i] as number) / scale - lo) / range);
    return out;
  }
  let mean = 0;
  for (let i = 0; i < n; i++) mean += (scores[i] as number) / scale;
  mean /= n;
  let variance = 0;
  for (let i = 0; i < n; i++) {
    const d = (scores[i] as number) / scale - mean;
    variance += d * d;
  }
  const sigma = Math.sqrt(variance / n);
  if (!(sigma > 0)) return out.fill(1);
  if (method === 'zscore') {
    // Raw z is unbounded and signed; the logistic keeps its order, makes it comparable
    // across lists, and positive, so the geometric and harmonic means apply.
    for (let i = 0; i < n; i++) out[i] = 1 / (1 + Math.exp(-((scores[i] as number) / scale - mean) / sigma));
    return out;
  }
  // dbsf: μ ± 3σ spans [0, 1]; outliers beyond it are clipped.
  const lo = mean - 3 * sigma;
  for (let i = 0; i < n; i++) out[i] = clamp01(((scores[i] as number) / scale - lo) / (6 * sigma));
  return out;
}

function clamp01(x: number): number {
  return Math.min(Math.max(x, 0), 1);
}
