import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Chunk, InMemoryVectorStore } from '@zerda/core';
import { formatBytes, meanOverlap, percentile, timeInterleaved } from '../lib/measure.js';
import { clusteredVectors, DIMENSION, round, settledBytes, type VectorData } from '../lib/vector-bench.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';

/*
 * FAISS (faiss-node, through @zerda/faiss) beside Zerda's in-memory store: top-10 cosine search
 * over clustered 384-dimensional unit vectors (the generator of suites/vector.ts), with a flat
 * (exact) index and an HNSW index with the store's defaults, searched at its default efSearch and at
 * two and four times that (suite faiss-sweep measures the other settings).
 * Recall@10 is measured against the in-memory store's exact scan.
 *
 * Memory: FAISS allocates its index in C++, which Node's heap and external counters do not see,
 * so a FAISS row counts the sidecar (heap + external after a full collection) plus the size of
 * the index as FAISS serialises it (its vectors and, for HNSW, its graph: what it holds in
 * memory). Build time includes the copy of every vector into the plain JavaScript arrays that
 * faiss-node takes. Queries are timed interleaved across the systems, as in suites/vector.ts.
 *
 * Needs faiss-node built (bash scripts/setup-faiss.sh); without it the suite says so and skips.
 */

const TOP_K = 10;
const QUERY_BUDGET_MS = 30_000;
const MIN_QUERIES = 20;
const REFERENCE = 'zerda exact';

// Imported lazily (and by path: the bench does not depend on @zerda/faiss), so that the other
// suites run on a machine without a faiss-node build.
export type FaissPackage = typeof import('@zerda/faiss');
type FaissStore = import('@zerda/faiss').FaissStore;

interface Built {
  search(query: Float32Array): Promise<string[]>;
  /** Bytes held outside what Node counts (FAISS's own allocations); measured after the build time. */
  nativeBytes?: () => Promise<number>;
  /** Work for later systems, done after the build time (for example saving an index to load). */
  after?: () => Promise<void>;
  /** Anything to say about the build (for example how long saving or loading took). */
  detail?: string;
}

interface System {
  name: string;
  notes: string;
  build(data: VectorData, faiss: FaissPackage, shared: Map<string, unknown>): Promise<Built>;
}

function chunksOf(ids: string[]): Chunk[] {
  return ids.map((id) => ({ id, text: '' }));
}

function embeddingsOf({ vectors, ids }: VectorData): Float32Array[] {
  return ids.map((_, row) => vectors.subarray(row * DIMENSION, (row + 1) * DIMENSION));
}

export function faissSearch(store: FaissStore) {
  return async (query: Float32Array) => {
    const { hits } = await store.search(query, { topK: TOP_K });
    return hits.map((hit) => hit.chunk.id);
  };
}

/** Bytes of the FAISS index as serialised: what FAISS holds in memory for it. */
async function indexBytes(store: FaissStore): Promise<number> {
  const directory = await mkdtemp(join(tmpdir(), 'zerda-bench-faiss-'));
  try {
    await store.save(directory);
    const { readdir, stat } = await import('node:fs/promises');
    const file = (await readdir(directory)).find((name) => name.endsWith('.index'))!;
    return (await stat(join(directory, file))).size;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** The systems, with the HNSW defaults of the @zerda/faiss that was loaded. */
const systemsWith = (HNSW: FaissPackage['HNSW_DEFAULTS']): System[] => [
  {
    name: 'zerda exact',
    notes: 'InMemoryVectorStore, cosine, WebAssembly SIMD scan (one thread); the recall reference',
    async build(data) {
      const store = new InMemoryVectorStore({ metric: 'cosine', kernel: 'wasm' });
      await store.add(chunksOf(data.ids), { embeddings: embeddingsOf(data) });
      return {
        async search(query) {
          return (await store.search(query, { topK: TOP_K })).hits.map((hit) => hit.chunk.id);
        },
      };
    },
  },
  {
    name: 'faiss flat',
    notes:
      'createFaissStore indexType flat: FAISS IndexFlatIP on unit vectors (exact), faiss-node 0.5.1 on Debian FAISS 1.7.3 + OpenBLAS',
    async build(data, faiss) {
      const store = faiss.createFaissStore({ indexType: 'flat', metric: 'cosine' });
      await store.add(chunksOf(data.ids), { embeddings: embeddingsOf(data) });
      return { search: faissSearch(store), nativeBytes: () => indexBytes(store) };
    },
  },
  {
    name: 'faiss hnsw default',
    notes: `createFaissStore indexType hnsw with the store's defaults: FAISS IndexHNSWFlat (HNSW${HNSW.m}, efConstruction ${HNSW.efConstruction}), efSearch ${HNSW.efSearch}, inner product (suite faiss-sweep chose them)`,
    async build(data, faiss, shared) {
      const store = faiss.createFaissStore({ indexType: 'hnsw', metric: 'cosine' });
      await store.add(chunksOf(data.ids), { embeddings: embeddingsOf(data) });
      return {
        search: faissSearch(store),
        nativeBytes: () => indexBytes(store),
        // Saved for the next system, which loads it with another efSearch.
        async after() {
          const directory = await mkdtemp(join(tmpdir(), 'zerda-bench-faiss-'));
          const saveStarted = performance.now();
          await store.save(directory);
          shared.set('hnsw', { directory, saveMs: performance.now() - saveStarted });
        },
      };
    },
  },
  loadedHnsw(HNSW.efSearch * 2),
  loadedHnsw(HNSW.efSearch * 4),
];

/** The HNSW index of 'faiss hnsw default', loaded from its save with another efSearch (build time = load time). */
function loadedHnsw(efSearch: number): System {
  return {
    name: `faiss hnsw ef${efSearch}`,
    notes: `the same HNSW index loaded from its save with efSearch ${efSearch} (build = load time)`,
    async build(_data, faiss, shared) {
      const saved = shared.get('hnsw') as { directory: string; saveMs: number } | undefined;
      if (saved === undefined) throw new Error("needs 'faiss hnsw default' to run first");
      const store = await faiss.loadFaissStore(saved.directory, { hnsw: { efSearch } });
      return {
        search: faissSearch(store),
        nativeBytes: () => indexBytes(store),
        detail: `save took ${Math.round(saved.saveMs)} ms`,
      };
    },
  };
}

interface Contender {
  system: System;
  built: Built;
  buildMs: number;
  memoryBytes: number;
  latencies: number[];
  results: string[][];
}

async function run({ sizes, queries: queryCount, skip, log }: BenchSuiteOptions): Promise<BenchRow[]> {
  const faiss = await importFaiss('faiss', log);
  if (faiss === undefined) return [];
  const ompNote = `OMP_WAIT_POLICY=${process.env.OMP_WAIT_POLICY}`;
  const rows: BenchRow[] = [];
  for (const size of sizes) {
    const started = performance.now();
    const data = clusteredVectors(size, queryCount, 1);
    log(
      `faiss: ${size} x ${DIMENSION} clustered vectors generated in ${Math.round(performance.now() - started)} ms`,
    );
    const shared = new Map<string, unknown>();
    const contenders: Contender[] = [];
    for (const system of systemsWith(faiss.HNSW_DEFAULTS)) {
      if (skip.includes(system.name)) continue;
      const before = await settledBytes();
      const buildStarted = performance.now();
      let built: Built;
      try {
        built = await system.build(data, faiss, shared);
      } catch (error) {
        log(
          `faiss: ${system.name} @ ${size}: not run (${error instanceof Error ? error.message : String(error)})`,
        );
        continue;
      }
      const buildMs = performance.now() - buildStarted;
      const memoryBytes = Math.max(0, (await settledBytes()) - before) + ((await built.nativeBytes?.()) ?? 0);
      await built.after?.();
      contenders.push({ system, built, buildMs, memoryBytes, latencies: [], results: [] });
      log(`faiss: ${system.name} @ ${size}: built in ${Math.round(buildMs)} ms, ${formatBytes(memoryBytes)}`);
    }
    const saved = shared.get('hnsw') as { directory: string } | undefined;
    if (saved !== undefined) await rm(saved.directory, { recursive: true, force: true });
    await timeInterleaved(contenders, data.queries, { budgetMs: QUERY_BUDGET_MS, minQueries: MIN_QUERIES });
    const reference = contenders.find((contender) => contender.system.name === REFERENCE)?.results;
    for (const { system, built, buildMs, memoryBytes, latencies, results } of contenders) {
      const searchMs = latencies.reduce((sum, ms) => sum + ms, 0);
      const row: BenchRow = {
        suite: 'faiss',
        system: system.name,
        size,
        buildMs: round(buildMs),
        memoryBytes,
        p50Ms: round(percentile(latencies, 50), 3),
        p99Ms: round(percentile(latencies, 99), 3),
        qps: round(latencies.length / (searchMs / 1000)),
        notes: [
          system.notes,
          system.name === REFERENCE ? '' : ompNote,
          built.detail ?? '',
          built.nativeBytes === undefined ? '' : 'memory: sidecar + FAISS index as serialised',
          latencies.length < data.queries.length ? `${latencies.length} queries within the time budget` : '',
        ]
          .filter((note) => note.length > 0)
          .join('; '),
      };
      if (reference !== undefined)
        row.quality = { 'recall@10': round(meanOverlap(results, reference, TOP_K), 4) };
      log(
        `faiss: ${system.name} @ ${size}: p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, ${row.qps} qps` +
          (row.quality === undefined ? '' : `, recall@10 ${row.quality['recall@10']}`),
      );
      rows.push(row);
    }
  }
  return rows;
}

/** @zerda/faiss with faiss-node loaded; undefined (and said in the log) where faiss-node is not usable. */
export async function importFaiss(
  suite: string,
  log: (line: string) => void,
): Promise<FaissPackage | undefined> {
  // FAISS's OpenMP threads spin-wait after each call by default; on a busy machine they starve
  // Node's main thread between queries (an HNSW query measured 24 ms at p50 instead of 0.34 ms).
  // Set before faiss-node loads libgomp, unless the environment chose otherwise; see the README.
  process.env.OMP_WAIT_POLICY ??= 'PASSIVE';
  try {
    const faiss = await import('@zerda/faiss');
    await faiss.loadFaissModule();
    return faiss;
  } catch (error) {
    log(
      `${suite}: skipped, faiss-node is not usable here: ${error instanceof Error ? error.message : error}`,
    );
    return undefined;
  }
}

export const faissSuite: BenchSuite = {
  name: 'faiss',
  defaultSizes: [100_000],
  run,
};
