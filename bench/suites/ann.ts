import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Chunk, InMemoryVectorStore } from '@zerda/core';
import { mulberry32 } from '../corpus/synthetic.js';
import { meanOverlap, percentile, type TimedContender, timeInterleaved } from '../lib/measure.js';
import { DIMENSION, int8KernelNote, round, settledBytes } from '../lib/vector-bench.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';
import { type FaissPackage, faissSearch, importFaiss } from './faiss.js';

/*
 * Approximate nearest neighbours at scale (issue 19 item 4): the in-memory store's IVF index
 * beside FAISS HNSW (through @zerda/faiss) and hnswlib-node, on clustered 384-dimensional unit
 * vectors: 2,048 Gaussian clusters in a 32-dimensional subspace projected to 384 dimensions plus
 * noise, so neighbourhoods are real and approximate recall means something.
 *
 * Per system: build time (the store's add plus training and assignment; a peer's add), memory of
 * the index (the store's `stats().vectorBytes`, which counts its arena and index; a peer's index
 * as it serialises it, which is what it holds in memory), and a recall/latency sweep (IVF probes;
 * HNSW efSearch), recall@10 against the exact top 10 of the store's own exact scan. The variants
 * of one system are timed interleaved (query i goes to each variant in turn); systems run one
 * after the other, so that only one index of a million vectors is in memory at a time. The log
 * names, per system, the fastest variant at recall@10 >= 0.95.
 *
 * At 1,000,000 x 384 an HNSW build takes many minutes on two cores: the peers' efConstruction is
 * ZERDA_BENCH_ANN_EFC (default 80), M 16 (hnswlib) and 32 (FAISS, the store's default).
 * `--skip faiss,hnswlib` leaves them out.
 */

const TOP_K = 10;
const RECALL_TARGET = 0.95;
const QUERY_BUDGET_MS = 20_000;
const MIN_QUERIES = 50;
const MAX_QUERIES = 200;
const PROBES = [4, 8, 16, 24, 32, 48, 64, 96, 128];
const EF_SEARCH = [16, 32, 64, 96, 128, 192, 256];
const EF_CONSTRUCTION = Number(process.env.ZERDA_BENCH_ANN_EFC ?? 80);

export interface AnnData {
  /** size x DIMENSION unit vectors, row after row. */
  vectors: Float32Array;
  queries: Float32Array[];
}

/**
 * Unit vectors from `clusters` Gaussian clusters in a `subspace`-dimensional latent space,
 * projected to DIMENSION by a fixed random map, plus isotropic noise. Deterministic (seeded).
 */
export function annVectors(
  count: number,
  queryCount: number,
  seed: number,
  clusters = 2048,
  subspace = 32,
): AnnData {
  const random = mulberry32(seed);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const projection = Float32Array.from(
    { length: subspace * DIMENSION },
    () => normal() / Math.sqrt(subspace),
  );
  const centroids = Float32Array.from({ length: clusters * subspace }, normal);
  const latent = new Float32Array(subspace);
  const row = new Float32Array(DIMENSION);
  const point = (target: Float32Array, offset: number): void => {
    const centroid = Math.floor(random() * clusters) * subspace;
    for (let l = 0; l < subspace; l++) latent[l] = centroids[centroid + l]! + 0.5 * normal();
    row.fill(0);
    for (let l = 0; l < subspace; l++) {
      const value = latent[l]!;
      const base = l * DIMENSION;
      for (let j = 0; j < DIMENSION; j++) row[j]! += value * projection[base + j]!;
    }
    let norm = 0;
    for (let j = 0; j < DIMENSION; j++) {
      const value = row[j]! + 0.05 * normal();
      row[j] = value;
      norm += value * value;
    }
    const inverse = 1 / Math.sqrt(norm);
    for (let j = 0; j < DIMENSION; j++) target[offset + j] = row[j]! * inverse;
  };
  const vectors = new Float32Array(count * DIMENSION);
  for (let index = 0; index < count; index++) point(vectors, index * DIMENSION);
  const queries = Array.from({ length: queryCount }, () => {
    const query = new Float32Array(DIMENSION);
    point(query, 0);
    return query;
  });
  return { vectors, queries };
}

interface Variant extends TimedContender {
  name: string;
  setting: string;
}

interface SystemResult {
  system: string;
  buildMs: number;
  memoryBytes: number;
  notes: string;
  variants: Variant[];
}

function rowsOf(
  size: number,
  result: SystemResult,
  reference: string[][],
  log: (line: string) => void,
): BenchRow[] {
  const rows = result.variants.map((variant): BenchRow => {
    const recall = meanOverlap(variant.results, reference, TOP_K);
    return {
      suite: 'ann',
      system: `${result.system} ${variant.setting}`,
      size,
      buildMs: round(result.buildMs),
      memoryBytes: result.memoryBytes,
      p50Ms: round(percentile(variant.latencies, 50), 3),
      p99Ms: round(percentile(variant.latencies, 99), 3),
      qps: round(variant.latencies.length / (variant.latencies.reduce((sum, ms) => sum + ms, 0) / 1000)),
      quality: { 'recall@10': round(recall, 4) },
      notes: result.notes,
    };
  });
  for (const row of rows) {
    log(
      `ann: ${row.system} @ ${size}: recall@10 ${row.quality!['recall@10']}, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms`,
    );
  }
  const best = rows
    .filter((row) => row.quality!['recall@10']! >= RECALL_TARGET)
    .sort((a, b) => a.p50Ms! - b.p50Ms!)[0];
  log(
    best === undefined
      ? `ann: ${result.system} @ ${size}: no setting reaches recall@10 ${RECALL_TARGET}`
      : `ann: ${result.system} @ ${size}: fastest at recall@10 >= ${RECALL_TARGET}: ${best.system} (p50 ${best.p50Ms} ms, p99 ${best.p99Ms} ms; build ${Math.round(result.buildMs)} ms, ${Math.round(result.memoryBytes / 2 ** 20)} MiB)`,
  );
  return rows;
}

function variants(
  settings: number[],
  label: string,
  search: (query: Float32Array, setting: number) => string[] | Promise<string[]>,
): Variant[] {
  return settings.map((setting) => ({
    name: `${label}${setting}`,
    setting: `${label}${setting}`,
    built: { search: (query: Float32Array) => search(query, setting) },
    latencies: [],
    results: [],
  }));
}

async function time(variantsToTime: Variant[], queries: Float32Array[]): Promise<void> {
  await timeInterleaved(variantsToTime, queries, { budgetMs: QUERY_BUDGET_MS, minQueries: MIN_QUERIES });
  // A variant stopped by the budget answered the first queries only: recall is over those.
}

async function zerdaIvf(data: AnnData, size: number, log: (line: string) => void) {
  const chunks: Chunk[] = Array.from({ length: size }, (_, row) => ({ id: `v${row}`, text: '' }));
  const store = new InMemoryVectorStore({ metric: 'cosine', kernel: 'wasm', index: { type: 'ivf' } });
  // One add call, so the arena is sized to the rows (batches would leave it up to twice as large).
  const embeddings = Array.from({ length: size }, (_, row) =>
    data.vectors.subarray(row * DIMENSION, (row + 1) * DIMENSION),
  );
  const started = performance.now();
  await store.add(chunks, { embeddings });
  const addMs = performance.now() - started;
  store.buildIndex();
  const buildMs = performance.now() - started;
  const stats = store.stats();
  const index = stats.index as { lists: number; probes: number; bytes: number };
  log(
    `ann: zerda ivf @ ${size}: add ${Math.round(addMs)} ms, train + assign ${Math.round(buildMs - addMs)} ms, ${index.lists} lists, default probes ${index.probes}`,
  );

  // Ground truth: the same store's exact scan (int8 with float32 re-scoring, recall 1.0 on these vectors
  // by suites/vector.ts), timed too, as the exact baseline.
  const exact: Variant = {
    name: 'exact',
    setting: 'exact',
    built: {
      search: async (query) =>
        (await store.search(query, { topK: TOP_K, exact: true })).hits.map((hit) => hit.chunk.id),
    },
    latencies: [],
    results: [],
  };
  const reference: string[][] = [];
  for (const query of data.queries) reference.push(await exact.built.search(query));
  const sweep = variants(
    [...new Set([...PROBES, index.probes])].sort((a, b) => a - b),
    'probes',
    async (query, probes) =>
      (await store.search(query, { topK: TOP_K, probes })).hits.map((hit) => hit.chunk.id),
  );
  const defaultVariant = sweep.find((variant) => variant.setting === `probes${index.probes}`)!;
  defaultVariant.setting = `probes${index.probes} (default)`;
  await time([exact, ...sweep], data.queries);
  const result: SystemResult = {
    system: 'zerda ivf',
    buildMs,
    memoryBytes: stats.vectorBytes,
    notes: `InMemoryVectorStore index ivf (${index.lists} lists, k-means on ${Math.min(size, index.lists * 32)} rows), int8 codes + float32 re-scoring, wasm kernels, one thread; memory = stats().vectorBytes (arena with float32 rows and int8 codes, ${Math.round(stats.vectorBytes / size)} B/vector, + index ${Math.round(index.bytes / 2 ** 20)} MiB); add ${Math.round(addMs)} ms + train/assign ${Math.round(buildMs - addMs)} ms; ${int8KernelNote(stats.int8Kernel)}`,
    variants: [exact, ...sweep],
  };
  return { reference, result };
}

async function faissHnsw(
  data: AnnData,
  size: number,
  log: (line: string) => void,
): Promise<SystemResult | undefined> {
  const faiss = await importFaiss('ann', log);
  if (faiss === undefined) return undefined;
  const directory = await mkdtemp(join(tmpdir(), 'zerda-bench-ann-faiss-'));
  try {
    const { buildMs, memoryBytes } = await buildAndSaveFaiss(faiss, data, size, directory, log);
    const timed: Variant[] = [];
    // One loaded copy at a time (a million-vector index is 1.7 GB): the efSearch values are
    // timed one after the other, not interleaved. faiss-node's memory is native and invisible
    // to V8, so a dropped index (the built one, then each loaded one) is freed only when a
    // collection happens to run: one runs before each load.
    for (const efSearch of EF_SEARCH) {
      await settledBytes();
      const store = await faiss.loadFaissStore(directory, { hnsw: { efSearch } });
      const [variant] = variants([efSearch], 'ef', faissSearch(store));
      await time([variant!], data.queries);
      timed.push(variant!);
      await store.close();
    }
    return {
      system: 'faiss hnsw',
      buildMs,
      memoryBytes,
      notes: `@zerda/faiss HNSW (M 32, efConstruction ${EF_CONSTRUCTION}, inner product), FAISS threads (OMP_WAIT_POLICY=${process.env.OMP_WAIT_POLICY}); memory = serialised index; efSearch values timed one after another`,
      variants: timed,
    };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Builds the HNSW store and saves it to `directory`; the built store is unreachable on return. */
async function buildAndSaveFaiss(
  faiss: FaissPackage,
  data: AnnData,
  size: number,
  directory: string,
  log: (line: string) => void,
): Promise<{ buildMs: number; memoryBytes: number }> {
  const chunks: Chunk[] = Array.from({ length: size }, (_, row) => ({ id: `v${row}`, text: '' }));
  const embeddings = Array.from({ length: size }, (_, row) =>
    data.vectors.subarray(row * DIMENSION, (row + 1) * DIMENSION),
  );
  const started = performance.now();
  const built = faiss.createFaissStore({
    indexType: 'hnsw',
    metric: 'cosine',
    hnsw: { m: 32, efConstruction: EF_CONSTRUCTION },
  });
  await built.add(chunks, { embeddings });
  const buildMs = performance.now() - started;
  log(`ann: faiss hnsw @ ${size}: built in ${Math.round(buildMs)} ms`);
  // The build's garbage (each batch's plain array for faiss-node) is collected before the save
  // copies the index out, so the two never add up.
  await settledBytes();
  await built.save(directory);
  await built.close();
  const file = (await readdir(directory)).find((name) => name.endsWith('.index'))!;
  return { buildMs, memoryBytes: (await stat(join(directory, file))).size };
}

interface HnswlibIndex {
  initIndex(maxElements: number, m?: number, efConstruction?: number, randomSeed?: number): void;
  addPoint(point: number[], label: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[] };
  setEf(ef: number): void;
  writeIndexSync(filename: string): void;
}

async function hnswlib(
  data: AnnData,
  size: number,
  log: (line: string) => void,
): Promise<SystemResult | undefined> {
  let module: { HierarchicalNSW: new (space: string, dimension: number) => HnswlibIndex };
  try {
    module = createRequire(import.meta.url)('hnswlib-node');
  } catch (error) {
    log(`ann: hnswlib-node skipped, not usable here: ${error instanceof Error ? error.message : error}`);
    return undefined;
  }
  const m = 16;
  const started = performance.now();
  const index = new module.HierarchicalNSW('ip', DIMENSION);
  index.initIndex(size, m, EF_CONSTRUCTION, 100);
  for (let row = 0; row < size; row++) {
    index.addPoint(Array.from(data.vectors.subarray(row * DIMENSION, (row + 1) * DIMENSION)), row);
  }
  const buildMs = performance.now() - started;
  log(`ann: hnswlib @ ${size}: built in ${Math.round(buildMs)} ms`);
  const directory = await mkdtemp(join(tmpdir(), 'zerda-bench-ann-hnswlib-'));
  let memoryBytes = 0;
  try {
    index.writeIndexSync(join(directory, 'index.bin'));
    memoryBytes = (await stat(join(directory, 'index.bin'))).size;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
  // hnswlib-node takes plain arrays: the queries are converted before the timing.
  const asArrays = new Map(data.queries.map((query) => [query, Array.from(query)]));
  const sweep = variants(EF_SEARCH, 'ef', (query, ef) => {
    index.setEf(ef);
    return index.searchKnn(asArrays.get(query)!, TOP_K).neighbors.map((row) => `v${row}`);
  });
  await time(sweep, data.queries);
  return {
    system: 'hnswlib',
    buildMs,
    memoryBytes,
    notes: `hnswlib-node 3.0.0 (M ${m}, efConstruction ${EF_CONSTRUCTION}, inner product on the unit vectors), one thread; build includes converting each vector to the plain array it takes; memory = serialised index`,
    variants: sweep,
  };
}

async function run({ sizes, queries: queryCount, skip, log }: BenchSuiteOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const size of sizes) {
    const started = performance.now();
    const data = annVectors(size, Math.min(queryCount, MAX_QUERIES), 19);
    log(
      `ann: ${size} x ${DIMENSION} clustered vectors generated in ${Math.round(performance.now() - started)} ms`,
    );
    let reference: string[][];
    {
      // In a block, so the store is collected before the peers build theirs.
      const zerda = await zerdaIvf(data, size, log);
      reference = zerda.reference;
      rows.push(...rowsOf(size, zerda.result, reference, log));
    }
    await settledBytes();
    if (!skip.includes('faiss')) {
      const faiss = await faissHnsw(data, size, log);
      if (faiss !== undefined) rows.push(...rowsOf(size, faiss, reference, log));
      await settledBytes();
    }
    if (!skip.includes('hnswlib')) {
      const result = await hnswlib(data, size, log);
      if (result !== undefined) rows.push(...rowsOf(size, result, reference, log));
      await settledBytes();
    }
  }
  return rows;
}

export const annSuite: BenchSuite = {
  name: 'ann',
  defaultSizes: [100_000],
  run,
};
