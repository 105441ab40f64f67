/**
 * What the vector-search suites share: clustered test vectors with real neighbourhoods (their
 * systems are timed interleaved, see `timeInterleaved` in measure.ts).
 */
import { mulberry32 } from '../corpus/synthetic.js';
import { collectGarbage } from './measure.js';

export const DIMENSION = 384;

export interface VectorData {
  /** size x DIMENSION unit vectors, row after row. */
  vectors: Float32Array;
  queries: Float32Array[];
  ids: string[];
}

/**
 * Heap plus external memory (typed arrays, WebAssembly memories) after a full collection. Waits
 * a moment, because V8 frees array buffers of collected objects on a background thread, so the
 * previous system's memory would otherwise still be counted.
 */
export async function settledBytes(): Promise<number> {
  collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 100));
  collectGarbage();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

/**
 * Unit vectors from a mixture of 100 centroids in a 16-dimensional space projected to 384
 * dimensions, plus a little noise: low effective dimension, so nearest neighbours are meaningful
 * (random Gaussian vectors have none, and approximate-search recall on them means nothing).
 */
export function clusteredVectors(count: number, queryCount: number, seed: number): VectorData {
  const clusters = 100;
  const subspace = 16;
  const random = mulberry32(seed);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const projection = Float64Array.from(
    { length: subspace * DIMENSION },
    () => normal() / Math.sqrt(subspace),
  );
  const centroids = Array.from({ length: clusters }, () => Float64Array.from({ length: subspace }, normal));
  const latent = new Float64Array(subspace);
  const point = (target: Float32Array, offset: number): void => {
    const centroid = centroids[Math.floor(random() * clusters)]!;
    for (let l = 0; l < subspace; l++) latent[l] = centroid[l]! + 0.35 * normal();
    let norm = 0;
    for (let j = 0; j < DIMENSION; j++) {
      let value = 0.02 * normal();
      for (let l = 0; l < subspace; l++) value += latent[l]! * projection[l * DIMENSION + j]!;
      target[offset + j] = value;
      norm += value * value;
    }
    const inverse = 1 / Math.sqrt(norm);
    for (let j = 0; j < DIMENSION; j++) target[offset + j] = target[offset + j]! * inverse;
  };
  const vectors = new Float32Array(count * DIMENSION);
  for (let row = 0; row < count; row++) point(vectors, row * DIMENSION);
  const queries = Array.from({ length: queryCount }, () => {
    const query = new Float32Array(DIMENSION);
    point(query, 0);
    return query;
  });
  return { vectors, queries, ids: Array.from({ length: count }, (_, row) => `v${row}`) };
}

/** Which kernel a store's int8 scans use, for a row's notes: relaxed SIMD where the runtime has it. */
export function int8KernelNote(kernel: string | undefined): string {
  return kernel === undefined ? '' : `int8 scans: ${kernel}`;
}

export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
