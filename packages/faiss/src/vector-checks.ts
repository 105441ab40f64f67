import type { DistanceMetric } from '@zerda/core';

/** Largest squared norm accepted: far beyond real embeddings, and FAISS's float32 sums stay finite. */
const MAX_SQUARED_NORM = 3.4e38 / 4;

/**
 * Checks one vector and writes it (scaled to unit length for cosine) into `target` at `offset`;
 * returns undefined, or what is wrong with it (then `target` may hold part of it).
 * A stored zero vector is kept as it is for cosine (its inner product with every query is 0, the
 * in-memory store's convention); as a query (`zero: 'refuse'`) it has no direction and is refused.
 */
export function writeCheckedVector(
  input: unknown,
  dimension: number,
  metric: DistanceMetric,
  target: Float32Array,
  offset: number,
  zero: 'keep' | 'refuse' = 'keep',
): string | undefined {
  if (!isNumberArray(input)) {
    return `the vector must be an array of numbers or a Float32Array, got ${describe(input)}`;
  }
  if (input.length !== dimension)
    return `the vector has ${input.length} dimensions, the store has ${dimension}`;
  let squaredNorm = 0;
  for (let j = 0; j < dimension; j++) {
    const raw = input[j];
    if (typeof raw !== 'number' || !Number.isFinite(raw)) {
      return `the vector holds ${describe(raw)} at position ${j}; every value must be a finite number`;
    }
    const stored = Math.fround(raw);
    if (!Number.isFinite(stored)) return `the value ${raw} at position ${j} does not fit in float32`;
    target[offset + j] = stored;
    squaredNorm += stored * stored;
  }
  if (!(squaredNorm <= MAX_SQUARED_NORM))
    return 'the vector is too large: its squared norm overflows float32';
  if (metric !== 'cosine') return undefined;
  if (squaredNorm === 0) {
    return zero === 'keep' ? undefined : 'a zero vector has no direction, so it has no cosine similarity';
  }
  const scale = 1 / Math.sqrt(squaredNorm);
  for (let j = 0; j < dimension; j++) target[offset + j] = target[offset + j]! * scale;
  return undefined;
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
