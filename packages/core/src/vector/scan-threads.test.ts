import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import type { Chunk } from '../model/index.js';
import { gaussian, seededRandom } from './__tests__/clustered-data.js';
import {
  InMemoryVectorStore,
  type InMemoryVectorStoreSettings,
  type VectorQuantization,
} from './in-memory-vector-store.js';
import { MIN_ROWS_PER_THREAD, type ScanThreadHost } from './kernels/scan-threads.js';
import { nodeScanThreads } from './scan-threads-node.js';
import { loadInMemoryVectorStore, saveInMemoryVectorStore } from './store-files.js';
import type { DistanceMetric } from './vector-database.js';

// Enough rows that a full scan is split over two threads.
const ROWS = 3 * MIN_ROWS_PER_THREAD;
const DIMENSION = 40;
const stores: InMemoryVectorStore[] = [];

afterAll(async () => {
  for (const store of stores) await store.close();
});

function vectors(count: number, seed: number): Float32Array[] {
  const normal = gaussian(seededRandom(seed));
  return Array.from({ length: count }, () => Float32Array.from({ length: DIMENSION }, normal));
}

function chunks(count: number, from = 0): Chunk[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `c${from + index}`,
    text: `text ${from + index}`,
    metadata: { odd: (from + index) % 2 === 1 },
  }));
}

function store(settings: InMemoryVectorStoreSettings): InMemoryVectorStore {
  const created = new InMemoryVectorStore({ dimension: DIMENSION, ...settings });
  stores.push(created);
  return created;
}

/** Polls until `done` holds: the workers start asynchronously. */
async function until(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const started = Date.now();
  while (!(await done())) {
    if (Date.now() - started > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The hits of each query, as [id, score] pairs. */
async function hits(target: InMemoryVectorStore, queries: Float32Array[], topK = 10) {
  const all: [string, number][][] = [];
  for (const query of queries) {
    const result = await target.search(query, { topK });
    all.push(result.hits.map((hit) => [hit.chunk.id, hit.score]));
  }
  return all;
}

/** Searches until the workers have taken part, so the comparison covers split scans. */
async function warm(target: InMemoryVectorStore, query: Float32Array): Promise<void> {
  await until(async () => {
    await target.search(query, { topK: 1 });
    return target.stats().threads.workerParts > 0;
  }, 'the scan workers to take part');
}

describe('scans split over worker threads', () => {
  const data = vectors(ROWS, 1);
  const more = vectors(ROWS, 2);
  const queries = vectors(12, 3);
  const quantizations: VectorQuantization[] = ['int8', 'none', 'int8-only'];
  const metrics: DistanceMetric[] = ['cosine', 'dot', 'l2'];

  for (const quantization of quantizations) {
    for (const metric of metrics) {
      it(`gives the single thread's hits and scores (${quantization}, ${metric}), also after the memory grows`, async () => {
        const single = store({ quantization, metric });
        const threaded = store({ quantization, metric, threads: nodeScanThreads(2) });
        await single.add(chunks(ROWS), { embeddings: data });
        await threaded.add(chunks(ROWS), { embeddings: data });
        await warm(threaded, queries[0]!);
        const before = threaded.stats().threads.workerParts;
        expect(await hits(threaded, queries)).toEqual(await hits(single, queries));
        // Each of the 12 full scans handed its second half to the worker.
        expect(threaded.stats().threads).toEqual({ threads: 2, workerParts: before + queries.length });

        // Growing moves the shared memory's end; the worker's instance must see the new rows.
        await single.add(chunks(ROWS, ROWS), { embeddings: more });
        await threaded.add(chunks(ROWS, ROWS), { embeddings: more });
        expect(await hits(threaded, queries, 25)).toEqual(await hits(single, queries, 25));
        expect(threaded.stats().threads.workerParts).toBe(before + 2 * queries.length);
      });
    }
  }

  it('keeps filters, deletes and updates exact', async () => {
    const single = store({});
    const threaded = store({ threads: nodeScanThreads(2) });
    for (const target of [single, threaded]) {
      await target.add(chunks(ROWS), { embeddings: data });
      await target.delete(['c1', 'c2', 'c100']);
      await target.add(chunks(1, 5), { embeddings: [more[0]!] });
    }
    await warm(threaded, queries[0]!);
    for (const query of queries) {
      const filter = { odd: true };
      expect((await threaded.search(query, { topK: 7, filter })).hits).toEqual(
        (await single.search(query, { topK: 7, filter })).hits,
      );
    }
  });

  it('splits over three threads', async () => {
    const single = store({ quantization: 'none' });
    const threaded = store({ quantization: 'none', threads: nodeScanThreads(3) });
    await single.add(chunks(ROWS), { embeddings: data });
    await threaded.add(chunks(ROWS), { embeddings: data });
    await until(async () => {
      await threaded.search(queries[0]!, { topK: 1 });
      return threaded.stats().threads.workerParts >= 2;
    }, 'both workers');
    expect(threaded.stats().threads.threads).toBe(3);
    expect(await hits(threaded, queries)).toEqual(await hits(single, queries));
  });

  it('saves and loads a store whose memory is shared', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'zerda-threads-'));
    try {
      const threaded = store({ threads: nodeScanThreads(2) });
      await threaded.add(chunks(ROWS), { embeddings: data });
      await saveInMemoryVectorStore(threaded, directory);
      const loaded = await loadInMemoryVectorStore(directory, { threads: nodeScanThreads(2) });
      stores.push(loaded);
      await warm(loaded, queries[0]!);
      expect(await hits(loaded, queries)).toEqual(await hits(threaded, queries));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('scans on the caller thread once closed, with the same results', async () => {
    const single = store({});
    const threaded = store({ threads: nodeScanThreads(2) });
    await single.add(chunks(ROWS), { embeddings: data });
    await threaded.add(chunks(ROWS), { embeddings: data });
    await warm(threaded, queries[0]!);
    await threaded.close();
    const parts = threaded.stats().threads.workerParts;
    expect(await hits(threaded, queries)).toEqual(await hits(single, queries));
    expect(threaded.stats().threads).toEqual({ threads: 1, workerParts: parts });
  });

  it('gives up a worker that fails, says why, and scans on alone', async () => {
    const node = nodeScanThreads(2);
    const failing: ScanThreadHost = {
      threads: 2,
      start: (source, data, onError) =>
        node.start(`throw new Error('no kernels here');\n${source}`, data, onError),
    };
    const single = store({});
    const threaded = store({ threads: failing });
    await single.add(chunks(ROWS), { embeddings: data });
    await threaded.add(chunks(ROWS), { embeddings: data });
    await until(() => threaded.stats().threads.failure !== undefined, 'the failure');
    expect(threaded.stats().threads).toEqual({ threads: 1, workerParts: 0, failure: 'no kernels here' });
    expect(await hits(threaded, queries)).toEqual(await hits(single, queries));
  });

  it('refuses hosts it cannot use, saying why', () => {
    expect(() => nodeScanThreads(1)).toThrow(InvalidArgumentError);
    expect(() => nodeScanThreads(2.5)).toThrow(/integer from 2 to 256/);
    expect(() => new InMemoryVectorStore({ threads: {} as ScanThreadHost })).toThrow(/scan thread host/);
    expect(
      () => new InMemoryVectorStore({ threads: { threads: 1, start: () => ({ terminate() {} }) } }),
    ).toThrow(InvalidArgumentError);
    expect(() => new InMemoryVectorStore({ kernel: 'js', threads: nodeScanThreads(2) })).toThrow(
      /need the WebAssembly kernels/,
    );
  });
});
