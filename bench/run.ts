/**
 * Runs the benchmark suites and writes a machine-readable report.
 *
 *   pnpm bench [--suite keyword] [--sizes 10000,100000] [--queries 500] [--skip orama,wink-bm25] [--quick]
 *
 * The root `bench` script runs node with --expose-gc so that memory can be measured.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type BenchReport, type BenchRow, formatBenchTable } from './report.js';
import { suites } from './suites/index.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const DEFAULT_QUERIES = 500;
const QUICK_QUERIES = 100;

const help = `Usage: pnpm bench [options]

Measures index build time, retained memory, query latency (p50, p99), throughput and agreement
with a reference, beside the libraries a user would otherwise pick. Writes the report to
bench/results/<timestamp>.json and bench/results/latest.json.

Options:
  --suite <names>    suites to run, comma-separated (${suites.map((s) => s.name).join(', ')}; default all)
  --sizes <list>     corpus sizes, comma-separated (default: each suite's own)
  --queries <n>      timed queries per size (default ${DEFAULT_QUERIES}; slow systems stop at a time budget)
  --skip <names>     systems to leave out, comma-separated (for example orama,wink-bm25)
  --quick            each suite's smallest size and ${QUICK_QUERIES} queries
  --out <folder>     where to write reports (default bench/results)
  -h, --help         show this help

Example:
  pnpm bench --suite keyword --sizes 10000 --queries 200
`;

class UsageError extends Error {}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function positiveInteger(text: string, flag: string): number {
  const value = Number(text.replace(/_/g, ''));
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`--${flag} wants positive integers, got '${text}'`);
  }
  return value;
}

function gitInfo(): BenchReport['git'] {
  const git = (args: string[]) =>
    execFileSync('git', args, {
      cwd: benchDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  try {
    const commit = git(['rev-parse', 'HEAD']);
    let dirty: boolean | null = null;
    try {
      dirty = git(['status', '--porcelain', '--untracked-files=no']).length > 0;
    } catch {
      dirty = null;
    }
    return { commit, dirty };
  } catch {
    return { commit: null, dirty: null };
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n\n${help}`);
    return 2;
  }
  if (parsed.help) {
    process.stdout.write(help);
    return 0;
  }
  const { selected, sizes, queries, skip, quick, out } = parsed;
  const exposeGc = typeof (globalThis as { gc?: unknown }).gc === 'function';
  if (!exposeGc)
    process.stderr.write('warning: node runs without --expose-gc; memory figures will be noisy\n');

  const startedAt = new Date();
  const loadAverage = loadavg().map((load) => Math.round(load * 100) / 100);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const rows: BenchRow[] = [];
  const sizesBySuite: Record<string, number[]> = {};
  for (const suite of selected) {
    const suiteSizes = sizes ?? (quick ? [Math.min(...suite.defaultSizes)] : suite.defaultSizes);
    sizesBySuite[suite.name] = suiteSizes;
    log(`== ${suite.name}: sizes ${suiteSizes.join(', ')}, ${queries} queries`);
    const suiteRows = await suite.run({ sizes: suiteSizes, queries, skip, log });
    rows.push(...suiteRows);
    process.stdout.write(`\n${formatBenchTable(suiteRows)}`);
  }
  const finishedAt = new Date();
  const cpuList = cpus();
  const report: BenchReport = {
    version: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - startedAt.getTime(),
    git: gitInfo(),
    machine: {
      platform: process.platform,
      arch: process.arch,
      cpus: cpuList.length,
      cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
      totalMemoryBytes: totalmem(),
      node: process.version,
      v8: process.versions.v8,
      exposeGc,
      loadAverage,
    },
    options: { suites: selected.map((s) => s.name), sizes: sizesBySuite, queries, skip, quick },
    rows,
  };
  await mkdir(out, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const file = join(out, `${stamp}.json`);
  await writeFile(file, json);
  await writeFile(join(out, 'latest.json'), json);
  process.stdout.write(`\nReport written to ${file} (and latest.json)\n`);
  return 0;
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      suite: { type: 'string' },
      sizes: { type: 'string' },
      queries: { type: 'string' },
      skip: { type: 'string' },
      quick: { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const names = list(values.suite);
  const unknown = names.filter((name) => !suites.some((suite) => suite.name === name));
  if (unknown.length > 0) {
    throw new UsageError(
      `unknown suite '${unknown.join("', '")}': expected ${suites.map((s) => s.name).join(', ')}`,
    );
  }
  const selected = names.length === 0 ? suites : suites.filter((suite) => names.includes(suite.name));
  const sizeList = list(values.sizes);
  const sizes = sizeList.length === 0 ? undefined : sizeList.map((size) => positiveInteger(size, 'sizes'));
  const queries =
    values.queries === undefined
      ? values.quick
        ? QUICK_QUERIES
        : DEFAULT_QUERIES
      : positiveInteger(values.queries, 'queries');
  return {
    help: values.help,
    selected,
    sizes,
    queries,
    skip: list(values.skip),
    quick: values.quick,
    out: values.out ?? join(benchDir, 'results'),
  };
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
