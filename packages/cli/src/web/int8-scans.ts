// What the in-memory store's int8 scans return, computed alike in Chromium (whose int8 scans use
// relaxed SIMD) and in the test's own Node (SIMD128 on Node 20), so the test can check that every
// runtime ranks and scores the same: each quantisation and metric, after adds, after deletes (which
// move rows) and after a snapshot is restored, and a store with an IVF index (whose lists have
// scans of their own) as it grows. Only shortlist-sized re-scoring (the top 10 are the scan's top
// 10, re-ordered), so a difference in the scans would show in the hits.
import { type DistanceMetric, InMemoryVectorStore } from '@zerda/core';

// 100 dimensions: 112 codes a row, an odd number of 16-code blocks.
const DIMENSION = 100;
const ROWS = 6_000;
const CLUSTERS = 40;

/** Seeded uniform numbers in [0, 1) (mulberry32): no Math function whose last bit could differ between engines. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function clusteredVectors(count: number, seed: number): Float32Array[] {
  const random = seededRandom(seed);
  const centroids = Array.from({ length: CLUSTERS }, () =>
    Float32Array.from({ length: DIMENSION }, () => random() * 2 - 1),
  );
  return Array.from({ length: count }, () => {
    const centroid = centroids[Math.floor(random() * CLUSTERS)]!;
    return Float32Array.from(centroid, (value) => value + 0.3 * (random() * 2 - 1));
  });
}

export interface Int8ScansOutcome {
  int8Kernel: string | undefined;
  /** Per store: each query's hits as [id, score], after adds, after deletes, after a restore. */
  stores: Record<string, [string, number][][][]>;
}

const RESCORE = { factor: 1, minimum: 10 };

export async function int8Scans(): Promise<Int8ScansOutcome> {
  const vectors = clusteredVectors(ROWS, 5);
  const queries = clusteredVectors(8, 6);
  const stores: Int8ScansOutcome['stores'] = {};
  const chunks = (from: number, count: number) =>
    Array.from({ length: count }, (_, row) => ({ id: `c${from + row}`, text: '' }));
  const hits = async (target: InMemoryVectorStore) => {
    const found: [string, number][][] = [];
    for (const query of queries) {
      const result = await target.search(query, { topK: 10 });
      found.push(result.hits.map((hit) => [hit.chunk.id, hit.score]));
    }
    return found;
  };
  for (const quantization of ['int8', 'int8-only'] as const) {
    for (const metric of ['cosine', 'dot', 'l2'] as DistanceMetric[]) {
      const settings = { quantization, metric, dimension: DIMENSION, rescore: RESCORE };
      const store = new InMemoryVectorStore(settings);
      await store.add(chunks(0, ROWS), { embeddings: vectors });
      const added = await hits(store);
      await store.delete(Array.from({ length: 300 }, (_, index) => `c${index * 7}`));
      const deleted = await hits(store);
      const restored = new InMemoryVectorStore(settings);
      restored.restoreArena(store.snapshotArena()!);
      stores[`${quantization} ${metric}`] = [added, deleted, await hits(restored)];
    }
  }
  // The index is trained on the first search, over two thirds of the rows; the last third then
  // joins its lists (which grow, and move), before the deletes and a restore.
  const settings = {
    dimension: DIMENSION,
    rescore: RESCORE,
    index: { type: 'ivf', lists: 24, probes: 6 },
  } as const;
  const indexed = new InMemoryVectorStore(settings);
  const trainedOn = (ROWS * 2) / 3;
  await indexed.add(chunks(0, trainedOn), { embeddings: vectors.slice(0, trainedOn) });
  const trained = await hits(indexed);
  await indexed.add(chunks(trainedOn, ROWS - trainedOn), { embeddings: vectors.slice(trainedOn) });
  const grown = await hits(indexed);
  await indexed.delete(Array.from({ length: 300 }, (_, index) => `c${index * 7}`));
  const deleted = await hits(indexed);
  const restored = new InMemoryVectorStore(settings);
  restored.restoreArena(indexed.snapshotArena()!);
  stores['int8 cosine, IVF index'] = [trained, grown, deleted, await hits(restored)];
  return { int8Kernel: new InMemoryVectorStore().stats().int8Kernel, stores };
}
