import type { Chunk } from '@zerda/core';

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

/**
 * `count` vectors around `clusters` random centres (so that neighbourhoods exist and HNSW recall
 * means something), each a fresh Float32Array.
 */
export function clusteredVectors(count: number, dimension: number, seed = 1, clusters = 20): Float32Array[] {
  const random = seededRandom(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dimension }, normal));
  return Array.from({ length: count }, () => {
    const centre = centres[Math.floor(random() * clusters)]!;
    return Float32Array.from(centre, (value) => value + 0.4 * normal());
  });
}

/** Chunks c0..c(n-1) with docId `doc<i % docs>` and a `category` that is 'legal' for one in `legalEvery`. */
export function testChunks(count: number, { docs = 50, legalEvery = 100 } = {}): Chunk[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `c${index}`,
    text: `chunk number ${index}`,
    docId: `doc${index % docs}`,
    metadata: {
      category: index % legalEvery === 7 ? 'legal' : index % 3 === 0 ? 'news' : 'blog',
      position: index,
      tags: index % 2 === 0 ? ['even'] : ['odd'],
    },
  }));
}
