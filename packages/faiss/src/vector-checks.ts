import { checkVector, type DistanceMetric } from '@zerda/core';

/**
 * Checks one vector with core's rules (dimension, finite float32 values, no overflow; a zero
 * vector kept when stored and refused as a cosine query) and writes it, scaled to unit length for
 * cosine exactly as the in-memory store scales it, into `target` at `offset`. Returns undefined,
 * or what is wrong with it (then nothing was written).
 */
export function writeCheckedVector(
  input: unknown,
  dimension: number,
  metric: DistanceMetric,
  target: Float32Array,
  offset: number,
  zero: 'keep' | 'refuse' = 'keep',
): string | undefined {
  const scale = checkVector(input, dimension, metric, zero);
  if (typeof scale === 'string') return scale;
  const values = input as ArrayLike<number>;
  for (let j = 0; j < dimension; j++) target[offset + j] = (values[j] as number) * scale;
  return undefined;
}
