import {
  type Analyzer,
  type BaseRetriever,
  CachedEmbedder,
  type FusionMethod,
  HashEmbedder,
  HybridRetriever,
  InMemoryVectorStore,
  KeywordRetriever,
  type ScoredChunk,
  VectorRetriever,
} from '@zerda/core';
import { SyntheticCorpus } from '../corpus/synthetic.js';
import { collectGarbage, formatBytes, measureBuild, runQueries } from '../lib/measure.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';

/*
 * A hybrid query end to end: the query is embedded (hash embedder, 384 dimensions), the keyword
 * (BM25) and vector (exact in-memory scan) branches run concurrently with 2k candidates each, and
 * their rankings are fused. Documents come from the synthetic Zipf corpus, embedded by the same
 * hash embedder, so the vectors have real neighbourhoods (shared words).
 */

const DIMENSION = 384;
const TOP_K = 10;
const QUERY_BUDGET_MS = 60_000;

/** The synthetic words are lower-case letters separated by single spaces. */
const whitespaceAnalyzer: Analyzer = { name: 'whitespace', analyze: (text) => text.split(' ') };

async function runSize(
  size: number,
  options: BenchSuiteOptions,
  corpus: SyntheticCorpus,
): Promise<BenchRow[]> {
  const { log } = options;
  const documents = corpus.documents(size);
  const queries = corpus.queries(options.queries);
  const embedder = new HashEmbedder({
    dimension: DIMENSION,
    analyzer: whitespaceAnalyzer,
    charNGrams: false,
  });

  const embedStarted = performance.now();
  const embeddings: Float32Array[] = [];
  for (let i = 0; i < documents.length; i += 2048) {
    embeddings.push(...(await embedder.embed(documents.slice(i, i + 2048).map((d) => d.text))));
  }
  const embedMs = performance.now() - embedStarted;
  log(`  embedded ${size.toLocaleString('en-US')} documents in ${(embedMs / 1000).toFixed(1)} s`);

  const built = await measureBuild(async () => {
    const keyword = new KeywordRetriever({ analyzer: whitespaceAnalyzer });
    keyword.add(documents);
    const store = new InMemoryVectorStore({ dimension: DIMENSION, metric: 'cosine' });
    await store.add(documents, { embeddings });
    return { keyword, store };
  });
  log(
    `  built keyword index and vector store in ${(built.ms / 1000).toFixed(1)} s, ${formatBytes(built.bytes)}`,
  );
  const { keyword, store } = built.value;
  embeddings.length = 0;

  const rows: BenchRow[] = [];
  const wholeQueryP50 = new Map<FusionMethod, number>();
  for (const fusion of ['weighted', 'rrf', 'weighted+rrf'] as const) {
    if (options.skip.includes(`hybrid ${fusion}`)) continue;
    // A fresh query cache per run: every timed query is embedded, none is served from the cache.
    const vector = new VectorRetriever({ store, embedder: new CachedEmbedder(embedder, { maxEntries: 0 }) });
    const hybrid = new HybridRetriever({ keyword, vector, fusion });
    const timed = await runQueries(
      queries,
      async (query) => (await hybrid.retrieve(query, { k: TOP_K })).hits.length,
      {
        budgetMs: QUERY_BUDGET_MS,
      },
    );
    log(
      `  hybrid ${fusion}: p50 ${timed.p50.toFixed(2)} ms, p99 ${timed.p99.toFixed(2)} ms over ${timed.timed} queries`,
    );
    wholeQueryP50.set(fusion, timed.p50);
    rows.push({
      suite: 'hybrid',
      system: `zerda hybrid ${fusion}`,
      size,
      buildMs: built.ms,
      memoryBytes: built.bytes,
      p50Ms: timed.p50,
      p99Ms: timed.p99,
      qps: timed.qps,
      notes:
        `end to end: query embedding (hash, ${DIMENSION} dims) + BM25 and exact vector branches (2k each, ` +
        `concurrent) + ${fusion} fusion; documents embedded beforehand in ${(embedMs / 1000).toFixed(1)} s`,
    });
  }
  if (!options.skip.includes('fusion')) {
    const vector = new VectorRetriever({ store, embedder });
    rows.push(...(await fusionRows(size, queries, keyword, vector, wholeQueryP50, options)));
  }
  return rows;
}

/**
 * Fusion alone: the branch candidates of each query are fetched once, then only the merge,
 * scoring, top-k selection and the explanations of the hits returned are timed. Two shapes: the
 * bench's own (k = 10, 20 candidates per branch) and an evaluation's (k = 100, 200 per branch,
 * as `zerda eval` fuses on CISI).
 */
async function fusionRows(
  size: number,
  queries: readonly string[],
  keyword: BaseRetriever,
  vector: BaseRetriever,
  wholeQueryP50: ReadonlyMap<FusionMethod, number>,
  options: BenchSuiteOptions,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const [k, perBranch] of [
    [TOP_K, 2 * TOP_K],
    [100, 200],
  ] as const) {
    const fetched: Array<{ keyword: ScoredChunk[]; vector: ScoredChunk[] }> = [];
    for (const query of queries) {
      fetched.push({
        keyword: (await keyword.retrieve(query, { k: perBranch })).hits,
        vector: (await vector.retrieve(query, { k: perBranch })).hits,
      });
    }
    for (const fusion of ['weighted', 'rrf', 'weighted+rrf'] as const) {
      const hybrid = new HybridRetriever({ keyword, vector, fusion });
      const [keywordBranch, vectorBranch] = hybrid.branches as [
        (typeof hybrid.branches)[number],
        (typeof hybrid.branches)[number],
      ];
      // Repeated so each timed sample is long enough for the clock: the p50 is per fusion.
      const repeat = perBranch >= 200 ? 5 : 20;
      const indexes = fetched.map((_, i) => String(i));
      const timed = await runQueries(
        indexes,
        (index) => {
          const lists = fetched[Number(index)] as { keyword: ScoredChunk[]; vector: ScoredChunk[] };
          let returned = 0;
          for (let r = 0; r < repeat; r++) {
            returned += hybrid.fuseBranches(
              [
                { branch: keywordBranch, hits: lists.keyword },
                { branch: vectorBranch, hits: lists.vector },
              ],
              k,
            ).hits.length;
          }
          return returned;
        },
        { budgetMs: QUERY_BUDGET_MS / 4 },
      );
      const p50 = timed.p50 / repeat;
      const p99 = timed.p99 / repeat;
      const whole = k === TOP_K ? wholeQueryP50.get(fusion) : undefined;
      options.log(
        `  fusion alone ${fusion}, k=${k}, ${perBranch} per branch: p50 ${(p50 * 1000).toFixed(1)} µs, p99 ${(p99 * 1000).toFixed(1)} µs${whole ? ` (${((100 * p50) / whole).toFixed(1)}% of the whole hybrid query)` : ''}`,
      );
      rows.push({
        suite: 'hybrid',
        system: `zerda fusion ${fusion} k=${k}`,
        size,
        p50Ms: p50,
        p99Ms: p99,
        qps: 1000 / p50,
        ...(whole ? { quality: { shareOfHybridP50: p50 / whole } } : {}),
        notes:
          `fusion alone (merge by id, normalise, score, top-k, explanations of the ${k} hits returned) ` +
          `over ${perBranch} candidates per branch fetched beforehand${whole ? `; the whole hybrid query's p50 is ${whole.toFixed(3)} ms` : ''}`,
      });
    }
  }
  return rows;
}

/** A hybrid query end to end at growing corpus sizes. */
export const hybridSuite: BenchSuite = {
  name: 'hybrid',
  defaultSizes: [100_000],
  async run(options) {
    const corpus = new SyntheticCorpus();
    const rows: BenchRow[] = [];
    for (const size of options.sizes) {
      options.log(`hybrid: ${size.toLocaleString('en-US')} documents, ${options.queries} queries`);
      rows.push(...(await runSize(size, options, corpus)));
      collectGarbage();
    }
    return rows;
  },
};
