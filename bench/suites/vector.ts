import { type Chunk, InMemoryVectorStore, type InMemoryVectorStoreSettings } from '@zerda/core';
import usearch from 'usearch';
import { formatBytes, meanOverlap, percentile } from '../lib/measure.js';
import {
  clusteredVectors,
  DIMENSION,
  round,
  settledBytes,
  timeInterleaved,
  type VectorData,
} from '../lib/vector-bench.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';

/*
 * Flat (exhaustive) top-10 search by cosine similarity over clustered 384-dimensional vectors:
 * Zerda's in-memory store (WebAssembly SIMD scan, exact and int8 + exact re-scoring, and its
 * plain JavaScript fallback), a plain JavaScript scan, and usearch's exact search.
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
}

interface VectorSystem {
  name: string;
  notes: string;
  build(data: VectorData): BuiltSystem | Promise<BuiltSystem>;
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
    };
  };
}

const systems: VectorSystem[] = [
  {
    name: 'zerda exact',
    notes: 'InMemoryVectorStore, cosine, WebAssembly SIMD f32x4 scan (one thread) + bounded-heap top-k',
    build: zerda({ kernel: 'wasm' }),
  },
  {
    name: 'zerda int8+rescore',
    notes:
      'InMemoryVectorStore quantization int8: i16x8 dot scan of per-vector int8 codes for max(4k, 100) ' +
      'candidates, re-scored exactly in float32',
    build: zerda({ kernel: 'wasm', quantization: 'int8' }),
  },
  {
    name: 'zerda exact js',
    notes:
      'InMemoryVectorStore with the plain JavaScript fallback kernels (runtimes without WebAssembly SIMD)',
    build: zerda({ kernel: 'js' }),
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
    notes: 'usearch exactSearch as above on one thread (like Zerda, which scans on one)',
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
      const memoryBytes = Math.max(0, (await settledBytes()) - before);
      contenders.push({ system, built, buildMs, memoryBytes, latencies: [], results: [] });
      log(
        `vector: ${system.name} @ ${size}: built in ${Math.round(buildMs)} ms, ${formatBytes(memoryBytes)}`,
      );
    }
    await timeInterleaved(contenders, data.queries, { budgetMs: QUERY_BUDGET_MS, minQueries: MIN_QUERIES });
    // The float64 scan when it ran, else another exact system (when the slow ones are skipped).
    const referenceSystem = REFERENCE_ORDER.map((name) =>
      contenders.find((contender) => contender.system.name === name),
    ).find((contender) => contender !== undefined);
    const reference = referenceSystem?.results;
    for (const { system, buildMs, memoryBytes, latencies, results } of contenders) {
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
          latencies.length < data.queries.length ? `${latencies.length} queries within the time budget` : '',
          referenceSystem !== undefined && referenceSystem.system.name !== 'plain js'
            ? `recall against ${referenceSystem.system.name}`
            : '',
        ]
          .filter((note) => note.length > 0)
          .join('; '),
      };
      if (reference !== undefined)
        row.quality = { 'recall@10': round(meanOverlap(results, reference, TOP_K), 4) };
      log(
        `vector: ${system.name} @ ${size}: p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, ${row.qps} qps` +
          (row.quality === undefined ? '' : `, recall@10 ${row.quality['recall@10']}`),
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
  /** Top-10 ids of the timed queries, query i at position i. */
  results: string[][];
}

export const vectorSuite: BenchSuite = {
  name: 'vector',
  defaultSizes: [10_000, 100_000],
  run,
};
