import { barChart, escapeXml, lineChart, PALETTE } from '../charts/svg.js';
import type { EvalReport, PerQueryMetrics } from '../commands/eval.js';

/** One evaluated system (a retrieval mode, or a run file) with its per-query metrics. */
export interface ReportSeries {
  /** Its name in the report: 'keyword', 'vector', 'hybrid', or a run file's name. */
  name: string;
  report: EvalReport;
  perQuery: PerQueryMetrics;
}

export interface EvalReportPage {
  series: readonly ReportSeries[];
  /** Query texts by id, for the per-query table. */
  queries: ReadonlyMap<string, string>;
  /** When the page was made (default now). */
  generatedAt?: Date;
  /** The command that made it, shown at the bottom. */
  command?: string;
}

const METRICS = [
  { key: 'ndcg@10', label: 'nDCG@10' },
  { key: 'recall@100', label: 'Recall@100' },
  { key: 'mrr@10', label: 'MRR@10' },
] as const;

const MODE_COLORS: Record<string, string> = {
  keyword: PALETTE[0] as string,
  vector: PALETTE[1] as string,
  hybrid: PALETTE[2] as string,
};

const CSS = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; color: #1f2328; background: #f6f8fa; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 20px 48px; }
header h1 { font-size: 26px; margin: 0 0 4px; }
header p { margin: 0; color: #57606a; }
section { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 16px 20px; margin-top: 20px; }
section h2 { font-size: 18px; margin: 0 0 12px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 6px 10px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
th { font-weight: 600; background: #f6f8fa; }
td.num, th.num { text-align: right; }
td.best { font-weight: 700; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: baseline; }
.charts { display: grid; grid-template-columns: 1fr; gap: 16px; }
figure { margin: 0; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { color: #57606a; font-size: 13px; margin-top: 4px; }
details summary { cursor: pointer; font-weight: 600; }
.per-query { max-height: 480px; overflow: auto; margin-top: 8px; }
.per-query td.text { max-width: 460px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.warnings li { color: #9a6700; }
footer { color: #57606a; font-size: 12px; margin-top: 24px; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa; padding: 1px 4px; border-radius: 4px; }
`;

const html = escapeXml;

function fmt(value: number | undefined, digits = 4): string {
  return value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
}

function colorOf(name: string, index: number): string {
  return MODE_COLORS[name] ?? (PALETTE[(index + 3) % PALETTE.length] as string);
}

/** Per-query nDCG@10 in ten bins: [0, 0.1), [0.1, 0.2), ... [0.9, 1]. */
export function ndcgHistogram(perQuery: PerQueryMetrics): number[] {
  const bins = new Array<number>(10).fill(0);
  for (const values of perQuery.values()) {
    const value = values['ndcg@10'] ?? 0;
    const bin = Math.min(9, Math.max(0, Math.floor(value * 10)));
    bins[bin] = (bins[bin] ?? 0) + 1;
  }
  return bins;
}

/** Queries where `a` scores higher, the same, and lower than `b` on nDCG@10. */
export function compareQueries(
  a: PerQueryMetrics,
  b: PerQueryMetrics,
): { better: number; same: number; worse: number } {
  const result = { better: 0, same: 0, worse: 0 };
  for (const [id, values] of a) {
    const mine = values['ndcg@10'] ?? 0;
    const theirs = b.get(id)?.['ndcg@10'] ?? 0;
    if (Math.abs(mine - theirs) < 1e-9) result.same++;
    else if (mine > theirs) result.better++;
    else result.worse++;
  }
  return result;
}

/**
 * The evaluation as one self-contained HTML page: inline CSS and inline SVG charts, no script and
 * no external request (a Content-Security-Policy forbids any). It holds the metrics table, a bar
 * chart of the metrics by system, the distribution of per-query nDCG@10 (a histogram, and each
 * system's queries sorted by score), head-to-head counts, the settings and a per-query table.
 */
export function renderEvalReport(page: EvalReportPage): string {
  const { series } = page;
  const first = series[0]?.report;
  if (first === undefined) throw new RangeError('a report needs at least one evaluated system');
  const generatedAt = page.generatedAt ?? new Date();
  const title = `Zerda evaluation: ${first.collection}`;

  const best = Object.fromEntries(
    METRICS.map(({ key }) => [key, Math.max(...series.map((s) => s.report[key]))]),
  ) as Record<(typeof METRICS)[number]['key'], number>;
  const rows = series
    .map((s, index) => {
      const r = s.report;
      const cells = METRICS.map(
        ({ key }) =>
          `<td class="num${r[key] === best[key] && series.length > 1 ? ' best' : ''}">${fmt(r[key])}</td>`,
      ).join('');
      const latency = r.queryLatencyMs;
      return `<tr><td><span class="swatch" style="background:${colorOf(s.name, index)}"></span>${html(s.name)}${r.fusion ? ` <small>(${html(r.fusion)})</small>` : ''}</td>${cells}<td class="num">${r.indexTimeMs === undefined ? '–' : `${r.indexTimeMs.toFixed(0)} ms`}</td><td class="num">${latency ? `${latency.p50.toFixed(2)} ms` : '–'}</td><td class="num">${latency ? `${latency.p99.toFixed(2)} ms` : '–'}</td></tr>`;
    })
    .join('\n');

  const charts: string[] = [];
  charts.push(
    figure(
      barChart({
        id: 'metrics-by-system',
        title: series.length > 1 ? `${series.map((s) => s.name).join(' vs ')}: mean metrics` : 'Mean metrics',
        categories: METRICS.map((m) => m.label),
        series: series.map((s, index) => ({
          name: s.name,
          color: colorOf(s.name, index),
          values: METRICS.map(({ key }) => s.report[key]),
        })),
        yMax: 1,
        yScale: 'linear',
        formatValue: (v) => v.toFixed(3),
        yLabel: 'mean over judged queries',
      }),
      `Each metric averaged over the ${first.judgedQueries} judged queries (a query with no result scores 0).`,
    ),
  );
  charts.push(
    figure(
      barChart({
        id: 'ndcg-distribution',
        title: 'Per-query nDCG@10: how many queries in each range',
        categories: Array.from(
          { length: 10 },
          (_, i) => `${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)}`,
        ),
        series: series.map((s, index) => ({
          name: s.name,
          color: colorOf(s.name, index),
          values: ndcgHistogram(s.perQuery),
        })),
        formatValue: (v) => String(Math.round(v)),
        yScale: 'linear',
        labels: series.length * 10 <= 30,
        xLabel: 'nDCG@10 of a query',
        yLabel: 'queries',
      }),
      'The spread behind the mean: queries answered well sit on the right, queries missed entirely in the first bar.',
    ),
  );
  charts.push(
    figure(
      lineChart({
        id: 'ndcg-sorted',
        title: 'Per-query nDCG@10, each system’s queries sorted from best to worst',
        series: series.map((s, index) => {
          const values = [...s.perQuery.values()].map((v) => v['ndcg@10'] ?? 0).sort((a, b) => b - a);
          const total = values.length;
          return {
            name: s.name,
            color: colorOf(s.name, index),
            points: values.map((y, i) => ({
              x: total <= 1 ? 100 : (100 * i) / (total - 1),
              y,
              label: `${s.name}: query ${i + 1} of ${total}, nDCG@10 ${y.toFixed(3)}`,
            })),
          };
        }),
        yMin: 0,
        yMax: 1,
        dots: false,
        formatX: (v) => `${Math.round(v)}%`,
        formatY: (v) => v.toFixed(1),
        xLabel: 'share of queries (sorted by nDCG@10)',
        yLabel: 'nDCG@10',
      }),
      'A higher curve is better; where the curves cross, one system wins on easy queries and the other on hard ones.',
    ),
  );

  const pairs: string[] = [];
  for (let i = 0; i < series.length; i++) {
    for (let j = 0; j < series.length; j++) {
      const a = series[i] as ReportSeries;
      const b = series[j] as ReportSeries;
      if (i === j || !(a.name === 'hybrid' || (i > j && b.name !== 'hybrid'))) continue;
      const c = compareQueries(a.perQuery, b.perQuery);
      pairs.push(
        `<tr><td>${html(a.name)} vs ${html(b.name)}</td><td class="num">${c.better}</td><td class="num">${c.same}</td><td class="num">${c.worse}</td></tr>`,
      );
    }
  }

  const ids = [...new Set(series.flatMap((s) => [...s.perQuery.keys()]))];
  const perQueryRows = ids
    .map((id) => {
      const values = series.map((s) => s.perQuery.get(id)?.['ndcg@10']);
      const top = Math.max(...values.map((v) => v ?? 0));
      const cells = values
        .map(
          (v) =>
            `<td class="num${series.length > 1 && v === top && top > 0 ? ' best' : ''}">${fmt(v, 3)}</td>`,
        )
        .join('');
      const text = page.queries.get(id) ?? '';
      return `<tr><td>${html(id)}</td><td class="text" title="${html(text)}">${html(text)}</td>${cells}</tr>`;
    })
    .join('\n');

  const settings = series
    .map(
      (s) =>
        `<tr><td>${html(s.name)}</td><td><code>${html(JSON.stringify(s.report.settings))}</code></td></tr>`,
    )
    .join('\n');
  const warnings = [...new Set(series.flatMap((s) => s.report.warnings.map((w) => `${s.name}: ${w}`)))];

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${html(title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
<header>
<h1>${html(title)}</h1>
<p>${html(first.folder)} · ${first.documents.toLocaleString('en-US')} documents · ${first.judgedQueries} judged queries of ${first.queries} · judgments ${html(first.qrels)}</p>
</header>
<section id="metrics">
<h2>Metrics</h2>
<table class="metrics">
<thead><tr><th>system</th>${METRICS.map((m) => `<th class="num">${m.label}</th>`).join('')}<th class="num">index time</th><th class="num">latency p50</th><th class="num">latency p99</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>
<section id="charts">
<h2>Charts</h2>
<div class="charts">
${charts.join('\n')}
</div>
</section>
${
  pairs.length > 0
    ? `<section id="head-to-head">
<h2>Head to head (nDCG@10 per query)</h2>
<table>
<thead><tr><th>systems</th><th class="num">first better</th><th class="num">same</th><th class="num">first worse</th></tr></thead>
<tbody>
${pairs.join('\n')}
</tbody>
</table>
</section>`
    : ''
}
<section id="settings">
<h2>Settings</h2>
<table><tbody>
${settings}
</tbody></table>
${warnings.length > 0 ? `<h2>Warnings</h2><ul class="warnings">${warnings.map((w) => `<li>${html(w)}</li>`).join('')}</ul>` : ''}
</section>
<section id="queries">
<details>
<summary>nDCG@10 of each of the ${ids.length} queries</summary>
<div class="per-query">
<table>
<thead><tr><th>query</th><th>text</th>${series.map((s) => `<th class="num">${html(s.name)}</th>`).join('')}</tr></thead>
<tbody>
${perQueryRows}
</tbody>
</table>
</div>
</details>
</section>
<footer>Generated by <code>zerda eval</code> on ${html(generatedAt.toISOString())}${page.command ? ` · <code>${html(page.command)}</code>` : ''}. Metrics as trec_eval computes them (nDCG with linear gain).</footer>
</main>
</body>
</html>
`;
}

function figure(svg: string, caption: string): string {
  return `<figure>${svg}<figcaption>${html(caption)}</figcaption></figure>`;
}
