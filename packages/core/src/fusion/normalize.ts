import type { ScoreNormalization } from './types.js';

/**
 * Normalises one list's scores (see `ScoreNormalization`). A list whose scores are all equal
 * maps to 1 everywhere (except with `none`). Values are first divided by a power of two near
 * the largest magnitude: every method here is invariant to that scaling, and it keeps extreme
 * scores (near ±1e308) from overflowing in the differences and sums.
 */
export function normalizeScores(scores: readonly number[], method: ScoreNormalization): number[] {
  if (method === 'none') return scores.slice();
  if (scores.length === 0) return [];
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const s of scores) {
    if (s < min) min = s;
    if (s > max) max = s;
  }
  // All equal: no spread to normalise by, only membership; each item is the list's best.
  if (min === max) return scores.map(() => 1);
  // A power of two divides exactly, so ordinary scores come out bit-for-bit as unscaled.
  const scale = 2 ** Math.min(1023, Math.floor(Math.log2(Math.max(Math.abs(min), Math.abs(max)))));
  const xs = scores.map((s) => s / scale);
  if (method === 'minmax') {
    const lo = min / scale;
    const range = max / scale - lo;
    return xs.map((x) => clamp01((x - lo) / range));
  }
  let mean = 0;
  for (const x of xs) mean += x;
  mean /= xs.length;
  let variance = 0;
  for (const x of xs) variance += (x - mean) * (x - mean);
  const sigma = Math.sqrt(variance / xs.length);
  if (!(sigma > 0)) return scores.map(() => 1);
  if (method === 'zscore') {
    // Raw z is unbounded and signed; the logistic keeps its order, makes it comparable
    // across lists, and positive, so the geometric and harmonic means apply.
    return xs.map((x) => 1 / (1 + Math.exp(-(x - mean) / sigma)));
  }
  // dbsf: μ ± 3σ spans [0, 1]; outliers beyond it are clipped.
  const lo = mean - 3 * sigma;
  return xs.map((x) => clamp01((x - lo) / (6 * sigma)));
}

function clamp01(x: number): number {
  return Math.min(Math.max(x, 0), 1);
}
