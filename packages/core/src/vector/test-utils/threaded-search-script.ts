// Run as a plain Node process by scan-threads.test.ts: searches a store whose scans are split over
// a worker with nothing else keeping the process alive, and never closes the store. It must print
// its result (the awaited splits did not let the process exit early) and then exit on its own (the
// idle workers do not keep it alive). With the argument `asleep`, the worker sleeps 200 ms each
// time it wakes, so every part is taken back after the caller's short wait for it to start.
import { InMemoryVectorStore } from '../in-memory-vector-store.js';
import { nodeScanThreads } from '../kernels/scan-threads-node.js';
import { wakingLate } from './slowed-scan-hosts.js';

const ROWS = 20_000;
const DIMENSION = 16;
const node = nodeScanThreads(2);
const threads = process.argv[2] === 'asleep' ? wakingLate(node, 200) : node;
const store = new InMemoryVectorStore({ dimension: DIMENSION, threads });
const vector = (row: number) => Float32Array.from({ length: DIMENSION }, (_, j) => Math.sin(row * 7 + j));
await store.add(
  Array.from({ length: ROWS }, (_, row) => ({ id: `c${row}`, text: '' })),
  { embeddings: Array.from({ length: ROWS }, (_, row) => vector(row)) },
);
// Parts the worker did, or the caller took back from it before it started.
const splitParts = () => store.stats().threads.workerParts + store.stats().threads.takenBack;
// Until the worker is ready, scans run here alone.
while (splitParts() === 0) await store.search(vector(1), { topK: 1 });
const before = store.stats().threads;
let found = 0;
for (let query = 0; query < 20; query++)
  found += (await store.search(vector(query), { topK: 5 })).hits.length;
const after = store.stats().threads;
process.stdout.write(
  `${JSON.stringify({
    found,
    splitParts: after.workerParts + after.takenBack - before.workerParts - before.takenBack,
    takenBack: after.takenBack - before.takenBack,
  })}\n`,
);
