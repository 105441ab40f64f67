import type { SparseCapabilities, SparseVector } from './driver.js';

/**
 * Why a sparse vector cannot be written to (or queried against) a database with these limits, or
 * undefined when it can: typed arrays of one length, ascending distinct indices below the
 * dimension, finite values, at most `maxNonZero` entries. The message says what to do.
 */
export function sparseVectorProblem(value: unknown, limits: SparseCapabilities): string | undefined {
  if (value === null || typeof value !== 'object') return 'expected a sparse vector { indices, values }';
  const { indices, values } = value as Partial<SparseVector>;
  if (!(indices instanceof Uint32Array) || !(values instanceof Float32Array)) {
    return 'expected indices as a Uint32Array and values as a Float32Array';
  }
  if (indices.length !== values.length) {
    return `${indices.length} indices but ${values.length} values`;
  }
  if (indices.length > limits.maxNonZero) {
    return `the sparse vector has ${indices.length} non-zero entries, over the database's limit of ${limits.maxNonZero}: split the chunk into smaller ones, or keep this collection's keyword side in-process`;
  }
  let previous = -1;
  for (let i = 0; i < indices.length; i++) {
    const index = indices[i] as number;
    if (index <= previous) return `indices must be ascending and distinct (index ${index} at position ${i})`;
    if (index >= limits.dimension) {
      return `index ${index} at position ${i} is outside the database's sparse dimension ${limits.dimension}`;
    }
    if (!Number.isFinite(values[i])) return `value ${values[i]} at position ${i} is not a finite number`;
    previous = index;
  }
  return undefined;
}

/** `vector` with every value multiplied by `weight` (the same vector when the weight is 1). */
export function scaleSparse(vector: SparseVector, weight: number): SparseVector {
  if (weight === 1) return vector;
  const values = new Float32Array(vector.values.length);
  for (let i = 0; i < values.length; i++) values[i] = (vector.values[i] as number) * weight;
  return { indices: vector.indices, values };
}
