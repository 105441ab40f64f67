import { getHeapSpaceStatistics } from 'node:v8';
import { create, insert, search as oramaSearch } from '@orama/orama';
import { type Analyzer, BM25Index } from '@zerda/core';
import MiniSearch from 'minisearch';
import winkBM25 from 'wink-bm25-text-search';
import { SyntheticCorpus, type SyntheticDocument, WARMUP_QUERY_SEED } from '../corpus/synthetic.js';
import {
  collectGarbage,
  formatBytes,
  meanOverlap,
  measureBuild,
  percentile,
  runQueries,
} from '../lib/measure.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';

const K1 = 1.2;
const B = 0.75;
const TOP_K = 10;
/** Wall-time budget for one system's warm-up and timed queries at one size. */
const QUERY_BUDGET_MS = 30_000;
/** Wall-time budget for Zerda's exhaustive reference queries at one size. */
const REFERENCE_BUDGET_MS = 120_000;

/** The synthetic words are lower-case letters separated by single spaces: split, nothing else. */
const whitespaceAnalyzer: Analyzer = {
  name: 'whitespace',
  analyze: (text) => text.split(' '),
};

interface BuiltSystem {
  /** Top-10 document ids, best first. */
  search(query: string): string[] | Promise<string[]>;
}

interface KeywordSystem {
  name: string;
  notes: string;
  build(documents: SyntheticDocument[]): BuiltSystem | Promise<BuiltSystem>;
}

/** The libraries compared with Zerda, each configured as plain BM25 over the same tokens. */
const competitors: KeywordSystem[] = [
  {
    name: 'orama',
    notes:
      '@orama/orama 3.1.18: default tokenizer (no stemming, no stop words; it keeps each token once per ' +
      'document, so tf = 1 / distinct terms), relevance k=1.2 b=0.75 d=0. Every query term is expanded ' +
      'by prefix (exact: true would also make the query AND), so its top 10 differs from textbook BM25.',
    async build(documents) {
      const db = create({
        schema: { text: 'string' } as const,
        components: { tokenizer: { stemming: false } },
      });
      for (const document of documents) {
        const inserted = insert(db, document);
        if (inserted instanceof Promise) await inserted;
      }
      const relevance = { k: K1, b: B, d: 0 };
      return {
        async search(query) {
          const result = await oramaSearch(db, { term: query, limit: TOP_K, relevance });
          return result.hits.map((hit) => hit.id);
        },
      };
    },
  },
  {
    name: 'minisearch',
    notes:
      'minisearch 7.2.0: whitespace tokenize, no term processing, bm25 k=1.2 b=0.75 d=0, OR queries. ' +
      'Measures document length in distinct terms; search returns every match, sorted.',
    build(documents) {
      const index = new MiniSearch<SyntheticDocument>({
        fields: ['text'],
        storeFields: [],
        tokenize: (text) => text.split(' '),
        processTerm: (term) => term,
        searchOptions: { bm25: { k: K1, b: B, d: 0 } },
      });
      index.addAll(documents);
      return {
        search: (query) =>
          index
            .search(query)
            .slice(0, TOP_K)
            .map((hit) => String(hit.id)),
      };
    },
  },
  {
    name: 'wink-bm25',
    notes:
      'wink-bm25-text-search 3.1.2: whitespace prep task, k1=1.2 b=0.75 k=1 (Lucene idf); ' +
      'consolidate() rounds scores to 4 decimals and the index cannot take documents afterwards.',
    build(documents) {
      const engine = winkBM25();
      engine.defineConfig({ fldWeights: { text: 1 }, bm25Params: { k1: K1, b: B, k: 1 } });
      engine.definePrepTasks([(text) => text.split(' ')]);
      for (const document of documents) engine.addDoc({ text: document.text }, document.id);
      engine.consolidate();
      return { search: (query) => engine.search(query, TOP_K).map(([id]) => id) };
    },
  },
];

/** Retained memory per posting (one distinct term in one document), for comparing index layouts. */
function perPosting(bytes: number, postings: number): string {
  return `${(bytes / Math.max(1, postings)).toFixed(1)} B/posting over ${postings.toLocaleString('en-US')} postings`;
}

/** The share of a Zerda index's memory in its typed arrays (postings, blocks, statistics), per posting. */
function arraysPerPosting(index: BM25Index): string {
  const { arrayBytes, postings } = index.stats();
  return `typed arrays ${(arrayBytes / Math.max(1, postings)).toFixed(1)} B/posting`;
}

/**
 * CPU time of a build (user + system: waiting for a core on a busy machine does not inflate it),
 * and the memory it touched for the first time (minor page faults, 4 KiB each). On a virtual
 * machine a first touch can cost far more than the writes themselves (see `firstTouchMsPer100MiB`).
 */
function buildCpuMs<T>(build: () => T): { value: T; cpuMs: number; freshBytes: number } {
  const started = process.cpuUsage();
  const faults = process.resourceUsage().minorPageFault;
  const value = build();
  const used = process.cpuUsage(started);
  const freshBytes = (process.resourceUsage().minorPageFault - faults) * 4096;
  return { value, cpuMs: (used.user + used.system) / 1000, freshBytes };
}

/**
 * What writing 100 MiB of memory never touched before costs on this machine at this moment, in ms
 * (median of three 64 MiB arrays, each written once). A build's postings are fresh memory, so
 * this cost is part of every build figure, and it moves with the machine's load.
 */
function firstTouchMsPer100MiB(): number {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    new Uint8Array(64 << 20).fill(1);
    times.push(((performance.now() - started) * 100) / 64);
  }
  return percentile(times, 50);
}

/** A build's fresh memory and, at this run's first-touch cost, about how long touching it took. */
function freshNote(freshBytes: number, msPer100MiB: number): string {
  const mib = freshBytes / (1 << 20);
  return `${mib.toFixed(0)} MiB of fresh memory touched (about ${((mib * msPer100MiB) / 100).toFixed(0)} ms at this run's ${msPer100MiB.toFixed(0)} ms per 100 MiB)`;
}

/** Bytes in V8's young generation, where a query's short-lived objects are allocated. */
function youngGenerationBytes(): number {
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') return space.space_used_size;
  }
  return 0;
}

/**
 * CPU time per query (user + system of this process: waiting for a core on a busy machine does
 * not inflate it, unlike wall time) and bytes allocated per query (median; queries during which
 * a collection emptied the young generation are left out, and what the measuring itself
 * allocates is subtracted), over one more pass of the queries.
 */
function cpuAndAllocation(
  queries: readonly string[],
  search: (query: string) => unknown,
): { cpuP50Ms: number; cpuP99Ms: number; allocatedBytes: number } {
  const measure = (run: (query: string) => unknown) => {
    const cpu: number[] = [];
    const allocated: number[] = [];
    for (const query of queries) {
      const bytesBefore = youngGenerationBytes();
      const started = process.cpuUsage();
      run(query);
      const used = process.cpuUsage(started);
      const bytesAfter = youngGenerationBytes();
      cpu.push((used.user + used.system) / 1000);
      if (bytesAfter >= bytesBefore) allocated.push(bytesAfter - bytesBefore);
    }
    return { cpu, allocated };
  };
  const overhead = percentile(measure(() => undefined).allocated, 50);
  const { cpu, allocated } = measure(search);
  return {
    cpuP50Ms: percentile(cpu, 50),
    cpuP99Ms: percentile(cpu, 99),
    allocatedBytes: Math.max(0, percentile(allocated, 50) - overhead),
  };
}

/** Passes over the queries for the per-query best time. */
const BEST_OF_PASSES = 5;

/**
 * Each query's fastest wall time over BEST_OF_PASSES passes (after one warm-up pass), then p50 and
 * p99 over queries. On a shared machine a single sample's tail is mostly the neighbours (a core
 * taken away mid-query); the best of five keeps what the query itself costs, its tail included.
 */
function bestOfPasses(
  queries: readonly string[],
  search: (query: string) => unknown,
): { bestP50Ms: number; bestP99Ms: number } {
  for (const query of queries) search(query);
  const best = new Array<number>(queries.length).fill(Number.POSITIVE_INFINITY);
  for (let pass = 0; pass < BEST_OF_PASSES; pass++) {
    queries.forEach((query, i) => {
      const started = performance.now();
      search(query);
      best[i] = Math.min(best[i] as number, performance.now() - started);
    });
  }
  return { bestP50Ms: percentile(best, 50), bestP99Ms: percentile(best, 99) };
}

/** The timed queries, and the warm-up queries: as many, drawn alike, none of them timed. */
interface QuerySets {
  queries: string[];
  warmupQueries: string[];
}

/** Measures Zerda (pushing its rows) and returns its exhaustive top 10 of every query and its posting count. */
async function runZerda(
  size: number,
  documents: SyntheticDocument[],
  { queries, warmupQueries }: QuerySets,
  options: BenchSuiteOptions,
  rows: BenchRow[],
): Promise<{ reference: string[][]; postings: number }> {
  const { log } = options;
  const touchCost = firstTouchMsPer100MiB();
  const zerdaBuild = await measureBuild(() =>
    buildCpuMs(() => {
      const index = new BM25Index({ analyzer: whitespaceAnalyzer, k1: K1, b: B });
      index.add(documents);
      return index;
    }),
  );
  const index = zerdaBuild.value.value;
  // The whitespace tokens are the same for every system, so this count serves all the rows.
  const postings = index.stats().postings;
  const builtArrayBytes = index.stats().arrayBytes;
  log(
    `  zerda: built in ${(zerdaBuild.ms / 1000).toFixed(2)} s (cpu ${(zerdaBuild.value.cpuMs / 1000).toFixed(2)} s; ${freshNote(zerdaBuild.value.freshBytes, touchCost)}), ${formatBytes(zerdaBuild.bytes)} (${perPosting(zerdaBuild.bytes, postings)}; ${arraysPerPosting(index)})`,
  );
  const search = (query: string) => index.search(query, TOP_K).map((hit) => hit.id);
  // The first queries after the build, timed as they come: their tail is the JIT optimising the
  // query path (first runs take up to ten times their later time), which an application meets
  // once after it starts. The timed pass below comes after them.
  const firstRuns = await runQueries(warmupQueries, search, { budgetMs: QUERY_BUDGET_MS, warmup: 0 });
  const exhaustive = await runQueries(
    queries,
    (query) => index.search(query, TOP_K, { exhaustive: true }).map((hit) => hit.id),
    // Seconds per query at a million documents: bounded, overlaps are then over fewer queries.
    { budgetMs: REFERENCE_BUDGET_MS, warmupQueries },
  );
  const pruned = await runQueries(queries, search, {
    budgetMs: QUERY_BUDGET_MS,
    warmupQueries,
    warmup: warmupQueries.length,
  });
  const prunedCost = cpuAndAllocation(queries.slice(0, pruned.timed), (query) => index.search(query, TOP_K));
  const prunedBest = bestOfPasses(queries.slice(0, pruned.timed), (query) => index.search(query, TOP_K));
  const zerdaNotes = `BM25 k1=${K1} b=${B}, whitespace analyser (same tokens as the others)`;
  // What the queries added to the index's arrays: the dense term frequencies of the frequent terms
  // they looked up (built on first use), not in the build's memory figure.
  const queryBuiltNote = `; dense term frequencies built by the queries: ${formatBytes(index.stats().arrayBytes - builtArrayBytes)}`;
  if (!options.skip.includes('zerda')) {
    rows.push({
      suite: 'keyword',
      system: 'zerda',
      size,
      buildMs: zerdaBuild.ms,
      memoryBytes: zerdaBuild.bytes,
      p50Ms: pruned.p50,
      p99Ms: pruned.p99,
      qps: pruned.qps,
      quality: {
        top10Overlap: meanOverlap(pruned.results, exhaustive.results),
        cpuP50Ms: prunedCost.cpuP50Ms,
        cpuP99Ms: prunedCost.cpuP99Ms,
        bestOf5P50Ms: prunedBest.bestP50Ms,
        bestOf5P99Ms: prunedBest.bestP99Ms,
        firstRunsP50Ms: firstRuns.p50,
        firstRunsP99Ms: firstRuns.p99,
        allocatedBytesPerQuery: prunedCost.allocatedBytes,
      },
      notes: `${zerdaNotes}; block-max MaxScore over windows, exact top-k; build: ${freshNote(zerdaBuild.value.freshBytes, touchCost)}; ${perPosting(zerdaBuild.bytes, postings)}${queryBuiltNote}${budgetNote(pruned, queries.length)}`,
    });
    rows.push({
      suite: 'keyword',
      system: 'zerda exhaustive',
      size,
      p50Ms: exhaustive.p50,
      p99Ms: exhaustive.p99,
      qps: exhaustive.qps,
      quality: { top10Overlap: 1 },
      notes: `${zerdaNotes}; scores every posting (same index as 'zerda'): the reference for top10Overlap`,
    });
  }
  log(
    `  zerda: p50 ${pruned.p50.toFixed(2)} ms, p99 ${pruned.p99.toFixed(2)} ms (cpu p50 ${prunedCost.cpuP50Ms.toFixed(2)} ms, p99 ${prunedCost.cpuP99Ms.toFixed(2)} ms; best of ${BEST_OF_PASSES} per query p50 ${prunedBest.bestP50Ms.toFixed(2)} ms, p99 ${prunedBest.bestP99Ms.toFixed(2)} ms; ${prunedCost.allocatedBytes} B allocated per query; exhaustive p50 ${exhaustive.p50.toFixed(2)} ms; the first ${firstRuns.timed} queries after the build p50 ${firstRuns.p50.toFixed(2)} ms, p99 ${firstRuns.p99.toFixed(2)} ms) over ${pruned.timed} queries after ${pruned.warmedUp} warm-up queries`,
  );

  // The same corpus through Zerda's full default analysis (Unicode tokens, stop words, stemming),
  // which is what a user gets without configuration.
  if (!options.skip.includes('zerda default analyzer')) {
    const analysed = await measureBuild(() =>
      buildCpuMs(() => {
        const full = new BM25Index({ k1: K1, b: B });
        full.add(documents);
        return full;
      }),
    );
    const analysedIndex = analysed.value.value;
    const analysedPerPosting = `${perPosting(analysed.bytes, analysedIndex.stats().postings)} (${arraysPerPosting(analysedIndex)})`;
    const timed = await runQueries(
      queries,
      (query) => analysedIndex.search(query, TOP_K).map((hit) => hit.id),
      { budgetMs: QUERY_BUDGET_MS, warmupQueries, warmup: warmupQueries.length },
    );
    log(
      `  zerda default analyzer: built in ${(analysed.ms / 1000).toFixed(2)} s (cpu ${(analysed.value.cpuMs / 1000).toFixed(2)} s; ${freshNote(analysed.value.freshBytes, touchCost)}), ${formatBytes(analysed.bytes)} (${analysedPerPosting})`,
    );
    rows.push({
      suite: 'keyword',
      system: 'zerda default analyzer',
      size,
      buildMs: analysed.ms,
      memoryBytes: analysed.bytes,
      p50Ms: timed.p50,
      p99Ms: timed.p99,
      qps: timed.qps,
      notes: `BM25 k1=${K1} b=${B} with defaultAnalyzer (stop words, Porter stemming): build cost of real text analysis (build cpu ${(analysed.value.cpuMs / 1000).toFixed(2)} s; ${freshNote(analysed.value.freshBytes, touchCost)}); ${analysedPerPosting}`,
    });
  }

  return { reference: exhaustive.results, postings };
}

async function runSize(
  size: number,
  options: BenchSuiteOptions,
  corpus: SyntheticCorpus,
): Promise<BenchRow[]> {
  const { log } = options;
  const rows: BenchRow[] = [];
  const started = performance.now();
  const documents = corpus.documents(size);
  const queries = corpus.queries(options.queries);
  const warmupQueries = corpus.queries(options.queries, { seed: WARMUP_QUERY_SEED });
  log(
    `  ${size.toLocaleString('en-US')} documents generated in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  // Zerda first: its exhaustive search is the reference every overlap is measured against.
  const querySets: QuerySets = { queries, warmupQueries };
  const { reference, postings } = await runZerda(size, documents, querySets, options, rows);

  for (const system of competitors) {
    if (options.skip.includes(system.name)) continue;
    // One function call per system: when it returns, nothing of the system stays reachable
    // (an async function's frame can keep a loop variable alive), so memory is measured alone.
    rows.push(await runCompetitor(system, size, documents, querySets, reference, postings, options));
    collectGarbage();
  }
  return rows;
}

async function runCompetitor(
  system: KeywordSystem,
  size: number,
  documents: SyntheticDocument[],
  { queries, warmupQueries }: QuerySets,
  reference: string[][],
  postings: number,
  { log }: BenchSuiteOptions,
): Promise<BenchRow> {
  log(`  ${system.name}: building...`);
  const built = await measureBuild(() => system.build(documents));
  log(
    `  ${system.name}: built in ${(built.ms / 1000).toFixed(2)} s, ${formatBytes(built.bytes)}; querying...`,
  );
  const timed = await runQueries(queries, (query) => built.value.search(query), {
    budgetMs: QUERY_BUDGET_MS,
    // The default ten warm-up queries: a peer's query takes hundreds of milliseconds, runs enough
    // code to be optimised, and its budget is better spent on timed queries.
    warmupQueries,
  });
  log(`  ${system.name}: p50 ${timed.p50.toFixed(2)} ms over ${timed.timed} queries`);
  return {
    suite: 'keyword',
    system: system.name,
    size,
    buildMs: built.ms,
    memoryBytes: built.bytes,
    p50Ms: timed.p50,
    p99Ms: timed.p99,
    qps: timed.qps,
    quality: { top10Overlap: meanOverlap(timed.results, reference) },
    notes: `${system.notes} ${perPosting(built.bytes, postings)} (Zerda's count of the same tokens)${budgetNote(timed, queries.length)}`,
  };
}

function budgetNote(result: { timed: number; truncated: boolean }, total: number): string {
  return result.truncated
    ? ` [timed ${result.timed} of ${total} queries: ${QUERY_BUDGET_MS / 1000} s budget per system]`
    : '';
}

/**
 * BM25 at growing corpus sizes: Zerda's BM25Index beside @orama/orama, minisearch and
 * wink-bm25-text-search, on the synthetic Zipf corpus (whitespace tokens, no stemming, so that
 * engines are compared rather than analysers). Reports build time, retained memory, top-10
 * latency (p50, p99), queries per second, top-10 overlap with Zerda's exhaustive BM25, and
 * retained bytes per posting. A million documents is not a default size (the peers take hours
 * there): `pnpm bench --suite keyword --sizes 1000000 --skip orama,wink-bm25,minisearch`.
 */
export const keywordSuite: BenchSuite = {
  name: 'keyword',
  defaultSizes: [10_000, 100_000],
  async run(options) {
    const corpus = new SyntheticCorpus();
    const rows: BenchRow[] = [];
    for (const size of options.sizes) {
      options.log(`keyword: ${size.toLocaleString('en-US')} documents, ${options.queries} queries`);
      rows.push(...(await runSize(size, options, corpus)));
      collectGarbage();
    }
    return rows;
  },
};
