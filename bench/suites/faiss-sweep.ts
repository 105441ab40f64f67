import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Chunk, InMemoryVectorStore } from '@zerda/core';
import { meanOverlap, percentile, timeInterleaved } from '../lib/measure.js';
import { clusteredVectors, DIMENSION, round } from '../lib/vector-bench.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';
import { faissSearch, importFaiss } from './faiss.js';

/*
 * FAISS HNSW settings sweep (issue 19 item 7): efConstruction x efSearch for @zerda/faiss's HNSW
 * index (M 32, cosine) over the clustered vectors of suites/faiss.ts, with recall@10 against an
 * exact scan, query latency and build time. The log names the fastest pair reaching recall@10
 * 0.95; the store's defaults (HNSW_DEFAULTS) come from here, weighed also against recall on less
 * clustered vectors (see packages/faiss/src/faiss-settings.ts).
 *
 * One build per efConstruction; the index is saved once and loaded with each efSearch, and those
 * loaded stores are timed interleaved (as in suites/faiss.ts), so one row group shares the
 * machine's load. Building at the largest efConstruction takes minutes at 100,000 vectors, so the
 * sweep runs only when ZERDA_BENCH_FAISS_SWEEP=1 (`pnpm bench` stays short otherwise).
 */

const TOP_K = 10;
const QUERY_BUDGET_MS = 10_000;
const MIN_QUERIES = 50;
const M = 32;
/** ZERDA_BENCH_FAISS_SWEEP_EFC=80,160 sweeps those alone (a build each: minutes on a busy machine). */
const EF_CONSTRUCTION = (process.env.ZERDA_BENCH_FAISS_SWEEP_EFC ?? '40,80,160,320').split(',').map(Number);
const EF_SEARCH = [16, 32, 48, 64, 96, 128, 256];
const RECALL_TARGET = 0.95;

async function run({ sizes, queries: queryCount, log }: BenchSuiteOptions): Promise<BenchRow[]> {
  if (process.env.ZERDA_BENCH_FAISS_SWEEP !== '1') {
    log('faiss-sweep: skipped; set ZERDA_BENCH_FAISS_SWEEP=1 to run it (minutes per size)');
    return [];
  }
  const faiss = await importFaiss('faiss-sweep', log);
  if (faiss === undefined) return [];
  const rows: BenchRow[] = [];
  for (const size of sizes) {
    const data = clusteredVectors(size, queryCount, 1);
    const chunks: Chunk[] = data.ids.map((id) => ({ id, text: '' }));
    const embeddings = data.ids.map((_, row) =>
      data.vectors.subarray(row * DIMENSION, (row + 1) * DIMENSION),
    );
    const exact = new InMemoryVectorStore({ metric: 'cosine', kernel: 'wasm' });
    await exact.add(chunks, { embeddings });
    const reference: string[][] = [];
    for (const query of data.queries) {
      reference.push((await exact.search(query, { topK: TOP_K })).hits.map((hit) => hit.chunk.id));
    }
    for (const efConstruction of EF_CONSTRUCTION) {
      const started = performance.now();
      const built = faiss.createFaissStore({ indexType: 'hnsw', hnsw: { m: M, efConstruction } });
      await built.add(chunks, { embeddings });
      const buildMs = performance.now() - started;
      log(`faiss-sweep: efConstruction ${efConstruction} @ ${size}: built in ${Math.round(buildMs)} ms`);
      const directory = await mkdtemp(join(tmpdir(), 'zerda-bench-faiss-sweep-'));
      try {
        await built.save(directory);
        const contenders = [];
        for (const efSearch of EF_SEARCH) {
          const store = await faiss.loadFaissStore(directory, { hnsw: { efSearch } });
          contenders.push({ efSearch, built: { search: faissSearch(store) }, latencies: [], results: [] });
        }
        await timeInterleaved(contenders, data.queries, {
          budgetMs: QUERY_BUDGET_MS,
          minQueries: MIN_QUERIES,
        });
        for (const { efSearch, latencies, results } of contenders) {
          const row: BenchRow = {
            suite: 'faiss-sweep',
            system: `faiss hnsw efC${efConstruction} ef${efSearch}`,
            size,
            buildMs: round(buildMs),
            p50Ms: round(percentile(latencies, 50), 3),
            p99Ms: round(percentile(latencies, 99), 3),
            qps: round(latencies.length / (latencies.reduce((sum, ms) => sum + ms, 0) / 1000)),
            quality: { 'recall@10': round(meanOverlap(results, reference, TOP_K), 4) },
            notes: `HNSW${M}, cosine; build time is per efConstruction; OMP_WAIT_POLICY=${process.env.OMP_WAIT_POLICY}`,
          };
          log(
            `faiss-sweep: ${row.system} @ ${size}: recall@10 ${row.quality!['recall@10']}, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms`,
          );
          rows.push(row);
        }
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    }
    const passing = rows.filter((row) => row.size === size && row.quality!['recall@10']! >= RECALL_TARGET);
    const best = passing.sort((a, b) => a.p50Ms! - b.p50Ms! || a.buildMs! - b.buildMs!)[0];
    log(
      best === undefined
        ? `faiss-sweep @ ${size}: no setting reaches recall@10 ${RECALL_TARGET}`
        : `faiss-sweep @ ${size}: fastest at recall@10 >= ${RECALL_TARGET}: ${best.system} (p50 ${best.p50Ms} ms, recall ${best.quality!['recall@10']})`,
    );
  }
  return rows;
}

export const faissSweepSuite: BenchSuite = {
  name: 'faiss-sweep',
  defaultSizes: [100_000],
  run,
};
