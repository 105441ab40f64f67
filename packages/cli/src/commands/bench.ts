import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatasetError } from '@zerda/core';
import { parseCommandArgs } from '../args.js';
import {
  type BenchChart,
  type BenchReportLike,
  benchCharts,
  checkBenchReport,
} from '../charts/bench-charts.js';
import { type CliIo, ExitCode, UsageError } from '../io.js';
import { parseJsonAt } from '../json-position.js';

export interface DrawBenchOptions {
  /** The benchmark report (JSON written by `pnpm bench`). */
  from: string;
  /** Where to write the SVG files (default: the report's folder). */
  outDir?: string;
}

/** The charts written: file paths with what each shows. */
export interface DrawnCharts {
  report: string;
  files: Array<{ path: string; suite: string; kind: string; title: string }>;
}

/**
 * Reads a benchmark report and writes its charts as SVG files next to it (or into `outDir`):
 * `<report name>-<suite>-latency.svg`, `-throughput.svg` and `-build.svg`.
 */
export async function drawBenchCharts(options: DrawBenchOptions): Promise<DrawnCharts> {
  let text: string;
  try {
    text = await readFile(options.from, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    throw new DatasetError({
      path: options.from,
      message: `the benchmark report cannot be read (${code === 'ENOENT' ? 'no such file; run zerda bench, or pnpm bench, first' : code})`,
      cause: error,
    });
  }
  const value = parseJsonAt(text, (description) => {
    throw new DatasetError({ path: options.from, message: `is not valid JSON: ${description}` });
  });
  const problem = checkBenchReport(value);
  if (problem !== undefined) {
    throw new DatasetError({ path: options.from, message: `is not a benchmark report: ${problem}` });
  }
  const charts = benchCharts(value as BenchReportLike);
  const outDir = options.outDir ?? dirname(options.from);
  const stem = basename(options.from).replace(/\.json$/i, '');
  await mkdir(outDir, { recursive: true });
  const files: DrawnCharts['files'] = [];
  for (const chart of charts) {
    const path = join(outDir, chartFileName(stem, chart));
    await writeFile(path, `<?xml version="1.0" encoding="UTF-8"?>\n${chart.svg}\n`);
    files.push({ path, suite: chart.suite, kind: chart.kind, title: chart.title });
  }
  return { report: options.from, files };
}

function chartFileName(stem: string, chart: BenchChart): string {
  return `${stem}-${chart.suite}-${chart.kind}.svg`.replace(/[^A-Za-z0-9._-]+/g, '-');
}

/**
 * The Zerda repository that holds the benchmark suite (`bench/run.ts` beside a root package.json
 * named zerda-monorepo): searched from the working directory up, then from this file up.
 */
export function findBenchRoot(from: string[] = [process.cwd(), ...moduleDirectory()]): string | undefined {
  for (const start of from) {
    let directory = resolve(start);
    while (true) {
      if (existsSync(join(directory, 'bench', 'run.ts')) && isZerdaRoot(directory)) return directory;
      const parent = dirname(directory);
      if (parent === directory) break;
      directory = parent;
    }
  }
  return undefined;
}

/** This file's folder (none in a CommonJS build, where `import.meta.url` is not set). */
function moduleDirectory(): string[] {
  try {
    return [dirname(fileURLToPath(import.meta.url))];
  } catch {
    return [];
  }
}

function isZerdaRoot(directory: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { name?: string };
    return pkg.name === 'zerda-monorepo';
  } catch {
    return false;
  }
}

export const benchHelp = `Usage: zerda bench [options]
       zerda bench --from <report.json> [--out <dir>]

Runs the benchmark suite of the Zerda repository (bench/run.ts: index build time, memory,
query latency p50 and p99, and throughput at growing corpus sizes, for Zerda and the libraries
it is compared with), then draws its charts as SVG files next to the report's JSON:
  <name>-<suite>-latency.svg      p50 (solid) and p99 (dashed) latency against corpus size
  <name>-<suite>-throughput.svg   queries per second against corpus size
  <name>-<suite>-build.svg        index build time against corpus size
(logarithmic axes; a suite measured at one size gets bars per system instead). With --from it
only draws the charts of an existing report.

Options:
  --from <file>        draw the charts of this report, without running the benchmarks
  --out <dir>          where to write the charts (default: the report's folder)
  --suite <names>      suites to run, comma-separated (keyword, vector, hybrid; default all)
  --sizes <list>       corpus sizes, comma-separated (default: each suite's own)
  --queries <n>        timed queries per size
  --skip <names>       systems to leave out, comma-separated (for example orama,wink-bm25)
  --quick              each suite's smallest size, fewer queries
  --results <dir>      where the benchmark writes its reports (default bench/results); the
                       charts are drawn from <dir>/latest.json
  -h, --help           show this help

Benchmarks run in a child process (node --expose-gc, so that memory can be measured) from the
repository root; they need a clone of the Zerda repository with its dependencies installed.
Timings depend on the machine and what else runs on it.

Exit codes: 0 success; 1 the benchmark or the drawing failed (no repository, an unreadable
report); 2 the command was called wrongly.

Examples:
  pnpm zerda bench --quick
  pnpm zerda bench --suite keyword --sizes 10000,100000 --skip orama
  pnpm zerda bench --from bench/results/latest.json
`;

/** `zerda bench` from command-line arguments; returns the exit code. */
export async function benchCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      from: { type: 'string' },
      out: { type: 'string' },
      suite: { type: 'string' },
      sizes: { type: 'string' },
      queries: { type: 'string' },
      skip: { type: 'string' },
      quick: { type: 'boolean', default: false },
      results: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    benchHelp,
  );
  if (values.help) {
    io.stdout(benchHelp);
    return ExitCode.ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`, benchHelp);
  const runFlags = ['suite', 'sizes', 'queries', 'skip', 'results'] as const;
  let from = values.from;
  if (from !== undefined) {
    const extra = runFlags.filter((flag) => values[flag] !== undefined);
    if (values.quick) extra.push('quick' as never);
    if (extra.length > 0) {
      throw new UsageError(
        `--from draws an existing report; ${extra.map((flag) => `--${flag}`).join(', ')} cannot go with it`,
        benchHelp,
      );
    }
  } else {
    const root = findBenchRoot();
    if (root === undefined) {
      throw new DatasetError({
        path: process.cwd(),
        message:
          'zerda bench runs the benchmark suite of a Zerda repository clone (bench/run.ts), and none was found here or above; draw an existing report with --from <report.json>',
      });
    }
    const args = ['--expose-gc', '--import', 'tsx', '--conditions=@zerda/source', join('bench', 'run.ts')];
    for (const flag of ['suite', 'sizes', 'queries', 'skip'] as const) {
      const value = values[flag];
      if (value !== undefined) args.push(`--${flag}`, value);
    }
    if (values.quick) args.push('--quick');
    const resultsDir =
      values.results === undefined ? join(root, 'bench', 'results') : resolve(values.results);
    if (values.results !== undefined) args.push('--out', resultsDir);
    io.stderr(`running the benchmarks: node ${args.join(' ')} (in ${root})\n`);
    const code = await runChild(process.execPath, args, root, io);
    if (code !== 0) {
      io.stderr(`zerda bench: the benchmark run failed (exit code ${code})\n`);
      return code === 2 ? ExitCode.usage : ExitCode.failure;
    }
    from = join(resultsDir, 'latest.json');
  }
  const drawn = await drawBenchCharts({ from, outDir: values.out });
  io.stdout(
    drawn.files.length === 0
      ? `No chart drawn: ${drawn.report} has no rows.\n`
      : `Charts of ${drawn.report}:\n${drawn.files.map((file) => `  ${file.path}  ${file.title}`).join('\n')}\n`,
  );
  return ExitCode.ok;
}

/** Runs a child process, passing its output through; resolves with its exit code. */
function runChild(command: string, args: string[], cwd: string, io: CliIo): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.setEncoding('utf8').on('data', (text: string) => io.stdout(text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => io.stderr(text));
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise(code ?? (signal ? 128 : 1)));
  });
}
