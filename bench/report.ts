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

/** The machine a report was measured on. */
export interface BenchMachine {
  platform: string;
  arch: string;
  cpus: number;
  cpuModel: string;
  totalMemoryBytes: number;
  node: string;
  v8: string;
  /** Whether node ran with --expose-gc (memory figures are meaningless without it). */
  exposeGc: boolean;
  /** 1, 5 and 15 minute load averages when the run started (other work skews the timings). */
  loadAverage: number[];
}

/** What `bench/run.ts` writes to `bench/results/<timestamp>.json` and `latest.json`. */
export interface BenchReport {
  /** Report format version. */
  version: 1;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  git: { commit: string | null; dirty: boolean | null };
  machine: BenchMachine;
  options: {
    suites: string[];
    sizes: Record<string, number[]>;
    queries: number;
    skip: string[];
    quick: boolean;
  };
  rows: BenchRow[];
}

/** Rows as an aligned text table, with each distinct note listed once underneath. */
export function formatBenchTable(rows: readonly BenchRow[]): string {
  const qualityKeys = [...new Set(rows.flatMap((row) => Object.keys(row.quality ?? {})))];
  const header = ['suite', 'system', 'size', 'build', 'memory', 'p50', 'p99', 'qps', ...qualityKeys, 'note'];
  const notes: string[] = [];
  const body = rows.map((row) => {
    let noteRef = '';
    if (row.notes) {
      let index = notes.indexOf(row.notes);
      if (index < 0) index = notes.push(row.notes) - 1;
      noteRef = `[${index + 1}]`;
    }
    return [
      row.suite,
      row.system,
      row.size.toLocaleString('en-US'),
      row.buildMs === undefined ? '' : formatMs(row.buildMs),
      row.memoryBytes === undefined ? '' : formatMiB(row.memoryBytes),
      row.p50Ms === undefined ? '' : formatMs(row.p50Ms),
      row.p99Ms === undefined ? '' : formatMs(row.p99Ms),
      row.qps === undefined ? '' : row.qps >= 100 ? row.qps.toFixed(0) : row.qps.toFixed(2),
      ...qualityKeys.map((key) =>
        row.quality?.[key] === undefined ? '' : (row.quality[key] as number).toFixed(3),
      ),
      noteRef,
    ];
  });
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((cells) => cells[column]?.length ?? 0)),
  );
  const numeric = new Set([2, 3, 4, 5, 6, 7, ...qualityKeys.map((_, i) => 8 + i)]);
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        numeric.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  const lines = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];
  if (notes.length > 0) lines.push('', ...notes.map((note, index) => `[${index + 1}] ${note}`));
  return `${lines.join('\n')}\n`;
}

function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  return `${(ms * 1000).toFixed(0)} µs`;
}

function formatMiB(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
