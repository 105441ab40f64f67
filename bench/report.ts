/** One measured row of a benchmark: a system at a corpus size on one task. */
export interface BenchRow {
  suite: string;
  /** 'zerda' or the compared library, with its mode (for example 'usearch exact'). */
  system: string;
  /** Corpus size (documents or vectors). */
  size: number;
  /** Build or index time in milliseconds. */
  buildMs?: number;
  /** Heap (and external memory where relevant) retained by the built index, in bytes. */
  memoryBytes?: number;
  p50Ms?: number;
  p99Ms?: number;
  qps?: number;
  /** Agreement with the reference (for example top-10 overlap with exhaustive BM25, or recall@10). */
  quality?: Record<string, number>;
  notes?: string;
}

export interface BenchSuiteOptions {
  /** Corpus sizes to measure. */
  sizes: number[];
  /** Number of timed queries per size. */
  queries: number;
  /** Systems to leave out (by name), for quick runs. */
  skip: string[];
  log: (line: string) => void;
}

/** A suite measures one concern; `bench/run.ts` runs every suite in `suites/index.ts`. */
export interface BenchSuite {
  name: string;
  /** Default sizes when the command line does not say. */
  defaultSizes: number[];
  run(options: BenchSuiteOptions): Promise<BenchRow[]>;
}
