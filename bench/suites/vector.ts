import { Worker } from 'node:worker_threads';
import { type Chunk, InMemoryVectorStore, type InMemoryVectorStoreSettings } from '@zerda/core';
import { nodeScanThreads } from '@zerda/core/node';
import usearch from 'usearch';
// The store's own scan kernels (private to core, so imported from its source): the compute floors
// below time exactly the code the store runs.
import { createScanKernels, LinearMemory } from '../../packages/core/src/vector/kernels/kernels.js';
import { quantizeQuery } from '../../packages/core/src/vector/vector-arena.js';
import { formatBytes, meanOverlap, percentile, timeInterleaved } from '../lib/measure.js';
import {
  clusteredVectors,
  DIMENSION,
  int8KernelNote,
  round,
  settledBytes,
  type VectorData,
} from '../lib/vector-bench.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';

/*
 * Flat (exhaustive) top-10 search by cosine similarity over clustered 384-dimensional vectors:
 * Zerda's in-memory store (WebAssembly SIMD scan: exact, int8 + exact re-scoring, int8 codes
 * only, and its plain JavaScript fallback), a plain JavaScript scan, and usearch's exact search.
 *
 * Two rows measure the machine rather than a system: one read of a buffer the size of the
 * float32 vectors (and one the size of the int8 codes) by a WebAssembly SIMD load loop, timed
 * interleaved with the searches like any of them, so each scan can be compared with the memory
 * bandwidth of the same moment (`quality.vsBandwidth`: the scan's p50 over the read's p50).
 * Two more measure the compute side: the store's own float32 and int8 kernels scanning a block
 * of rows small enough to stay in cache, as many times as the data has rows, so the time is the
 * kernel's arithmetic with no memory traffic (`quality.vsCompute`: the scan's p50 over that
 * floor's, divided by its threads). A scan near both floors is at the machine's limit; the
 * floors also say how fast the machine was during the run (a shared VM varies by the hour).
 * Every row also reports the CPU time of its median query (`quality.cpuP50Ms`): on a shared
 * machine the wall-clock time includes waits for a core, the CPU time does not.
 *
 * Every system gets the same unit-length vectors, so cosine is a dot product for all of them
 * (usearch runs its inner-product metric, its fastest exact path). Recall@10 is measured against
 * the plain JavaScript scan, which sums in float64. Queries are timed interleaved across the
 * systems (see `timeInterleaved`), so a busy machine slows them all alike.
 */

const TOP_K = 10;
/** Search time one system may spend at one size; slower systems are timed on fewer queries. */
const QUERY_BUDGET_MS = 30_000;
const MIN_QUERIES = 20;
/** Which system's results recall is measured against, the first that ran. */
const REFERENCE_ORDER = ['plain js', 'usearch exact 1t', 'usearch exact', 'zerda exact'];

interface BuiltSystem {
  /** Top-10 ids, best first. */
  search(query: Float32Array): string[] | Promise<string[]>;
  /** Bytes per vector the system itself reports (Zerda's stores). */
  bytesPerVector?: number;
  /** Bytes in a shared WebAssembly memory, which `process.memoryUsage()` does not count. */
  sharedBytes?: number;
  /** What the system says of itself for the row's notes (which kernel Zerda's int8 scans use). */
  notes?: string;
  /** Stops what the system started (scan workers), once it has been timed. */
  close?(): Promise<void>;
}

interface VectorSystem {
  name: string;
  notes: string;
  build(data: VectorData): BuiltSystem | Promise<BuiltSystem>;
  /** A memory-bandwidth probe: no results (no recall), and the scans are compared with it. */
  bandwidth?: 'float32' | 'int8';
  /** A compute-floor probe (see `computeFloor`): no results, and the scans are compared with it. */
  compute?: 'float32' | 'int8';
  /** Threads the system reads or scans with, when more than one: compared with the probe of as many. */
  threads?: number;
}

function zerda(settings: InMemoryVectorStoreSettings): VectorSystem['build'] {
  return async ({ vectors, ids }) => {
    const store = new InMemoryVectorStore({ metric: 'cosine', ...settings });
    const chunks: Chunk[] = ids.map((id) => ({ id, text: '' }));
    const embeddings = ids.map((_, row) => vectors.subarray(row * DIMENSION, (row + 1) * DIMENSION));
    await store.add(chunks, { embeddings });
    return {
      async search(query) {
        const { hits } = await store.search(query, { topK: TOP_K });
        return hits.map((hit) => hit.chunk.id);
      },
      bytesPerVector: store.stats().bytesPerVector,
      notes: int8KernelNote(store.stats().int8Kernel),
      // A threaded store's scan memory is shared; its norms (8 bytes a row) are a plain array,
      // already counted.
      sharedBytes: settings.threads === undefined ? 0 : store.stats().vectorBytes - 8 * ids.length,
      close: () => store.close(),
    };
  };
}

/**
 * The bandwidth probe's kernel, compiled from this WebAssembly text (wabt, `simd: true`):
 *
 *   (func (export "read_all") (param $p i32) (param $bytes i32) (result i32)
 *     ;; 64 bytes a step: four v128.load, each added (i32x4.add) into its own accumulator,
 *     ;; so the loop is bound by the loads; returns a lane so the loads cannot be dropped.
 */
const READ_ALL_WASM =
  'AGFzbQEAAAABBwFgAn9/AX8CDwEDZW52Bm1lbW9yeQIAAQMCAQAHDAEIcmVhZF9hbGwAAApxAW8CAX8EeyAAIAFBQHFqIQICQANAIAAgAk8NASADIAD9' +
  'AAQA/a4BIQMgBCAA/QAEEP2uASEEIAUgAP0ABCD9rgEhBSAGIAD9AAQw/a4BIQYgAEHAAGohAAwACwsgAyAE/a4BIAUgBv2uAf2uAf0bAAs=';

/**
 * The same module over a shared memory (for the two-thread probe): its memory import's limits
 * `00 01` (min 1) become `03 01 80 80 04` (shared, min 1, max 65,536 pages), and the import
 * section's size grows by those 3 bytes, from 15 to 18.
 */
function sharedReadAllWasm(): Uint8Array {
  const plain = Buffer.from(READ_ALL_WASM, 'base64');
  const importSection = Buffer.from('020f0103656e76066d656d6f7279020001', 'hex');
  const at = plain.indexOf(importSection);
  if (at < 0) throw new Error('the probe module has an unexpected import section');
  const shared = Buffer.from('02120103656e76066d656d6f7279020301808004', 'hex');
  return Buffer.concat([plain.subarray(0, at), shared, plain.subarray(at + importSection.length)]);
}

/** The part of the WebAssembly API the probe uses (the bench's TypeScript setup has no DOM types). */
interface WasmApi {
  Memory: new (descriptor: {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }) => { buffer: ArrayBuffer };
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

/**
 * One read of a buffer as large as the vectors (`bytesPerValue` 4) or their int8 codes (1). With
 * two threads, the buffer is a shared memory and a worker reads its second half while this thread
 * reads the first (as a split scan divides its rows).
 */
function bandwidthProbe(bytesPerValue: 4 | 1, threads: 1 | 2 = 1): VectorSystem['build'] {
  return ({ vectors }) => {
    const api = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    const bytes = Math.ceil((vectors.length * bytesPerValue) / 64) * 64;
    const initial = Math.ceil(bytes / 65_536);
    const memory =
      threads === 1
        ? new api.Memory({ initial })
        : new api.Memory({ initial, maximum: 65_536, shared: true });
    // Real data in it, so no page is left untouched (an untouched page reads as a shared zero page).
    const source = new Uint8Array(vectors.buffer, vectors.byteOffset, Math.min(bytes, vectors.byteLength));
    new Uint8Array(memory.buffer).set(source);
    const module = new api.Module(threads === 1 ? Buffer.from(READ_ALL_WASM, 'base64') : sharedReadAllWasm());
    const readAll = new api.Instance(module, { env: { memory } }).exports.read_all as (
      start: number,
      length: number,
    ) => number;
    let sink = 0;
    if (threads === 1) {
      return {
        search() {
          sink ^= readAll(0, bytes);
          return sink === 0.5 ? ['never'] : [];
        },
      };
    }
    // Control words: [request, done]; the worker reads [half, bytes) for each request.
    const half = Math.floor(bytes / 128) * 64;
    const control = new Int32Array(new SharedArrayBuffer(8));
    const worker = new Worker(
      `const { workerData: { module, memory, words, half, bytes } } = require('node:worker_threads');
       const control = new Int32Array(words);
       const readAll = new WebAssembly.Instance(module, { env: { memory } }).exports.read_all;
       let seen = 0, sink = 0;
       for (;;) {
         Atomics.wait(control, 0, seen);
         seen = Atomics.load(control, 0);
         sink ^= readAll(half, bytes - half);
         Atomics.store(control, 1, seen + (sink & 0));
         Atomics.notify(control, 1);
       }`,
      { eval: true, workerData: { module, memory, words: control.buffer, half, bytes } },
    );
    worker.unref();
    let request = 0;
    return {
      sharedBytes: initial * 65_536,
      close: async () => {
        await worker.terminate();
      },
      search() {
        request++;
        Atomics.store(control, 0, request);
        Atomics.notify(control, 0);
        sink ^= readAll(0, half);
        while (Atomics.load(control, 1) !== request) Atomics.wait(control, 1, request - 1, 1000);
        return sink === 0.5 ? ['never'] : [];
      },
    };
  };
}

/** Rows of the block a compute floor scans over and over: 768 KB, within one core's L2 cache. */
const FLOOR_BLOCK_BYTES = 768 * 1024;

/**
 * The scan's arithmetic alone: the store's own kernels (`dotF32All`, or over int8 codes of the
 * same vectors `dotI8All`: relaxed SIMD's where the runtime has it, SIMD128's elsewhere) run over a
 * block of the data's first rows that stays in cache, as many times as it takes to score as many
 * rows as the data has. No memory traffic, same work.
 */
function computeFloor(kind: 'float32' | 'int8'): VectorSystem['build'] {
  return ({ vectors, ids }) => {
    const count = ids.length;
    const rowBytes = DIMENSION * (kind === 'float32' ? 4 : 1);
    const block = Math.min(count, Math.floor(FLOOR_BLOCK_BYTES / rowBytes));
    // Layout: the query (float32, or its codes as the int8 kernels read them), rows, per-row
    // scales and code sums (int8), scores.
    const query = 0;
    const base = DIMENSION * 4;
    const scales = base + block * rowBytes;
    const sums = scales + block * 4;
    const out = sums + block * 4;
    const memory = new LinearMemory('wasm', out + block * 4);
    const kernels = createScanKernels(memory);
    const buffer = memory.buffer;
    if (kind === 'float32') {
      new Float32Array(buffer, base, block * DIMENSION).set(vectors.subarray(0, block * DIMENSION));
    } else {
      // Unit vectors: each value times 127 is an int8 code (the store scales per row; the
      // arithmetic is the same).
      const codes = new Int8Array(buffer, base, block * DIMENSION);
      for (let i = 0; i < codes.length; i++) codes[i] = Math.round(vectors[i]! * 127);
      new Float32Array(buffer, scales, block).fill(1 / 127);
      kernels.codeSums?.(base, block, DIMENSION, sums);
    }
    const relaxed = kernels.codeSums === undefined ? undefined : new Int8Array(buffer);
    return {
      search(vector) {
        if (kind === 'float32') new Float32Array(buffer, query, DIMENSION).set(vector);
        else quantizeQuery(vector, 0, DIMENSION, DIMENSION, query, new Int16Array(buffer), relaxed);
        for (let done = 0; done < count; done += block) {
          const rows = Math.min(block, count - done);
          if (kind === 'float32') kernels.dotF32All(query, base, rows, DIMENSION, out);
          else kernels.dotI8All(query, base, rows, DIMENSION, scales, out, sums);
        }
        return [];
      },
    };
  };
}

const systems: VectorSystem[] = [
  {
    name: 'memory bandwidth f32',
    notes:
      'not a search: one read of a buffer the size of the float32 vectors by a WebAssembly SIMD load loop ' +
      '(4 x v128.load per 64 bytes), timed interleaved with the searches; the floor for an exact float32 scan',
    build: bandwidthProbe(4),
    bandwidth: 'float32',
  },
  {
    name: 'memory bandwidth i8',
    notes: 'as above, a buffer the size of the int8 codes (one byte a value): the floor for an int8 scan',
    build: bandwidthProbe(1),
    bandwidth: 'int8',
  },
  {
    name: 'memory bandwidth f32 2t',
    notes:
      "as 'memory bandwidth f32', read by two threads (a worker reads the second half of a shared memory): " +
      "the floor for the '2t' exact scan",
    build: bandwidthProbe(4, 2),
    bandwidth: 'float32',
    threads: 2,
  },
  {
    name: 'memory bandwidth i8 2t',
    notes: "as 'memory bandwidth i8', read by two threads: the floor for the '2t' int8 scans",
    build: bandwidthProbe(1, 2),
    bandwidth: 'int8',
    threads: 2,
  },
  {
    name: 'compute floor f32',
    notes:
      'not a search: the exact scan kernel (dot_f32_all) over a 768 KB block of rows kept in cache, run ' +
      'until it has scored as many rows as the data has: the arithmetic of an exact scan without its memory traffic',
    build: computeFloor('float32'),
    compute: 'float32',
  },
  {
    name: 'compute floor i8',
    notes:
      'as above, the int8 scan kernel the store uses here (relaxed SIMD where the runtime has it, SIMD128 ' +
      'elsewhere) over codes: the arithmetic of the int8 scans',
    build: computeFloor('int8'),
    compute: 'int8',
  },
  {
    name: 'zerda exact',
    notes:
      "InMemoryVectorStore quantization 'none', cosine, WebAssembly SIMD f32x4 scan (one thread) + bounded-heap top-k",
    build: zerda({ kernel: 'wasm', quantization: 'none' }),
  },
  {
    name: 'zerda int8+rescore',
    notes:
      "InMemoryVectorStore quantization 'int8' (the default): a dot-product scan of per-vector int8 codes " +
      '(relaxed SIMD or SIMD128, see below) for max(4k, 100) candidates, re-scored exactly from the float32 copy',
    build: zerda({ kernel: 'wasm', quantization: 'int8' }),
  },
  {
    name: 'zerda int8-only',
    notes:
      "InMemoryVectorStore quantization 'int8-only': the same int8 scan, no float32 copy; the candidates " +
      're-scored with the float32 query against their codes times their scale',
    build: zerda({ kernel: 'wasm', quantization: 'int8-only' }),
  },
  {
    name: 'zerda exact 2t',
    notes:
      "as 'zerda exact', each scan split over 2 threads (the caller's and one worker: nodeScanThreads(2))",
    build: zerda({ kernel: 'wasm', quantization: 'none', threads: nodeScanThreads(2) }),
    threads: 2,
  },
  {
    name: 'zerda int8+rescore 2t',
    notes: "as 'zerda int8+rescore', the int8 scan split over 2 threads (nodeScanThreads(2))",
    build: zerda({ kernel: 'wasm', quantization: 'int8', threads: nodeScanThreads(2) }),
    threads: 2,
  },
  {
    name: 'zerda int8-only 2t',
    notes: "as 'zerda int8-only', the int8 scan split over 2 threads (nodeScanThreads(2))",
    build: zerda({ kernel: 'wasm', quantization: 'int8-only', threads: nodeScanThreads(2) }),
    threads: 2,
  },
  {
    name: 'zerda exact js',
    notes:
      'InMemoryVectorStore with the plain JavaScript fallback kernels (runtimes without WebAssembly SIMD)',
    build: zerda({ kernel: 'js', quantization: 'none' }),
  },
  {
    name: 'plain js',
    notes: 'a Float32Array loop (float64 sums) and a sort-free top-10 insertion list; the recall reference',
    build(data) {
      // Its own copy, as an index would hold (and so its memory is counted).
      const vectors = data.vectors.slice();
      const { ids } = data;
      const count = ids.length;
      return {
        search(query) {
          const bestScores = new Float64Array(TOP_K).fill(Number.NEGATIVE_INFINITY);
          const bestRows = new Int32Array(TOP_K).fill(-1);
          for (let row = 0, offset = 0; row < count; row++, offset += DIMENSION) {
            let score = 0;
            for (let j = 0; j < DIMENSION; j++) score += vectors[offset + j]! * query[j]!;
            if (score <= bestScores[TOP_K - 1]!) continue;
            let position = TOP_K - 1;
            while (position > 0 && bestScores[position - 1]! < score) {
              bestScores[position] = bestScores[position - 1]!;
              bestRows[position] = bestRows[position - 1]!;
              position--;
            }
            bestScores[position] = score;
            bestRows[position] = row;
          }
          return Array.from(bestRows, (row) => ids[row]!).filter((id) => id !== undefined);
        },
      };
    },
  },
  {
    name: 'usearch exact',
    notes:
      'usearch 2.26.2 exactSearch, inner product on the unit vectors, threads 0 (all cores). Data and ' +
      'queries passed as whole arrays: exactSearch ignores a typed array byteOffset',
    build: usearchExact(0),
  },
  {
    name: 'usearch exact 1t',
    notes: "usearch exactSearch as above on one thread (like Zerda's rows without '2t')",
    build: usearchExact(1),
  },
];

function usearchExact(threads: number): VectorSystem['build'] {
  return ({ vectors, ids }) => {
    // A copy that owns its buffer from byte 0 (see the note on byteOffset).
    const dataset = vectors.slice();
    return {
      search(query) {
        const result = usearch.exactSearch(
          dataset,
          query.slice(),
          DIMENSION,
          TOP_K,
          usearch.MetricKind.IP,
          threads,
        );
        return Array.from(result.keys as BigUint64Array, (key) => ids[Number(key)]!);
      },
    };
  };
}

async function run({ sizes, queries: queryCount, skip, log }: BenchSuiteOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const size of sizes) {
    const started = performance.now();
    const data = clusteredVectors(size, queryCount, 1);
    log(
      `vector: ${size} x ${DIMENSION} clustered vectors generated in ${Math.round(performance.now() - started)} ms`,
    );
    const contenders: Contender[] = [];
    for (const system of systems) {
      if (skip.includes(system.name)) continue;
      const before = await settledBytes();
      const buildStarted = performance.now();
      const built = await system.build(data);
      const buildMs = performance.now() - buildStarted;
      const memoryBytes = Math.max(0, (await settledBytes()) - before) + (built.sharedBytes ?? 0);
      contenders.push({ system, built, buildMs, memoryBytes, latencies: [], cpuLatencies: [], results: [] });
      log(
        `vector: ${system.name} @ ${size}: built in ${Math.round(buildMs)} ms, ${formatBytes(memoryBytes)}`,
      );
    }
    await timeInterleaved(contenders, data.queries, { budgetMs: QUERY_BUDGET_MS, minQueries: MIN_QUERIES });
    for (const { built } of contenders) await built.close?.();
    // The float64 scan when it ran, else another exact system (when the slow ones are skipped).
    const referenceSystem = REFERENCE_ORDER.map((name) =>
      contenders.find((contender) => contender.system.name === name),
    ).find((contender) => contender !== undefined);
    const reference = referenceSystem?.results;
    const bandwidthP50 = (kind: 'float32' | 'int8', threads: number): number | undefined => {
      const probe = contenders.find(
        (contender) => contender.system.bandwidth === kind && (contender.system.threads ?? 1) === threads,
      );
      return probe === undefined ? undefined : percentile(probe.latencies, 50);
    };
    const computeP50 = (kind: 'float32' | 'int8'): number | undefined => {
      const probe = contenders.find((contender) => contender.system.compute === kind);
      return probe === undefined ? undefined : percentile(probe.latencies, 50);
    };
    for (const { system, built, buildMs, memoryBytes, latencies, cpuLatencies, results } of contenders) {
      const searchMs = latencies.reduce((sum, ms) => sum + ms, 0);
      const row: BenchRow = {
        suite: 'vector',
        system: system.name,
        size,
        buildMs: round(buildMs),
        memoryBytes,
        p50Ms: round(percentile(latencies, 50), 3),
        p99Ms: round(percentile(latencies, 99), 3),
        qps: round(latencies.length / (searchMs / 1000)),
        notes: [
          system.notes,
          built.notes ?? '',
          latencies.length < data.queries.length ? `${latencies.length} queries within the time budget` : '',
          referenceSystem !== undefined && referenceSystem.system.name !== 'plain js'
            ? `recall against ${referenceSystem.system.name}`
            : '',
        ]
          .filter((note) => note.length > 0)
          .join('; '),
      };
      const quality: Record<string, number> = { cpuP50Ms: round(percentile(cpuLatencies, 50), 3) };
      if (system.bandwidth !== undefined) {
        const bytes = size * DIMENSION * (system.bandwidth === 'float32' ? 4 : 1);
        const best = Math.min(...latencies);
        quality.bestMs = round(best, 3);
        quality.gbPerSecondP50 = round(bytes / (percentile(latencies, 50) * 1e6), 2);
        quality.gbPerSecondBest = round(bytes / (best * 1e6), 2);
      } else if (system.compute !== undefined) {
        quality.bestMs = round(Math.min(...latencies), 3);
      } else {
        if (reference !== undefined) quality['recall@10'] = round(meanOverlap(results, reference, TOP_K), 4);
        quality.bytesPerVector = round(built.bytesPerVector ?? memoryBytes / size, 1);
        // The scan's floor: the read of its own data (codes for the int8 modes, float32 otherwise).
        const kind = system.name.includes('int8') ? 'int8' : 'float32';
        const threads = system.threads ?? 1;
        const floor = bandwidthP50(kind, threads);
        if (floor !== undefined && floor > 0)
          quality.vsBandwidth = round(percentile(latencies, 50) / floor, 2);
        // Only Zerda's WebAssembly scans run these kernels.
        const wasmScan = system.name.startsWith('zerda') && !system.name.endsWith(' js');
        const arithmetic = wasmScan ? computeP50(kind) : undefined;
        if (arithmetic !== undefined && arithmetic > 0)
          quality.vsCompute = round((percentile(latencies, 50) * threads) / arithmetic, 2);
      }
      row.quality = quality;
      log(
        `vector: ${system.name} @ ${size}: p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, ${row.qps} qps, ` +
          Object.entries(quality)
            .map(([key, value]) => `${key} ${value}`)
            .join(', '),
      );
      rows.push(row);
    }
  }
  return rows;
}

interface Contender {
  system: VectorSystem;
  built: BuiltSystem;
  buildMs: number;
  memoryBytes: number;
  latencies: number[];
  cpuLatencies: number[];
  /** Top-10 ids of the timed queries, query i at position i. */
  results: string[][];
}

export const vectorSuite: BenchSuite = {
  name: 'vector',
  defaultSizes: [10_000, 100_000],
  run,
};
