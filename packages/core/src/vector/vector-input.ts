import type { DistanceMetric } from './vector-database.js';

/** Largest squared norm accepted: far beyond real embeddings, and it keeps every scan sum finite in float32. */
const MAX_SQUARED_NORM = 3.4e38 / 4;

/**
 * Checks one vector without copying it: the scale to store it with (`1 / norm` for cosine, so
 * the scan is a plain dot product; 1 otherwise), or a string saying what is wrong with it.
 * A zero vector has no direction: for cosine it is refused as a query (`zero: 'refuse'`) and
 * kept as it is as a stored vector (its similarity to every query is then 0), since empty texts
 * embed to zero with some embedders and one of them should not fail a whole batch.
 */
export function checkVector(
  input: unknown,
  dimension: number,
  metric: DistanceMetric,
  zero: 'keep' | 'refuse' = 'keep',
): number | string {
  if (!isNumberArray(input)) {
    return `the vector must be an array of numbers or a Float32Array, got ${describe(input)}`;
  }
  if (input.length !== dimension) {
    return `the vector has ${input.length} dimensions, the store has ${dimension}`;
  }
  let squaredNorm = 0;
  for (let j = 0; j < dimension; j++) {
    const raw = input[j];
    if (typeof raw !== 'number' || !Number.isFinite(raw)) {
      return `the vector holds ${describe(raw)} at position ${j}; every value must be a finite number`;
    }
    // The value as float32 will hold it.
    const stored = Math.fround(raw);
    if (!Number.isFinite(stored)) return `the value ${raw} at position ${j} does not fit in float32`;
    squaredNorm += stored * stored;
  }
  if (!(squaredNorm <= MAX_SQUARED_NORM))
    return 'the vector is too large: its squared norm overflows float32';
  if (metric !== 'cosine') return 1;
  if (squaredNorm > 0) return 1 / Math.sqrt(squaredNorm);
  return zero === 'keep' ? 1 : 'a zero vector has no direction, so it has no cosine similarity';
}

/** A JavaScript array or a numeric typed array (not a DataView, not a BigInt array). */
export function isNumberArray(input: unknown): input is ArrayLike<unknown> {
  if (Array.isArray(input)) return true;
  return (
    ArrayBuffer.isView(input) &&
    !(input instanceof DataView) &&
    !(input instanceof BigInt64Array) &&
    !(input instanceof BigUint64Array)
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  return typeof value;
}
