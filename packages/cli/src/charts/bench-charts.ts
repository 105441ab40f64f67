import { barChart, formatShort, lineChart, PALETTE } from './svg.js';

/**
 * The parts of a benchmark report (`bench/results/*.json`, `BenchReport` in bench/report.ts)
 * that the charts read. The CLI does not depend on the private bench package: it reads the JSON.
 */
export interface BenchRowLike {
  suite: string;
  system: string;
  size: number;
  buildMs?: number;
  memoryBytes?: number;
  p50Ms?: number;
  p99Ms?: number;
  qps?: number;
}

export interface BenchReportLike {
  version: number;
  startedAt?: string;
  machine?: { cpus?: number; cpuModel?: string; node?: string };
  rows: BenchRowLike[];
}

/** One chart to write: its file suffix and SVG text. */
export interface BenchChart {
  suite: string;
  /** 'latency', 'throughput' or 'build'. */
  kind: string;
  title: string;
  svg: string;
}

/** Checks the shape of a parsed report; returns a message saying what is wrong, or undefined. */
export function checkBenchReport(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const report = value as Partial<BenchReportLike>;
  if (report.version !== 1) return `unsupported report version ${String(report.version)} (expected 1)`;
  if (!Array.isArray(report.rows)) return 'no "rows" array';
  for (const [index, row] of report.rows.entries()) {
    if (row === null || typeof row !== 'object') return `row ${index} is not an object`;
    if (typeof row.suite !== 'string' || typeof row.system !== 'string')
      return `row ${index} lacks "suite" or "system"`;
    if (typeof row.size !== 'number' || !(row.size > 0)) return `row ${index} has no positive "size"`;
    for (const key of ['buildMs', 'memoryBytes', 'p50Ms', 'p99Ms', 'qps'] as const) {
      const field = row[key];
      if (field !== undefined && (typeof field !== 'number' || !Number.isFinite(field))) {
        return `row ${index} has a "${key}" that is not a finite number`;
      }
    }
  }
  return undefined;
}

function formatMs(ms: number): string {
  if (ms === 0) return '0';
  if (ms >= 1000) return `${formatShort(ms / 1000)} s`;
  if (ms >= 1) return `${formatShort(ms)} ms`;
  return `${formatShort(ms * 1000)} µs`;
}

/**
 * The charts of a report, per suite: query latency (p50 solid, p99 dashed) against corpus size,
 * throughput (queries per second) against corpus size, and build time against corpus size, every
 * system side by side, on logarithmic axes. A suite measured at one size only gets bar charts
 * (one bar per system) instead.
 */
export function benchCharts(report: BenchReportLike): BenchChart[] {
  const suites = [...new Set(report.rows.map((row) => row.suite))];
  const charts: BenchChart[] = [];
  const machine = report.machine
    ? ` (${[report.machine.cpuModel, report.machine.cpus ? `${report.machine.cpus} CPUs` : '', report.machine.node].filter(Boolean).join(', ')})`
    : '';
  for (const suite of suites) {
    const rows = report.rows.filter((row) => row.suite === suite);
    const systems = [...new Set(rows.map((row) => row.system))];
    const sizes = [...new Set(rows.map((row) => row.size))].sort((a, b) => a - b);
    const color = (system: string) => PALETTE[systems.indexOf(system) % PALETTE.length] as string;
    const of = (system: string) => rows.filter((row) => row.system === system);
    const has = (key: keyof BenchRowLike) => rows.some((row) => row[key] !== undefined);
    const id = (kind: string) => `${suite}-${kind}`.replace(/[^A-Za-z0-9_-]+/g, '-');

    if (sizes.length === 1) {
      const size = formatShort(sizes[0] as number);
      const measured = (key: keyof BenchRowLike) => systems.filter((s) => of(s)[0]?.[key] !== undefined);
      if (has('p50Ms') || has('p99Ms')) {
        const names = [...new Set([...measured('p50Ms'), ...measured('p99Ms')])];
        charts.push({
          suite,
          kind: 'latency',
          title: `${suite}: query latency at ${size} documents`,
          svg: barChart({
            id: id('latency'),
            title: `${suite}: query latency at ${size} documents${machine}`,
            categories: names,
            series: [
              { name: 'p50', values: names.map((s) => of(s)[0]?.p50Ms) },
              { name: 'p99', values: names.map((s) => of(s)[0]?.p99Ms) },
            ],
            formatValue: formatMs,
            yLabel: 'milliseconds (lower is better)',
          }),
        });
      }
      if (has('qps')) {
        const names = measured('qps');
        charts.push({
          suite,
          kind: 'throughput',
          title: `${suite}: throughput at ${size} documents`,
          svg: barChart({
            id: id('throughput'),
            title: `${suite}: throughput at ${size} documents${machine}`,
            categories: names,
            series: [{ name: 'queries per second', values: names.map((s) => of(s)[0]?.qps) }],
            yLabel: 'queries per second (higher is better)',
          }),
        });
      }
      if (has('buildMs')) {
        const names = measured('buildMs');
        charts.push({
          suite,
          kind: 'build',
          title: `${suite}: build time at ${size} documents`,
          svg: barChart({
            id: id('build'),
            title: `${suite}: index build time at ${size} documents${machine}`,
            categories: names,
            series: [{ name: 'build time', values: names.map((s) => of(s)[0]?.buildMs) }],
            formatValue: formatMs,
            yLabel: 'milliseconds (lower is better)',
          }),
        });
      }
      continue;
    }

    const points = (
      system: string,
      key: 'p50Ms' | 'p99Ms' | 'qps' | 'buildMs',
      unit: (v: number) => string,
    ) =>
      of(system)
        .filter((row) => row[key] !== undefined)
        .map((row) => ({
          x: row.size,
          y: row[key] as number,
          label: `${system}, ${formatShort(row.size)} documents: ${unit(row[key] as number)}`,
        }));
    if (has('p50Ms') || has('p99Ms')) {
      charts.push({
        suite,
        kind: 'latency',
        title: `${suite}: query latency against corpus size`,
        svg: lineChart({
          id: id('latency'),
          title: `${suite}: query latency against corpus size${machine}`,
          series: systems
            .flatMap((system) => [
              { name: `${system} p50`, color: color(system), points: points(system, 'p50Ms', formatMs) },
              {
                name: `${system} p99`,
                color: color(system),
                dashed: true,
                points: points(system, 'p99Ms', formatMs),
              },
            ])
            .filter((series) => series.points.length > 0),
          xScale: 'log',
          yScale: 'log',
          formatY: formatMs,
          xLabel: 'corpus size (documents)',
          yLabel: 'latency (lower is better)',
          height: 420,
        }),
      });
    }
    if (has('qps')) {
      charts.push({
        suite,
        kind: 'throughput',
        title: `${suite}: throughput against corpus size`,
        svg: lineChart({
          id: id('throughput'),
          title: `${suite}: throughput against corpus size${machine}`,
          series: systems
            .map((system) => ({
              name: system,
              color: color(system),
              points: points(system, 'qps', (v) => `${formatShort(v)} queries/s`),
            }))
            .filter((series) => series.points.length > 0),
          xScale: 'log',
          yScale: 'log',
          xLabel: 'corpus size (documents)',
          yLabel: 'queries per second (higher is better)',
        }),
      });
    }
    if (has('buildMs')) {
      charts.push({
        suite,
        kind: 'build',
        title: `${suite}: build time against corpus size`,
        svg: lineChart({
          id: id('build'),
          title: `${suite}: index build time against corpus size${machine}`,
          series: systems
            .map((system) => ({
              name: system,
              color: color(system),
              points: points(system, 'buildMs', formatMs),
            }))
            .filter((series) => series.points.length > 0),
          xScale: 'log',
          yScale: 'log',
          formatY: formatMs,
          xLabel: 'corpus size (documents)',
          yLabel: 'build time (lower is better)',
        }),
      });
    }
  }
  return charts;
}
