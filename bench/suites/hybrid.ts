import {
  type Analyzer,
  type BaseRetriever,
  CachedEmbedder,
  type Embedder,
  type FusionMethod,
  HashEmbedder,
  HybridRetriever,
  InMemoryVectorStore,
  KeywordRetriever,
  type ScoredChunk,
  VectorRetriever,
} from '@zerda/core';
import { nodeScanThreads } from '@zerda/core/node';
import { SyntheticCorpus, WARMUP_QUERY_SEED } from '../corpus/synthetic.js';
import {
  collectGarbage,
  formatBytes,
  measureBuild,
  percentile,
  runQueries,
  timeInterleaved,
} from '../lib/measure.js';
import { int8KernelNote } from '../lib/vector-bench.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';

/*
 * A hybrid query end to end: the query is embedded (hash embedder, 384 dimensions), the keyword
 * (BM25) and vector (in-memory store, its default int8 scan + exact float32 re-scoring) branches
 * run concurrently with 2k candidates each, and their rankings are fused. Documents come from the
 * synthetic Zipf corpus, embedded by the same hash embedder, so the vectors have real
 * neighbourhoods (shared words). Extra rows: the default fusion with query vectors computed
 * beforehand (no embedding in the timed query), the default store with its scans split over two
 * threads (`nodeScanThreads(2)`, with and without query embedding), and an exact float32 store
 * (quantization 'none', the default before), with the vector branch's recall@10 against that
 * exact store. The variants on the default store, with and without threads, answer the same
 * queries interleaved (`timeInterleaved`: query i goes to each in turn), each after the same
 * warm-up queries, so that the machine's drift over the run does not pass for a difference between
 * them (run one after another, the precomputed-vector row came out slower than the embedding one in
 * three runs of four); the exact store's row is timed after them. Every row reports the CPU time
 * of its median query (`quality.cpuP50Ms`), which waits for a core on a busy machine do not
 * inflate; it is the process's, so a split scan's counts both threads.
 */

const DIMENSION = 384;
const TOP_K = 10;
const QUERY_BUDGET_MS = 60_000;
/** Warm-up queries per hybrid variant (a list apart from the timed queries). */
const WARMUP_QUERIES = 100;

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
  // Warm-up queries of their own (see the keyword suite): a hybrid query takes milliseconds, so a
  // hundred of them bring its code to its optimised tiers without warming any timed query.
  const warmupQueries = corpus.queries(Math.min(options.queries, WARMUP_QUERIES), {
    seed: WARMUP_QUERY_SEED,
  });
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
  // An exact float32 store beside it (not part of the build figures): the comparison row and the
  // reference for the vector branch's recall.
  const exactStore = options.skip.includes('hybrid exact store')
    ? undefined
    : new InMemoryVectorStore({ dimension: DIMENSION, metric: 'cosine', quantization: 'none' });
  await exactStore?.add(documents, { embeddings });
  // The default store with its scans split over two threads (not part of the build figures).
  const threadedStore = options.skip.includes('hybrid 2 threads')
    ? undefined
    : new InMemoryVectorStore({ dimension: DIMENSION, metric: 'cosine', threads: nodeScanThreads(2) });
  await threadedStore?.add(documents, { embeddings });
  embeddings.length = 0;
  const queryVectors = new Map<string, Float32Array>();
  for (const query of [...queries, ...warmupQueries]) {
    queryVectors.set(query, await embedder.embedQuery(query));
  }
  const precomputed: Embedder = {
    dimension: DIMENSION,
    embed: async (texts) => texts.map((text) => queryVectors.get(text) as Float32Array),
    embedQuery: async (text) => queryVectors.get(text) as Float32Array,
  };
  // A fresh query cache per run: every timed query is embedded, none is served from the cache.
  const hashEmbedded = () => new CachedEmbedder(embedder, { maxEntries: 0 });

  const rows: BenchRow[] = [];
  const wholeQueryP50 = new Map<FusionMethod, number>();
  const variants = [
    ...(['weighted', 'rrf', 'weighted+rrf'] as const).map((fusion) => ({
      name: `hybrid ${fusion}`,
      fusion,
      vectorStore: store,
      queryEmbedder: hashEmbedded,
      what: `query embedding (hash, ${DIMENSION} dims) + BM25 and vector (int8 scan + float32 re-scoring) branches`,
    })),
    {
      name: 'hybrid weighted+rrf precomputed',
      fusion: 'weighted+rrf' as const,
      vectorStore: store,
      queryEmbedder: () => precomputed,
      what: 'query vectors computed beforehand + BM25 and vector (int8 scan + float32 re-scoring) branches',
    },
    ...(threadedStore === undefined
      ? []
      : [
          {
            name: 'hybrid weighted+rrf 2 threads',
            fusion: 'weighted+rrf' as const,
            vectorStore: threadedStore,
            queryEmbedder: hashEmbedded,
            what: `query embedding (hash, ${DIMENSION} dims) + BM25 and vector (int8 scan split over 2 threads + float32 re-scoring) branches`,
          },
          {
            name: 'hybrid weighted+rrf precomputed 2 threads',
            fusion: 'weighted+rrf' as const,
            vectorStore: threadedStore,
            queryEmbedder: () => precomputed,
            what: 'query vectors computed beforehand + BM25 and vector (int8 scan split over 2 threads + float32 re-scoring) branches',
          },
        ]),
    ...(exactStore === undefined
      ? []
      : [
          {
            name: 'hybrid weighted+rrf exact store',
            fusion: 'weighted+rrf' as const,
            vectorStore: exactStore,
            queryEmbedder: hashEmbedded,
            what: `query embedding (hash, ${DIMENSION} dims) + BM25 and exact float32 vector branches (quantization 'none')`,
          },
        ]),
  ];
  // Timed interleaved (see above), so that their differences are their own.
  const contenders = variants
    .filter(({ name }) => !options.skip.includes(name))
    .map((variant) => {
      const vector = new VectorRetriever({ store: variant.vectorStore, embedder: variant.queryEmbedder() });
      const hybrid = new HybridRetriever({ keyword, vector, fusion: variant.fusion });
      return {
        variant,
        built: { search: async (query: string) => (await hybrid.retrieve(query, { k: TOP_K })).hits.length },
        latencies: [] as number[],
        cpuLatencies: [] as number[],
        results: [] as number[],
      };
    });
  // Except the exact store's: its scan reads 153 MB, which empties the caches the others share
  // (they keep part of one store's int8 codes there from query to query, as an application with
  // one store would). Interleaved, it made their p99 two to three times longer. It is timed after
  // them, on its own.
  for (const group of [
    contenders.filter(({ variant }) => variant.vectorStore !== exactStore),
    contenders.filter(({ variant }) => variant.vectorStore === exactStore),
  ]) {
    await timeInterleaved(group, queries, { budgetMs: QUERY_BUDGET_MS, minQueries: 3, warmupQueries });
  }
  for (const { variant, latencies, cpuLatencies } of contenders) {
    const { name, fusion, what } = variant;
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const cpuP50Ms = percentile(cpuLatencies, 50);
    log(
      `  ${name}: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, cpu p50 ${cpuP50Ms.toFixed(2)} ms over ${latencies.length} queries`,
    );
    if (name === `hybrid ${fusion}`) wholeQueryP50.set(fusion, p50);
    rows.push({
      suite: 'hybrid',
      system: `zerda ${name}`,
      size,
      buildMs: built.ms,
      memoryBytes: built.bytes,
      p50Ms: p50,
      p99Ms: p99,
      qps: latencies.length / (latencies.reduce((sum, ms) => sum + ms, 0) / 1000),
      quality: { cpuP50Ms },
      notes:
        `end to end: ${what} (2k each, concurrent) + ${fusion} fusion; documents embedded beforehand in ` +
        `${(embedMs / 1000).toFixed(1)} s`,
    });
  }
  if (exactStore !== undefined)
    rows.push(await vectorRecallRow(size, queries, queryVectors, store, exactStore));
  if (!options.skip.includes('fusion')) {
    const vector = new VectorRetriever({ store, embedder });
    rows.push(...(await fusionRows(size, queries, keyword, vector, wholeQueryP50, options)));
  }
  await threadedStore?.close();
  return rows;
}

/**
 * The vector branch's top 2k (what a hybrid query at k = 10 fetches) from the default store
 * against the exact float32 store, on the hash embedder's real (sparse, word-hashed) vectors.
 */
async function vectorRecallRow(
  size: number,
  queries: readonly string[],
  queryVectors: ReadonlyMap<string, Float32Array>,
  store: InMemoryVectorStore,
  exactStore: InMemoryVectorStore,
): Promise<BenchRow> {
  const depth = 2 * TOP_K;
  let found = 0;
  let expected = 0;
  let scoresEqual = 0;
  for (const query of queries) {
    const vector = queryVectors.get(query) as Float32Array;
    const truth = (await exactStore.search(vector, { topK: depth })).hits;
    const hits = (await store.search(vector, { topK: depth })).hits;
    const truthScores = new Map(truth.map((hit) => [hit.chunk.id, hit.score]));
    expected += truth.length;
    for (const hit of hits) {
      const score = truthScores.get(hit.chunk.id);
      if (score === undefined) continue;
      found++;
      if (score === hit.score) scoresEqual++;
    }
  }
  const { quantization, bytesPerVector, int8Kernel } = store.stats();
  return {
    suite: 'hybrid',
    system: `zerda vector branch ${quantization} recall`,
    size,
    quality: {
      [`recall@${depth}`]: expected === 0 ? 1 : found / expected,
      shareOfScoresEqual: found === 0 ? 1 : scoresEqual / found,
      bytesPerVector: bytesPerVector ?? 0,
      exactBytesPerVector: exactStore.stats().bytesPerVector ?? 0,
    },
    notes:
      `the vector branch's top ${depth} from the default store (quantization '${quantization}') against an ` +
      `exact float32 scan, on the hash-embedded query vectors of the ${queries.length} bench queries; ` +
      int8KernelNote(int8Kernel),
  };
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
