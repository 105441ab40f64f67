import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileStorage } from '../collection/file-storage.js';
import { openCollection } from '../collection/index.js';
import { InvalidArgumentError } from '../errors/index.js';
import type { Chunk } from '../model/index.js';
import { bundleNodeScript } from '../test-utils/bundle-node-script.js';
import { gaussian, seededRandom } from './__tests__/clustered-data.js';
import {
  InMemoryVectorStore,
  type InMemoryVectorStoreSettings,
  type VectorQuantization,
} from './in-memory-vector-store.js';
import { createScanKernels, LinearMemory, type ScanKernels } from './kernels/kernels.js';
import { MIN_ROWS_PER_THREAD, type ScanThreadHost } from './kernels/scan-threads.js';
import { nodeScanThreads } from './kernels/scan-threads-node.js';
import { loadInMemoryVectorStore, saveInMemoryVectorStore } from './store-files.js';
import { kernelsFailing, kernelsLate, wakingLate } from './test-utils/slowed-scan-hosts.js';
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

/** Parts of split scans a worker did, or the caller took back from a worker that had not started. */
function splitParts(target: InMemoryVectorStore): number {
  const { workerParts, takenBack } = target.stats().threads;
  return workerParts + takenBack;
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

  /** A store that scans on one thread and one whose scans `threads` splits, both holding the rows. */
  async function filledPair(threads: ScanThreadHost, settings: InMemoryVectorStoreSettings = {}) {
    const single = store(settings);
    const threaded = store({ ...settings, threads });
    await single.add(chunks(ROWS), { embeddings: data });
    await threaded.add(chunks(ROWS), { embeddings: data });
    return { single, threaded };
  }
  const metrics: DistanceMetric[] = ['cosine', 'dot', 'l2'];

  for (const quantization of quantizations) {
    for (const metric of metrics) {
      it(`gives the single thread's hits and scores (${quantization}, ${metric}), also after the memory grows`, async () => {
        const { single, threaded } = await filledPair(nodeScanThreads(2), { quantization, metric });
        await warm(threaded, queries[0]!);
        const before = splitParts(threaded);
        expect(await hits(threaded, queries)).toEqual(await hits(single, queries));
        // Each of the 12 full scans handed its second half to the worker.
        expect(threaded.stats().threads.threads).toBe(2);
        expect(splitParts(threaded)).toBe(before + queries.length);

        // Growing moves the shared memory's end; the worker's instance must see the new rows.
        await single.add(chunks(ROWS, ROWS), { embeddings: more });
        await threaded.add(chunks(ROWS, ROWS), { embeddings: more });
        expect(await hits(threaded, queries, 25)).toEqual(await hits(single, queries, 25));
        expect(splitParts(threaded)).toBe(before + 2 * queries.length);
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

  it('serves concurrent searches one split scan at a time', async () => {
    const { single, threaded } = await filledPair(nodeScanThreads(2));
    await warm(threaded, queries[0]!);
    // All at once: each search waits for the split scan before it to finish.
    const together = await Promise.all(queries.map((query) => threaded.search(query, { topK: 10 })));
    expect(together.map((result) => result.hits)).toEqual(
      await Promise.all(queries.map(async (query) => (await single.search(query, { topK: 10 })).hits)),
    );
    expect(splitParts(threaded)).toBeGreaterThanOrEqual(queries.length);
  });

  it('makes adds, deletes and a close wait for a split scan in flight', async () => {
    // Workers that take 300 ms a part, so the writes below surely come while the scan is in flight.
    const slow = kernelsLate(nodeScanThreads(2), 300);
    const { single, threaded } = await filledPair(slow);
    await warm(threaded, queries[0]!);
    const expectedBefore = await hits(single, queries.slice(0, 1), 30);
    const inFlight = threaded.search(queries[0]!, { topK: 30 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const added = threaded.add(chunks(ROWS, ROWS), { embeddings: more });
    const deleted = threaded.delete(expectedBefore[0]!.slice(0, 5).map(([id]) => id));
    const closed = threaded.close();
    const result = await inFlight;
    expect([result.hits.map((hit) => [hit.chunk.id, hit.score])]).toEqual(expectedBefore);
    await Promise.all([added, deleted, closed]);
    await single.add(chunks(ROWS, ROWS), { embeddings: more });
    await single.delete(expectedBefore[0]!.slice(0, 5).map(([id]) => id));
    expect(await hits(threaded, queries, 30)).toEqual(await hits(single, queries, 30));
    expect(threaded.stats().threads.threads).toBe(1);
  });

  it('splits over three threads', async () => {
    const { single, threaded } = await filledPair(nodeScanThreads(3), { quantization: 'none' });
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

  it('reopens a collection whose store image is read straight into the shared memory', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'zerda-threads-collection-'));
    try {
      const texts = chunks(ROWS).map((chunk, row) => ({
        ...chunk,
        text: `word${row % 97} other${row % 13}`,
      }));
      const first = await openCollection({
        store: new InMemoryVectorStore({ dimension: DIMENSION, threads: nodeScanThreads(2) }),
        storage: createFileStorage(directory),
      });
      await first.add(texts, { embeddings: data });
      // A snapshot, so the reopen reads the store's arena image rather than replaying a log.
      await first.checkpoint();
      await first.close();
      const single = store({});
      await single.add(chunks(ROWS), { embeddings: data });
      const reopenedStore = store({ threads: nodeScanThreads(2) });
      const reopened = await openCollection({ store: reopenedStore, storage: createFileStorage(directory) });
      try {
        expect(await reopened.count()).toBe(ROWS);
        await warm(reopenedStore, queries[0]!);
        expect(await hits(reopenedStore, queries)).toEqual(await hits(single, queries));
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('scans on the caller thread once closed, with the same results', async () => {
    const { single, threaded } = await filledPair(nodeScanThreads(2));
    await warm(threaded, queries[0]!);
    await threaded.close();
    const { workerParts, takenBack, stolenChunks } = threaded.stats().threads;
    expect(await hits(threaded, queries)).toEqual(await hits(single, queries));
    expect(threaded.stats().threads).toEqual({ threads: 1, workerParts, takenBack, stolenChunks });
  });

  it('gives up a worker that fails, says why, and scans on alone', async () => {
    const node = nodeScanThreads(2);
    const failing: ScanThreadHost = {
      threads: 2,
      start: (source, data, onError) =>
        node.start(`throw new Error('no kernels here');\n${source}`, data, onError),
    };
    const { single, threaded } = await filledPair(failing);
    await until(() => threaded.stats().threads.failure !== undefined, 'the failure');
    expect(threaded.stats().threads).toEqual({
      threads: 1,
      workerParts: 0,
      takenBack: 0,
      stolenChunks: 0,
      failure: 'no kernels here',
    });
    expect(await hits(threaded, queries)).toEqual(await hits(single, queries));
  });

  it('keeps a process alive while a split scan is in flight, and not once it is idle', {
    timeout: 120_000,
  }, async () => {
    const here = dirname(fileURLToPath(import.meta.url));
    const work = await mkdtemp(join(tmpdir(), 'zerda-threads-process-'));
    try {
      const bundle = await bundleNodeScript(
        join(here, 'test-utils/threaded-search-script.ts'),
        work,
        'script.mjs',
      );
      // Plain Node, nothing else on its event loop: no test runner holding the process open.
      const script = async (...args: string[]) => {
        const { stdout } = await promisify(execFile)(process.execPath, [bundle, ...args], {
          env: { ...process.env, NODE_OPTIONS: '' },
          timeout: 60_000,
        });
        return JSON.parse(stdout);
      };
      expect(await script()).toMatchObject({ found: 100, splitParts: 20 });
      // A worker asleep: each search scans the worker's part itself, then takes it back.
      expect(await script('asleep')).toEqual({ found: 100, splitParts: 20, takenBack: 20 });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('scans alone, saying why, when the host cannot start a worker', async () => {
    const refusing: ScanThreadHost = {
      threads: 3,
      start: () => {
        throw new Error('workers are not allowed here');
      },
    };
    const { single, threaded } = await filledPair(refusing);
    expect(await hits(threaded, queries)).toEqual(await hits(single, queries));
    expect(threaded.stats().threads).toEqual({
      threads: 1,
      workerParts: 0,
      takenBack: 0,
      stolenChunks: 0,
      failure: 'workers are not allowed here',
    });
  });

  it('starts no worker for a host of one thread (a one-core machine)', async () => {
    let started = 0;
    const node = nodeScanThreads(1);
    const counting: ScanThreadHost = {
      threads: node.threads,
      start: (source, data, onError) => {
        started++;
        return node.start(source, data, onError);
      },
    };
    const { single, threaded: alone } = await filledPair(counting);
    expect(await hits(alone, queries)).toEqual(await hits(single, queries));
    expect(started).toBe(0);
    expect(alone.stats().threads).toEqual({ threads: 1, workerParts: 0, takenBack: 0, stolenChunks: 0 });
  });

  it('refuses hosts it cannot use, saying why', () => {
    expect(() => nodeScanThreads(0)).toThrow(InvalidArgumentError);
    expect(() => nodeScanThreads(2.5)).toThrow(/integer from 1 to 256/);
    expect(() => new InMemoryVectorStore({ threads: {} as ScanThreadHost })).toThrow(/scan thread host/);
    expect(
      () => new InMemoryVectorStore({ threads: { threads: 0, start: () => ({ terminate() {} }) } }),
    ).toThrow(InvalidArgumentError);
    expect(() => new InMemoryVectorStore({ kernel: 'js', threads: nodeScanThreads(2) })).toThrow(
      /need the WebAssembly kernels/,
    );
  });
});

describe('the split between the caller and the workers', () => {
  const rows = 4 * MIN_ROWS_PER_THREAD;
  // Rows of 256 bytes (float32) and 64 bytes (int8): a worker's part is several chunks.
  const stride = 64;
  const strideBytes = 64;
  // Regions of one shared memory: float32 rows, int8 rows, scales and code sums, the two queries
  // (the int8 one as ScanKernels.dotI8All reads it), two outputs.
  const layout = (() => {
    let offset = 0;
    const take = (bytes: number) => {
      const start = offset;
      offset += Math.ceil(bytes / 16) * 16;
      return start;
    };
    return {
      vectors: take(rows * stride * 4),
      codes: take(rows * strideBytes),
      scales: take(rows * 4),
      sums: take(rows * 4),
      query: take(stride * 4),
      queryCodes: take(strideBytes * 3),
      out: take(rows * 4),
      expected: take(rows * 4),
      failures: take(4),
      end: offset,
    };
  })();
  const kernelsList: ScanKernels[] = [];

  afterAll(() => {
    for (const kernels of kernelsList) kernels.threads?.close();
  });

  /** Kernels over a shared memory holding random rows, split over `host`'s threads. */
  function splitKernels(host: ScanThreadHost): { kernels: ScanKernels; memory: LinearMemory } {
    const memory = new LinearMemory('wasm', layout.end, true);
    const kernels = createScanKernels(memory, host);
    kernelsList.push(kernels);
    const random = seededRandom(5);
    const f32 = new Float32Array(memory.buffer);
    for (let index = 0; index < rows * stride; index++) f32[layout.vectors / 4 + index] = random() - 0.5;
    const i8 = new Int8Array(memory.buffer, layout.codes, rows * strideBytes);
    for (let index = 0; index < i8.length; index++) i8[index] = Math.floor(random() * 255) - 127;
    for (let row = 0; row < rows; row++) f32[layout.scales / 4 + row] = 0.5 + random();
    kernels.codeSums?.(layout.codes, rows, strideBytes, layout.sums);
    return { kernels, memory };
  }

  /** A new random query, scanned with both kernels split, each checked against one thread's scan. */
  async function scanBoth(kernels: ScanKernels, memory: LinearMemory, meanwhile: () => void) {
    const random = seededRandom(Math.floor(Math.random() * 1e9));
    const f32 = new Float32Array(memory.buffer);
    const i16 = new Int16Array(memory.buffer, layout.queryCodes, strideBytes);
    for (let j = 0; j < stride; j++) f32[layout.query / 4 + j] = random() - 0.5;
    const offsetCodes = new Uint8Array(memory.buffer, layout.queryCodes + strideBytes * 2, strideBytes);
    for (let j = 0; j < strideBytes; j++) {
      i16[j] = Math.floor(random() * 127) - 63;
      offsetCodes[j] = i16[j]! + 64;
    }
    const out = new Float32Array(memory.buffer, layout.out, rows);
    const expected = new Float32Array(memory.buffer, layout.expected, rows);
    const threads = kernels.threads!;

    kernels.dotF32All(layout.query, layout.vectors, rows, stride, layout.expected);
    out.fill(Number.NaN);
    let pending = threads.dotF32AllAsync(
      kernels.dotF32All,
      layout.query,
      layout.vectors,
      rows,
      stride,
      layout.out,
    );
    meanwhile();
    await pending;
    expect(firstDifference(out, expected)).toBe(-1);

    const { queryCodes, codes, scales, sums } = layout;
    kernels.dotI8All(queryCodes, codes, rows, strideBytes, scales, layout.expected, sums);
    out.fill(Number.NaN);
    pending = threads.dotI8AllAsync(
      kernels.dotI8All,
      queryCodes,
      codes,
      rows,
      strideBytes,
      layout.scales,
      layout.out,
      sums,
    );
    meanwhile();
    await pending;
    expect(firstDifference(out, expected)).toBe(-1);
  }

  /** The first index where the scores differ (-1: none); cheaper than a deep equality of 16,384 values. */
  function firstDifference(a: Float32Array, b: Float32Array): number {
    for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return index;
    return -1;
  }

  async function ready(kernels: ScanKernels, memory: LinearMemory): Promise<void> {
    await until(async () => {
      await scanBoth(kernels, memory, () => {});
      return kernels.threads!.state.workerParts > 0;
    }, 'the scan workers to take part');
  }

  /** Blocks this thread for `ms` milliseconds. */
  const pause = (ms: number) => () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

  it('starts even, and gives the caller more rows while the workers answer late, scores unchanged', async () => {
    // Every kernel call in the worker starts 3 ms late, as a worker slow to wake would.
    const late = kernelsLate(nodeScanThreads(2), 3);
    const { kernels, memory } = splitKernels(late);
    expect(kernels.threads!.callerShares).toEqual({ f32: 0.5, i8: 0.5 });
    await ready(kernels, memory);
    // A busy worker moves the share by 1/512 a scan: 90 scans take it past 0.67.
    for (let scan = 0; scan < 90; scan++) await scanBoth(kernels, memory, () => {});
    const shares = kernels.threads!.callerShares;
    expect(shares.f32).toBeGreaterThan(0.6);
    expect(shares.i8).toBeGreaterThan(0.6);
    // Never more than the bound: each worker keeps at least half an even part.
    expect(Math.max(shares.f32, shares.i8)).toBeLessThanOrEqual(0.75);
    // Done with its own part, the caller scanned the chunks the worker had not claimed yet.
    expect(kernels.threads!.state.stolenChunks).toBeGreaterThan(0);
    expect(kernels.threads!.state.failure).toBeUndefined();
  });

  it('scans a part again whole when its worker fails partway through it, scores unchanged', async () => {
    // The worker's first kernel call scans a chunk; every later one throws, counting its throws in
    // the memory: from its second part on, it fails on its first chunk.
    const failing = kernelsFailing(nodeScanThreads(2), 1, layout.failures);
    const { kernels, memory } = splitKernels(failing);
    const failures = new Int32Array(memory.buffer, layout.failures, 1);
    // Every scan checks each score against one thread's: none is left from a failed chunk.
    await until(async () => {
      await scanBoth(kernels, memory, () => {});
      return Atomics.load(failures, 0) > 0;
    }, 'a worker kernel to fail');
    for (let scan = 0; scan < 3; scan++) await scanBoth(kernels, memory, () => {});
    expect(kernels.threads!.state).toMatchObject({ threads: 2 });
  });

  it('takes back a part whose worker has not started it when the caller is done, scores unchanged', async () => {
    // The worker sleeps 200 ms each time it wakes for a job, before it can start it, as a thread
    // the machine does not schedule would.
    const asleep = wakingLate(nodeScanThreads(2), 200);
    const { kernels, memory } = splitKernels(asleep);
    const threads = kernels.threads!;
    // Until the worker is ready, the caller scans alone; from then on each part goes to it.
    await until(async () => {
      await scanBoth(kernels, memory, () => {});
      return threads.state.takenBack > 0;
    }, 'a part taken back');
    const before = threads.state;
    // Five scans of each kernel take milliseconds: the worker, asleep, starts none of them, and
    // the caller scans all their chunks.
    for (let scan = 0; scan < 5; scan++) await scanBoth(kernels, memory, () => {});
    expect(threads.state.stolenChunks).toBeGreaterThanOrEqual(before.stolenChunks + 10);
    expect(threads.state).toEqual({
      threads: 2,
      workerParts: before.workerParts,
      takenBack: before.takenBack + 10,
      stolenChunks: threads.state.stolenChunks,
    });
  });

  it('gives the caller fewer rows while it has other work before it waits, scores unchanged', async () => {
    const { kernels, memory } = splitKernels(nodeScanThreads(2));
    await ready(kernels, memory);
    for (let scan = 0; scan < 60; scan++) await scanBoth(kernels, memory, pause(3));
    const shares = kernels.threads!.callerShares;
    expect(shares.f32).toBeLessThan(0.45);
    expect(shares.i8).toBeLessThan(0.45);
    expect(Math.min(shares.f32, shares.i8)).toBeGreaterThanOrEqual(0.25);
  });
});
