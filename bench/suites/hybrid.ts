import {
  type Analyzer,
  CachedEmbedder,
  HashEmbedder,
  HybridRetriever,
  InMemoryVectorStore,
  KeywordRetriever,
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
  for (const fusion of ['rrf', 'weighted+rrf'] as const) {
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
