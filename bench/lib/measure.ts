/** Measurement helpers shared by the suites: memory, latency percentiles, timed query loops. */

let warnedNoGc = false;

/** Runs a full garbage collection when node was started with --expose-gc (the bench script does). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  } else if (!warnedNoGc) {
    warnedNoGc = true;
    process.stderr.write('warning: run node with --expose-gc for meaningful memory figures\n');
  }
}

/** Heap used plus memory outside the heap (typed arrays, native buffers), after a collection. */
export function retainedBytes(): number {
  collectGarbage();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

/**
 * Builds something and measures the wall time and the memory it retains afterwards (the value
 * stays referenced until the second measurement).
 */
export async function measureBuild<T>(
  build: () => T | Promise<T>,
): Promise<{ value: T; ms: number; bytes: number }> {
  const before = retainedBytes();
  const started = performance.now();
  const value = await build();
  const ms = performance.now() - started;
  const bytes = retainedBytes() - before;
  return { value, ms, bytes: Math.max(0, bytes) };
}

/** Nearest-rank percentile (0 for no values). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

export interface QueryLoopOptions {
  /** Untimed queries run first (default min(10, 10% of the queries)). */
  warmup?: number;
  /**
   * Where the warm-up queries come from (default: the timed list's first queries). A list apart
   * from the timed one, drawn from the same distribution, lets the timed pass measure what a
   * running application's queries cost, rather than first runs of code the JIT has not optimised
   * yet, without warming any timed query's own postings.
   */
  warmupQueries?: readonly string[];
  /** Wall-time budget for the warm-up and the timed queries together, in ms (default unlimited). */
  budgetMs?: number;
  /** At least this many timed queries even over the budget (default 3). */
  minQueries?: number;
}

export interface QueryLoopResult<R> {
  /** Results of the timed queries, in order (query i of the list is results[i]). */
  results: R[];
  latencies: number[];
  p50: number;
  p99: number;
  /** Timed queries per second, run one after another. */
  qps: number;
  /** How many queries were timed, and whether the budget cut the list short. */
  timed: number;
  /** How many warm-up queries ran (fewer than asked when the budget's quarter ran out). */
  warmedUp: number;
  truncated: boolean;
}

/**
 * Runs queries one after another: a warm-up (untimed, on the first queries), then the list from
 * the start, timed one by one, until the list or the time budget is exhausted.
 */
export async function runQueries<R>(
  queries: readonly string[],
  search: (query: string) => R | Promise<R>,
  options: QueryLoopOptions = {},
): Promise<QueryLoopResult<R>> {
  const budget = options.budgetMs ?? Number.POSITIVE_INFINITY;
  const minQueries = Math.min(options.minQueries ?? 3, queries.length);
  const warmupQueries = options.warmupQueries ?? queries;
  const warmup = Math.min(
    options.warmup ?? Math.min(10, Math.ceil(queries.length / 10)),
    warmupQueries.length,
  );
  const started = performance.now();
  let warmedUp = 0;
  while (warmedUp < warmup) {
    await search(warmupQueries[warmedUp++] as string);
    if (performance.now() - started > budget / 4) break;
  }
  const results: R[] = [];
  const latencies: number[] = [];
  const timedStart = performance.now();
  for (const query of queries) {
    if (latencies.length >= minQueries && performance.now() - started > budget) break;
    const t0 = performance.now();
    const result = await search(query);
    latencies.push(performance.now() - t0);
    results.push(result);
  }
  const elapsed = performance.now() - timedStart;
  return {
    results,
    latencies,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    qps: latencies.length / (elapsed / 1000),
    timed: latencies.length,
    warmedUp,
    truncated: latencies.length < queries.length,
  };
}

/**
 * Mean top-k overlap of `lists` with `reference` (query by query, over the queries both have):
 * |top-k ∩ reference top-k| / min(k, |reference top-k|); a query whose reference is empty counts 1
 * when the list is empty too.
 */
export function meanOverlap(lists: readonly string[][], reference: readonly string[][], k = 10): number {
  const n = Math.min(lists.length, reference.length);
  if (n === 0) return 0;
  let total = 0;
  for (let q = 0; q < n; q++) {
    const expected = new Set((reference[q] as string[]).slice(0, k));
    const found = (lists[q] as string[]).slice(0, k);
    if (expected.size === 0) {
      total += found.length === 0 ? 1 : 0;
      continue;
    }
    let hits = 0;
    for (const id of found) if (expected.has(id)) hits++;
    total += hits / expected.size;
  }
  return total / n;
}

/** A short human rendering of a byte count. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

/** A built system as the interleaved timing loop sees it: results for a query (top-10 ids, say). */
export interface TimedContender<Q = Float32Array, R = string[]> {
  built: { search(query: Q): R | Promise<R> };
  latencies: number[];
  /** CPU time (user + system, this process) of each timed query, in milliseconds, when kept. */
  cpuLatencies?: number[];
  /** Results of the timed queries, query i at position i. */
  results: R[];
}

/**
 * Times every system on the same queries, interleaved: query i goes to each system in turn
 * (starting with a different one each time), so that a change in the machine's load (other
 * processes, garbage collection) falls on all systems alike rather than on whichever ran then.
 * Each system first runs the warm-up queries untimed (default: the first 10 timed ones). A
 * system stops once it has spent `budgetMs` and timed at least `minQueries`.
 */
export async function timeInterleaved<Q, R>(
  contenders: TimedContender<Q, R>[],
  queries: readonly Q[],
  {
    budgetMs,
    minQueries,
    warmupQueries = queries.slice(0, 10),
  }: { budgetMs: number; minQueries: number; warmupQueries?: readonly Q[] },
): Promise<void> {
  for (const contender of contenders) {
    for (const query of warmupQueries) await contender.built.search(query);
  }
  const spent = new Map<TimedContender<Q, R>, number>();
  for (let index = 0; index < queries.length; index++) {
    for (let turn = 0; turn < contenders.length; turn++) {
      const contender = contenders[(index + turn) % contenders.length]!;
      const used = spent.get(contender) ?? 0;
      if (used > budgetMs && contender.latencies.length >= minQueries) continue;
      const cpuStarted = process.cpuUsage();
      const started = performance.now();
      const result = await contender.built.search(queries[index]!);
      const ms = performance.now() - started;
      const cpu = process.cpuUsage(cpuStarted);
      contender.latencies.push(ms);
      contender.cpuLatencies?.push((cpu.user + cpu.system) / 1000);
      contender.results.push(result);
      spent.set(contender, used + ms);
    }
  }
}
