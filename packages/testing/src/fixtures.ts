import { type Chunk, type DistanceMetric, type Embedder, HashEmbedder } from '@zerda/core';

/** A small, fast, deterministic pseudo-random generator (mulberry32), so fixtures are the same on every run. */
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

/** `count` vectors of `dimension` values in [-1, 1), the same for the same seed. */
export function seededVectors(seed: number, count: number, dimension: number): number[][] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () =>
    // Values exact in float32, so that stores keeping float32 hold exactly the vector given.
    Array.from({ length: dimension }, () => Math.fround(random() * 2 - 1)),
  );
}

/** As `seededVectors`, scaled to length 1 (then a vector's nearest neighbour is itself under every metric). */
export function seededUnitVectors(seed: number, count: number, dimension: number): number[][] {
  return seededVectors(seed, count, dimension).map((vector) => {
    const norm = Math.hypot(...vector);
    return vector.map((value) => value / norm);
  });
}

function dot(a: readonly number[], b: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/**
 * Zerda's score of stored vector `b` for query `a`: cosine similarity (0 when either vector is
 * zero), the inner product, or `1 / (1 + d)` for the Euclidean distance d.
 */
export function expectedSimilarity(
  metric: DistanceMetric,
  a: readonly number[],
  b: readonly number[],
): number {
  switch (metric) {
    case 'cosine': {
      const norms = Math.sqrt(dot(a, a)) * Math.sqrt(dot(b, b));
      return norms === 0 ? 0 : dot(a, b) / norms;
    }
    case 'dot':
      return dot(a, b);
    case 'l2': {
      let squared = 0;
      for (let i = 0; i < a.length; i++) squared += (a[i]! - b[i]!) ** 2;
      return 1 / (1 + Math.sqrt(squared));
    }
  }
}

/** The deterministic embedder the suite gives `create` (core's HashEmbedder: no model, no network). */
export function conformanceEmbedder(dimension: number): Embedder {
  return new HashEmbedder({ dimension });
}

/** An embedder that records the texts it embeds. */
export function recordingEmbedder(inner: Embedder): Embedder & { texts: string[] } {
  const texts: string[] = [];
  return {
    dimension: inner.dimension,
    texts,
    async embed(input, options) {
      texts.push(...input);
      return inner.embed(input, options);
    },
  };
}

/**
 * A chunk as the suite compares it: `docId` and `metadata` only where present, and an empty
 * metadata object the same as none (some databases cannot store an empty one).
 */
export function comparableChunk(chunk: Chunk): Chunk {
  const copy: Chunk = { id: chunk.id, text: chunk.text };
  if (chunk.docId !== undefined) copy.docId = chunk.docId;
  if (chunk.metadata !== undefined && Object.keys(chunk.metadata).length > 0) {
    copy.metadata = { ...chunk.metadata };
  }
  return copy;
}
