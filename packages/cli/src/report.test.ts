import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchCharts, checkBenchReport } from './charts/bench-charts.js';
import { barChart, lineChart } from './charts/svg.js';
import { drawBenchCharts } from './commands/bench.js';
import { main } from './main.js';
import { compareQueries, ndcgHistogram } from './report/eval-report.js';
import { withChromium } from './test-chromium.js';
import { captureIo } from './test-helpers.js';

let tmp: string;
let collection: string;

/** A small BEIR collection: 40 documents on four topics, 8 judged queries. */
async function writeCollection(folder: string): Promise<void> {
  const topics = [
    ['heat', 'transfer', 'boundary', 'layer', 'convection'],
    ['wing', 'lift', 'slipstream', 'propeller', 'aerodynamics'],
    ['shock', 'wave', 'supersonic', 'nozzle', 'pressure'],
    ['buckling', 'cylinder', 'shell', 'load', 'stress'],
  ];
  const documents: string[] = [];
  for (let i = 0; i < 40; i++) {
    const topic = topics[i % 4] as string[];
    const words = Array.from({ length: 30 }, (_, j) => topic[(i * 7 + j * 3) % topic.length]);
    documents.push(
      JSON.stringify({ _id: `d${i}`, title: `${topic[i % 5]} study ${i}`, text: `${words.join(' ')} .` }),
    );
  }
  const queries: string[] = [];
  const qrels = ['query-id\tcorpus-id\tscore'];
  for (let q = 0; q < 8; q++) {
    const topic = topics[q % 4] as string[];
    queries.push(
      JSON.stringify({ _id: `q${q}`, text: `${topic[q % 5]} ${topic[(q + 2) % 5]} <b>&"quoted"</b>` }),
    );
    for (let d = q % 4; d < 40; d += 8) qrels.push(`q${q}\td${d}\t1`);
  }
  await mkdir(join(folder, 'qrels'), { recursive: true });
  await writeFile(join(folder, 'corpus.jsonl'), `${documents.join('\n')}\n`);
  await writeFile(join(folder, 'queries.jsonl'), `${queries.join('\n')}\n`);
  await writeFile(join(folder, 'qrels', 'test.tsv'), `${qrels.join('\n')}\n`);
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'zerda-cli-report-'));
  collection = join(tmp, 'tiny');
  await writeCollection(collection);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('SVG charts', () => {
  it('draws grouped bars with a title, legend, axis and one titled rect per value', () => {
    const svg = barChart({
      id: 'demo',
      title: 'A <title> & more',
      categories: ['a', 'b'],
      series: [
        { name: 'one', values: [0.5, 1] },
        { name: 'two', values: [0.25, undefined] },
      ],
      yMax: 1,
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('data-chart="demo"');
    expect(svg).toContain('A &lt;title&gt; &amp; more');
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(3);
    expect(svg).toContain('class="legend"');
  });

  it('draws lines on log axes, leaving out values a log axis cannot show', () => {
    const svg = lineChart({
      id: 'lines',
      title: 'latency',
      xScale: 'log',
      yScale: 'log',
      series: [
        {
          name: 'a',
          points: [
            { x: 1000, y: 0.5 },
            { x: 10_000, y: 2 },
            { x: 100_000, y: 0 },
          ],
        },
        { name: 'b', dashed: true, points: [{ x: 1000, y: 10 }] },
      ],
    });
    expect(svg.match(/<path class="line"/g)).toHaveLength(2);
    expect(svg.match(/<circle class="point"/g)).toHaveLength(3);
    expect(svg).toContain('stroke-dasharray="6 4"');
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});

describe('bench charts', () => {
  const report = {
    version: 1,
    machine: { cpus: 2, cpuModel: 'Test CPU', node: 'v20' },
    rows: [
      { suite: 'keyword', system: 'zerda', size: 1000, buildMs: 10, p50Ms: 0.05, p99Ms: 0.2, qps: 9000 },
      { suite: 'keyword', system: 'zerda', size: 10_000, buildMs: 120, p50Ms: 0.1, p99Ms: 0.9, qps: 5000 },
      { suite: 'keyword', system: 'other', size: 1000, buildMs: 50, p50Ms: 2, p99Ms: 9, qps: 300 },
      { suite: 'keyword', system: 'other', size: 10_000, buildMs: 900, p50Ms: 30, p99Ms: 80, qps: 25 },
      { suite: 'vector', system: 'zerda exact', size: 5000, p50Ms: 0.6, p99Ms: 1.5, qps: 1400 },
      { suite: 'vector', system: 'usearch', size: 5000, p50Ms: 1, p99Ms: 2, qps: 600 },
    ],
  };

  it('checks the report and draws latency, throughput and build charts per suite', () => {
    expect(checkBenchReport(report)).toBeUndefined();
    expect(checkBenchReport({ version: 2, rows: [] })).toMatch(/version 2/);
    expect(checkBenchReport({ version: 1, rows: [{ suite: 'k', system: 's', size: 0 }] })).toMatch(/size/);
    const charts = benchCharts(report);
    expect(charts.map((c) => `${c.suite}-${c.kind}`)).toEqual([
      'keyword-latency',
      'keyword-throughput',
      'keyword-build',
      'vector-latency',
      'vector-throughput',
    ]);
    const latency = charts[0]?.svg ?? '';
    // p50 and p99 for each of the two systems, two sizes each.
    expect(latency.match(/<path class="line"/g)).toHaveLength(4);
    expect(latency).toContain('zerda p99');
    // One size: bars per system.
    expect(charts[3]?.svg.match(/<rect class="bar"/g)).toHaveLength(4);
  });

  it('writes SVG files next to the report with zerda bench --from, and names a bad report', async () => {
    const folder = join(tmp, 'bench');
    await mkdir(folder, { recursive: true });
    const path = join(folder, 'run1.json');
    await writeFile(path, JSON.stringify(report));
    const io = captureIo();
    expect(await main(['bench', '--from', path], io)).toBe(0);
    expect(io.out).toContain(join(folder, 'run1-keyword-latency.svg'));
    const svg = await readFile(join(folder, 'run1-keyword-throughput.svg'), 'utf8');
    expect(svg).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<svg xmlns=/);

    await writeFile(join(folder, 'bad.json'), '{"version": 1, "rows": [}');
    const bad = captureIo();
    expect(await main(['bench', '--from', join(folder, 'bad.json')], bad)).toBe(1);
    expect(bad.err).toMatch(/bad\.json.*not valid JSON: position 24/);
    const usage = captureIo();
    expect(await main(['bench', '--from', path, '--quick'], usage)).toBe(2);
    expect(usage.err).toMatch(/--quick cannot go with it/);
  });
});

describe('zerda bench', () => {
  it('runs the benchmark suite in a child process, then draws its charts next to the report', async () => {
    const results = join(tmp, 'bench-run');
    const io = captureIo();
    const code = await main(
      [
        'bench',
        '--suite',
        'keyword',
        '--sizes',
        '200,400',
        '--queries',
        '5',
        '--skip',
        'orama,minisearch,wink-bm25',
        '--results',
        results,
      ],
      io,
    );
    expect(code, io.err).toBe(0);
    expect(io.err).toMatch(
      /running the benchmarks: node --expose-gc --import tsx .*bench\/run\.ts --suite keyword/,
    );
    expect(io.out).toContain(`Charts of ${join(results, 'latest.json')}:`);
    const latency = await readFile(join(results, 'latest-keyword-latency.svg'), 'utf8');
    expect(latency).toMatch(/data-series="zerda p50"/);
    expect(latency.match(/<circle class="point"/g)?.length).toBeGreaterThanOrEqual(4);
  }, 120_000);
});

describe('zerda eval --report', () => {
  it('writes a self-contained HTML page comparing keyword, vector and hybrid', async () => {
    const file = join(tmp, 'out', 'report.html');
    const io = captureIo();
    const code = await main(['eval', collection, '--report', file, '--json'], io);
    expect(code).toBe(0);
    expect(JSON.parse(io.out).mode).toBe('keyword');
    expect(io.err).toContain(`report written to ${file}`);
    const page = await readFile(file, 'utf8');
    expect(page).toMatch(/^<!DOCTYPE html>/);
    expect(page).toContain("default-src 'none'");
    // Self-contained: no external reference at all.
    expect(page).not.toMatch(/(?:src|href)=["']?(?:https?:|\/\/)/i);
    expect(page).not.toMatch(/<script|<link/i);
    for (const mode of ['keyword', 'vector', 'hybrid']) expect(page).toContain(`data-series="${mode}"`);
    // Query text is escaped.
    expect(page).toContain('&lt;b&gt;&amp;&quot;quoted&quot;&lt;/b&gt;');
    expect(page).not.toContain('<b>&"quoted"</b>');
  });

  it('summarises per-query nDCG', () => {
    const a = new Map([
      ['1', { 'ndcg@10': 0.95 }],
      ['2', { 'ndcg@10': 0 }],
      ['3', { 'ndcg@10': 1 }],
    ]);
    const b = new Map([
      ['1', { 'ndcg@10': 0.5 }],
      ['2', { 'ndcg@10': 0 }],
    ]);
    expect(ndcgHistogram(a)).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    expect(compareQueries(a, b)).toEqual({ better: 2, same: 1, worse: 0 });
  });

  it('renders in headless Chromium without console errors, with its charts in the DOM', async () => {
    const file = join(tmp, 'browser', 'report.html');
    expect(await main(['eval', collection, '--mode', 'hybrid', '--report', file], captureIo())).toBe(0);
    const benchFolder = join(tmp, 'bench-browser');
    await mkdir(benchFolder, { recursive: true });
    await writeFile(
      join(benchFolder, 'r.json'),
      JSON.stringify({
        version: 1,
        rows: [
          { suite: 'keyword', system: 'zerda', size: 1000, p50Ms: 0.1, p99Ms: 0.4, qps: 8000, buildMs: 9 },
          { suite: 'keyword', system: 'zerda', size: 10000, p50Ms: 0.3, p99Ms: 1.2, qps: 3000, buildMs: 90 },
        ],
      }),
    );
    const drawn = await drawBenchCharts({ from: join(benchFolder, 'r.json') });

    await withChromium(async (page) => {
      const url = pathToFileURL(file).href;
      await page.open(url);
      const dom = await page.evaluate<{
        title: string;
        charts: Array<{ id: string; width: number; height: number; marks: number }>;
        metricsRows: number;
        perQueryRows: number;
      }>(`(() => ({
        title: document.title,
        charts: [...document.querySelectorAll('figure svg[data-chart]')].map((svg) => {
          const box = svg.getBoundingClientRect();
          return {
            id: svg.getAttribute('data-chart'),
            width: box.width,
            height: box.height,
            marks: svg.querySelectorAll('rect.bar, path.line, circle.point').length,
          };
        }),
        metricsRows: document.querySelectorAll('table.metrics tbody tr').length,
        perQueryRows: document.querySelectorAll('#queries tbody tr').length,
      }))()`);
      const { errors, requests } = page.report();
      expect(errors).toEqual([]);
      // The only request is the page itself.
      expect(requests.filter((request) => request !== url)).toEqual([]);
      expect(dom.title).toBe('Zerda evaluation: tiny');
      expect(dom.charts.map((chart) => chart.id)).toEqual([
        'metrics-by-system',
        'ndcg-distribution',
        'ndcg-sorted',
      ]);
      for (const chart of dom.charts) {
        expect(chart.width).toBeGreaterThan(300);
        expect(chart.height).toBeGreaterThan(100);
        expect(chart.marks).toBeGreaterThan(0);
      }
      expect(dom.metricsRows).toBe(3);
      expect(dom.perQueryRows).toBe(8);

      // The bench charts are valid standalone SVG documents too.
      for (const { path } of drawn.files) {
        await page.open(pathToFileURL(path).href);
        const root = await page.evaluate<{ name: string; marks: number }>(
          `({ name: document.documentElement.localName, marks: document.querySelectorAll('path.line, rect.bar').length })`,
        );
        expect(page.report().errors).toEqual([]);
        expect(root.name).toBe('svg');
        expect(root.marks).toBeGreaterThan(0);
      }
    });
  }, 90_000);
});
