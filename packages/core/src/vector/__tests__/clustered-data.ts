// Test data for vector search. Random Gaussian vectors have no neighbourhoods (every point is
// about equally far from every other), so recall measured on them means nothing; these are
// clustered, with a low effective dimension, like real embeddings.

/** A seeded generator of uniform numbers in [0, 1) (mulberry32), so tests are repeatable. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal sampler (Box-Muller) over a uniform generator. */
export function gaussian(random: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

export interface ClusteredData {
  /** count x dimension values, row after row. */
  vectors: Float32Array;
  /** Queries drawn from the same distribution (not copies of data points). */
  queries: Float32Array[];
  row(index: number): Float32Array;
}

/**
 * Points from a mixture of `clusters` centroids in a `subspace`-dimensional space, projected
 * to `dimension` dimensions by a fixed random linear map, plus a little isotropic noise.
 */
export function clusteredData({
  count,
  dimension,
  queries = 20,
  clusters = 100,
  subspace = 16,
  spread = 0.35,
  noise = 0.02,
  seed = 1,
}: {
  count: number;
  dimension: number;
  queries?: number;
  clusters?: number;
  subspace?: number;
  spread?: number;
  noise?: number;
  seed?: number;
}): ClusteredData {
  const random = seededRandom(seed);
  const normal = gaussian(random);
  const projection = Float64Array.from(
    { length: subspace * dimension },
    () => normal() / Math.sqrt(subspace),
  );
  const centroids = Array.from({ length: clusters }, () =>
    Float64Array.from({ length: subspace }, () => normal()),
  );
  const point = (target: Float32Array, offset: number): void => {
    const centroid = centroids[Math.floor(random() * clusters)]!;
    const latent = centroid.map((value) => value + spread * normal());
    for (let j = 0; j < dimension; j++) {
      let value = 0;
      for (let l = 0; l < subspace; l++) value += latent[l]! * projection[l * dimension + j]!;
      target[offset + j] = value + noise * normal();
    }
  };
  const vectors = new Float32Array(count * dimension);
  for (let index = 0; index < count; index++) point(vectors, index * dimension);
  const queryVectors = Array.from({ length: queries }, () => {
    const query = new Float32Array(dimension);
    point(query, 0);
    return query;
  });
  return {
    vectors,
    queries: queryVectors,
    row: (index) => vectors.slice(index * dimension, (index + 1) * dimension),
  };
}
