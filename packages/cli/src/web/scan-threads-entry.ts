// The browser side of the scan-threads test: on a cross-origin isolated page, a store whose scans
// are split over a web worker (`webScanThreads`) must give the hits and scores of a store that
// scans on the page's main thread alone; elsewhere, asking for scan threads must be refused with a
// typed error that says why. The outcome is left on `globalThis.__zerda` for the test to read.
import { InMemoryVectorStore, InvalidArgumentError, webScanThreads } from '@zerda/core';

const ROWS = 20_000;
const DIMENSION = 32;
const vector = (row: number) =>
  Float32Array.from({ length: DIMENSION }, (_, j) => Math.sin(row * 7.3 + j * 1.1));

async function run() {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  if (!isolated) {
    try {
      webScanThreads(2);
      return { isolated, refused: undefined };
    } catch (error) {
      return {
        isolated,
        refused: { typed: InvalidArgumentError.isInstance(error), message: (error as Error).message },
      };
    }
  }
  const chunks = Array.from({ length: ROWS }, (_, row) => ({ id: `c${row}`, text: '' }));
  const embeddings = chunks.map((_, row) => vector(row));
  const single = new InMemoryVectorStore({ dimension: DIMENSION });
  const threaded = new InMemoryVectorStore({ dimension: DIMENSION, threads: webScanThreads(2) });
  await single.add(chunks, { embeddings });
  await threaded.add(chunks, { embeddings });
  // The worker starts asynchronously; until then the page's thread scans alone.
  const started = Date.now();
  while (threaded.stats().threads.workerParts === 0 && Date.now() - started < 20_000) {
    await threaded.search(vector(1), { topK: 1 });
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Parts the worker did, or the page's thread took back from it before it started.
  const splitParts = () => threaded.stats().threads.workerParts + threaded.stats().threads.takenBack;
  const before = splitParts();
  const hits = async (store: InMemoryVectorStore) => {
    const all: [string, number][][] = [];
    for (let query = 0; query < 12; query++) {
      const result = await store.search(vector(ROWS + query), { topK: 10 });
      all.push(result.hits.map((hit) => [hit.chunk.id, hit.score]));
    }
    return all;
  };
  // Searches made together: each waits for the split scan before it.
  const together = await Promise.all([hits(threaded), hits(threaded)]);
  const alone = await hits(single);
  const threads = threaded.stats().threads;
  await threaded.close();
  return {
    isolated,
    kernel: threaded.stats().kernel,
    int8Kernel: threaded.stats().int8Kernel,
    sameAsOneThread:
      JSON.stringify(together[0]) === JSON.stringify(alone) &&
      JSON.stringify(together[1]) === JSON.stringify(alone),
    hitsPerQuery: alone.map((query) => query.length),
    threads: threads.threads,
    splitParts: threads.workerParts + threads.takenBack - before,
    failure: threads.failure,
  };
}

(globalThis as { __zerda?: unknown }).__zerda = run().then(
  (result) => ({ ok: true, result }),
  (error: unknown) => ({
    ok: false,
    error: error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error),
  }),
);
