// Run as a plain Node process by relaxed-simd.test.ts, on Node 20 also with the flag that turns
// relaxed SIMD on: prints what the int8 scans gave (and which kernel ran), so the test can compare
// the processes. In the process itself it checks the raw scan scores against the JavaScript
// kernels' (the same integers).
import { clusteredData, seededRandom } from '../__tests__/clustered-data.js';
import { InMemoryVectorStore } from '../in-memory-vector-store.js';
import { nodeScanThreads } from '../kernels/scan-threads-node.js';
import { VectorArena } from '../vector-arena.js';
import type { DistanceMetric } from '../vector-database.js';

// 100 dimensions: 112 codes a row, an odd number of 16-code blocks.
const DIMENSION = 100;
const ROWS = 9_000;

/** The raw scan scores of rows whose values reach both ends of the code range, from two arenas. */
function rawScans(): { scores: number[]; equalToJs: boolean; int8Kernel: string | undefined } {
  const random = seededRandom(3);
  const wasm = new VectorArena({ dimension: DIMENSION, quantized: true, kernel: 'wasm' });
  const js = new VectorArena({ dimension: DIMENSION, quantized: true, kernel: 'js' });
  const rows = 3_000;
  const row = new Float32Array(DIMENSION);
  for (const arena of [wasm, js]) arena.ensureCapacity(rows);
  for (let slot = 0; slot < rows; slot++) {
    for (let j = 0; j < DIMENSION; j++) {
      row[j] = slot % 3 === 0 ? (j % 2 === 0 ? 1 : -1) : random() * 2 - 1;
    }
    wasm.write(slot, row);
    js.write(slot, row);
  }
  const scores: number[] = [];
  let equalToJs = true;
  for (let query = 0; query < 4; query++) {
    for (let j = 0; j < DIMENSION; j++) row[j] = query === 0 ? (j % 3 === 0 ? -1 : 1) : random() * 2 - 1;
    wasm.setQuery(row);
    js.setQuery(row);
    const fromWasm = Array.from(wasm.scanAllQuantized(rows) as Float32Array);
    const fromJs = Array.from(js.scanAllQuantized(rows) as Float32Array);
    equalToJs &&= fromWasm.every((score, index) => score === fromJs[index]);
    scores.push(...fromWasm);
  }
  return { scores, equalToJs, int8Kernel: wasm.int8Kernel };
}

/** Each query's hits (ids and scores) in a store, after adds, deletes, and a snapshot restored two ways. */
async function searches(quantization: 'int8' | 'int8-only', metric: DistanceMetric, threaded: boolean) {
  const data = clusteredData({ count: ROWS, dimension: DIMENSION, queries: 8, seed: 11 });
  const settings = { quantization, metric, dimension: DIMENSION };
  const threads = threaded ? nodeScanThreads(2) : undefined;
  const store = new InMemoryVectorStore({ ...settings, threads });
  await store.add(
    Array.from({ length: ROWS }, (_, index) => ({ id: `c${index}`, text: '' })),
    { embeddings: Array.from({ length: ROWS }, (_, index) => data.row(index)) },
  );
  const splitParts = () => store.stats().threads.workerParts + store.stats().threads.takenBack;
  // Until its worker is ready, a threaded store scans on this thread alone.
  while (threaded && splitParts() === 0) await store.search(data.queries[0]!, { topK: 1 });
  const hits = async (target: InMemoryVectorStore) => {
    const found = [];
    for (const query of data.queries) {
      found.push((await target.search(query, { topK: 10 })).hits.map((hit) => [hit.chunk.id, hit.score]));
    }
    return found;
  };
  const added = await hits(store);
  // Deletes move the last rows into the holes.
  await store.delete(Array.from({ length: 300 }, (_, index) => `c${index * 7}`));
  const deleted = await hits(store);
  const image = store.snapshotArena()!;
  const copied = new InMemoryVectorStore(settings);
  copied.restoreArena(image);
  const inPlace = new InMemoryVectorStore(settings);
  const target = inPlace.arenaImageTarget(image.bytes.byteLength)!;
  target.set(image.bytes);
  inPlace.restoreArena({ ...image, bytes: target });
  const restored = [await hits(copied), await hits(inPlace)];
  const split = splitParts() > 0;
  await store.close();
  return { added, deleted, restored, split };
}

const raw = rawScans();
const stores: Record<string, unknown> = {};
for (const quantization of ['int8', 'int8-only'] as const) {
  for (const metric of ['cosine', 'dot', 'l2'] as const) {
    stores[`${quantization} ${metric}`] = await searches(quantization, metric, false);
  }
}
stores['int8 cosine, two threads'] = await searches('int8', 'cosine', true);
const int8Kernel = new InMemoryVectorStore().stats().int8Kernel;
process.stdout.write(`${JSON.stringify({ int8Kernel, raw, stores })}\n`);
