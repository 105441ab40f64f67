/**
 * Small, dependency-free SVG charts: grouped bars and lines (linear or logarithmic axes), with
 * axes, grid lines, a legend and a `<title>` on every mark (a tooltip in browsers). Each chart is
 * one standalone `<svg>` element (with its namespace, so it is also a valid .svg file), sized by
 * its viewBox so that it scales to its container.
 */

/** Okabe–Ito colours, distinguishable with the common colour-vision deficiencies. */
export const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#CC79A7',
  '#56B4E9',
  '#D55E00',
  '#F0E442',
  '#000000',
];

export interface ChartFrame {
  /** The chart's heading, drawn at the top and used as its accessible name. */
  title: string;
  /** A machine-readable name, written as `data-chart` on the `<svg>`. */
  id: string;
  width?: number;
  height?: number;
  xLabel?: string;
  yLabel?: string;
}

export interface BarSeries {
  name: string;
  values: ReadonlyArray<number | undefined>;
  color?: string;
}

export interface BarChartOptions extends ChartFrame {
  categories: readonly string[];
  series: readonly BarSeries[];
  /** Top of the value axis (default: the largest value, rounded up to a nice number). */
  yMax?: number;
  formatValue?: (value: number) => string;
  /** Print each bar's value above it (default true when there are at most 24 bars). */
  labels?: boolean;
  /**
   * 'linear' (from 0), 'log' (for values spread over orders of magnitude), or 'auto' (default):
   * log when the largest positive value is more than 50 times the smallest.
   */
  yScale?: 'linear' | 'log' | 'auto';
}

export interface LineSeries {
  name: string;
  points: ReadonlyArray<{ x: number; y: number; label?: string }>;
  color?: string;
  dashed?: boolean;
}

export interface LineChartOptions extends ChartFrame {
  series: readonly LineSeries[];
  xScale?: 'linear' | 'log';
  yScale?: 'linear' | 'log';
  /** Fixed value-axis range (default: the data's, rounded out to nice numbers). */
  yMin?: number;
  yMax?: number;
  formatX?: (value: number) => string;
  formatY?: (value: number) => string;
  /** Draw a dot at every point (default true). */
  dots?: boolean;
}

const FONT = 'font-family="system-ui, -apple-system, \'Segoe UI\', Roboto, sans-serif"';

/** Text escaped for XML content and attribute values. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const fixed = (value: number) => (Math.round(value * 100) / 100).toString();

/** A number shortly: 0.123, 12.3, 1.2k, 3.4M. */
export function formatShort(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${trim(value / 1e9)}G`;
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e3) return `${trim(value / 1e3)}k`;
  if (abs === 0) return '0';
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return trim(value, 1);
  if (abs >= 1) return trim(value, 2);
  if (abs >= 0.01) return trim(value, 3);
  return value.toExponential(1);
}

function trim(value: number, digits = 1): string {
  return value.toFixed(digits).replace(/\.?0+$/, '');
}

/** 1, 2 or 5 times a power of ten, at least `value`. */
function niceCeil(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value - 1e-12) return step * power;
  return 10 * power;
}

function linearTicks(min: number, max: number, count = 5): number[] {
  const step = niceCeil((max - min) / count);
  const ticks: number[] = [];
  for (let value = Math.ceil(min / step) * step; value <= max + step * 1e-9; value += step) {
    ticks.push(Math.round(value / step) * step);
  }
  return ticks;
}

function logTicks(min: number, max: number): number[] {
  const low = Math.floor(Math.log10(min));
  const high = Math.ceil(Math.log10(max));
  const ticks: number[] = [];
  const decades = high - low;
  for (let exponent = low; exponent <= high; exponent++) {
    const power = 10 ** exponent;
    for (const step of decades <= 2 ? [1, 2, 5] : [1]) {
      const value = step * power;
      if (value >= min * (1 - 1e-9) && value <= max * (1 + 1e-9)) ticks.push(value);
    }
  }
  return ticks;
}

interface Scale {
  (value: number): number;
  ticks: number[];
}

function makeScale(kind: 'linear' | 'log', min: number, max: number, from: number, to: number): Scale {
  let scale: Scale;
  if (kind === 'log') {
    const lo = Math.log10(min);
    const hi = Math.log10(max);
    const span = hi - lo || 1;
    scale = ((value: number) => from + ((Math.log10(value) - lo) / span) * (to - from)) as Scale;
    scale.ticks = logTicks(min, max);
  } else {
    const span = max - min || 1;
    scale = ((value: number) => from + ((value - min) / span) * (to - from)) as Scale;
    scale.ticks = linearTicks(min, max);
  }
  return scale;
}

function open(frame: ChartFrame, width: number, height: number): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" ` +
    `role="img" aria-labelledby="${escapeXml(frame.id)}-title" data-chart="${escapeXml(frame.id)}" class="chart" ${FONT} font-size="12">` +
    `<title id="${escapeXml(frame.id)}-title">${escapeXml(frame.title)}</title>` +
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>` +
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="600" fill="#1f2328">${escapeXml(frame.title)}</text>`
  );
}

interface LegendItem {
  name: string;
  color: string;
  dashed?: boolean;
}

/** A legend laid out in rows from `left` to `right`, starting at `top`; returns its height too. */
function legend(
  items: readonly LegendItem[],
  left: number,
  right: number,
  top: number,
): { svg: string; height: number } {
  if (items.length === 0) return { svg: '', height: 0 };
  let out = `<g class="legend">`;
  let x = left;
  let row = 0;
  for (const item of items) {
    const itemWidth = 40 + item.name.length * 7;
    if (x > left && x + itemWidth > right) {
      row++;
      x = left;
    }
    const y = top + row * 18 + 10;
    const swatch = item.dashed
      ? `<line x1="${fixed(x)}" y1="${y - 4}" x2="${fixed(x + 18)}" y2="${y - 4}" stroke="${item.color}" stroke-width="2.5" stroke-dasharray="5 3"/>`
      : `<rect x="${fixed(x)}" y="${y - 10}" width="18" height="10" rx="2" fill="${item.color}"/>`;
    out += `${swatch}<text x="${fixed(x + 24)}" y="${y}" fill="#1f2328">${escapeXml(item.name)}</text>`;
    x += itemWidth;
  }
  return { svg: `${out}</g>`, height: (row + 1) * 18 };
}

function axisLabels(
  frame: ChartFrame,
  plot: { left: number; right: number; top: number; bottom: number },
): string {
  let out = '';
  if (frame.xLabel) {
    out += `<text x="${(plot.left + plot.right) / 2}" y="${plot.bottom + 40}" text-anchor="middle" fill="#57606a">${escapeXml(frame.xLabel)}</text>`;
  }
  if (frame.yLabel) {
    const cy = (plot.top + plot.bottom) / 2;
    out += `<text x="16" y="${cy}" text-anchor="middle" fill="#57606a" transform="rotate(-90 16 ${cy})">${escapeXml(frame.yLabel)}</text>`;
  }
  return out;
}

/** Grouped vertical bars: one group per category, one bar per series. */
export function barChart(options: BarChartOptions): string {
  const width = options.width ?? 720;
  const height = options.height ?? 360;
  const format = options.formatValue ?? formatShort;
  const items =
    options.series.length > 1 || options.series[0]?.name
      ? options.series.map((series, s) => ({
          name: series.name,
          color: series.color ?? (PALETTE[s % PALETTE.length] as string),
        }))
      : [];
  const key = legend(items, 80, width - 16, 34);
  const plot = { left: 80, right: width - 16, top: 44 + key.height, bottom: height - 56 };
  const values = options.series.flatMap((s) =>
    s.values.filter((v): v is number => v !== undefined && Number.isFinite(v)),
  );
  const positive = values.filter((v) => v > 0);
  const spread = positive.length > 0 ? Math.max(...positive) / Math.min(...positive) : 1;
  const kind =
    options.yScale === 'auto' || options.yScale === undefined
      ? spread > 50
        ? 'log'
        : 'linear'
      : options.yScale;
  let yMin = 0;
  let yMax = options.yMax ?? niceCeil(Math.max(0, ...values) || 1);
  if (kind === 'log') {
    yMin = 10 ** Math.floor(Math.log10(Math.min(...(positive.length > 0 ? positive : [1]))));
    yMax = Math.max(
      yMin * 10,
      10 ** Math.ceil(Math.log10(options.yMax ?? Math.max(...(positive.length > 0 ? positive : [10])))),
    );
  }
  const y = makeScale(kind, yMin, yMax, plot.bottom, plot.top);
  const groups = Math.max(1, options.categories.length);
  const groupWidth = (plot.right - plot.left) / groups;
  const seriesCount = Math.max(1, options.series.length);
  const barWidth = Math.max(2, (groupWidth * 0.8) / seriesCount);
  const showLabels = options.labels ?? groups * seriesCount <= 24;

  let out = open(options, width, height);
  out += `<g class="grid">`;
  for (const tick of y.ticks) {
    out += `<line x1="${plot.left}" x2="${plot.right}" y1="${fixed(y(tick))}" y2="${fixed(y(tick))}" stroke="#d0d7de" stroke-width="1"/>`;
    out += `<text x="${plot.left - 8}" y="${fixed(y(tick) + 4)}" text-anchor="end" fill="#57606a">${escapeXml(format(tick))}</text>`;
  }
  out += `</g><g class="bars">`;
  options.series.forEach((series, s) => {
    const color = series.color ?? PALETTE[s % PALETTE.length];
    options.categories.forEach((category, c) => {
      const value = series.values[c];
      if (value === undefined || !Number.isFinite(value) || (kind === 'log' && value <= 0)) return;
      const x = plot.left + c * groupWidth + groupWidth * 0.1 + s * barWidth;
      const top = y(Math.min(value, yMax));
      const h = Math.max(0, plot.bottom - top);
      out += `<rect class="bar" x="${fixed(x)}" y="${fixed(top)}" width="${fixed(barWidth - 1)}" height="${fixed(h)}" fill="${color}" data-series="${escapeXml(series.name)}" data-category="${escapeXml(category)}" data-value="${value}"><title>${escapeXml(`${series.name}, ${category}: ${format(value)}`)}</title></rect>`;
      if (showLabels) {
        out += `<text x="${fixed(x + barWidth / 2)}" y="${fixed(top - 4)}" text-anchor="middle" font-size="10" fill="#1f2328">${escapeXml(format(value))}</text>`;
      }
    });
  });
  out += `</g><g class="axis">`;
  out += `<line x1="${plot.left}" x2="${plot.right}" y1="${plot.bottom}" y2="${plot.bottom}" stroke="#57606a"/>`;
  const every = Math.ceil(groups / 20);
  options.categories.forEach((category, c) => {
    if (c % every !== 0) return;
    out += `<text x="${fixed(plot.left + (c + 0.5) * groupWidth)}" y="${plot.bottom + 18}" text-anchor="middle" fill="#57606a">${escapeXml(category)}</text>`;
  });
  out += `</g>`;
  out += axisLabels(options, plot);
  out += key.svg;
  return `${out}</svg>`;
}

/** Lines through points, on linear or logarithmic axes. */
export function lineChart(options: LineChartOptions): string {
  const width = options.width ?? 720;
  const height = options.height ?? 360;
  const key = legend(
    options.series.map((series, s) => ({
      name: series.name,
      color: series.color ?? (PALETTE[s % PALETTE.length] as string),
      dashed: series.dashed,
    })),
    80,
    width - 24,
    34,
  );
  const plot = { left: 80, right: width - 24, top: 44 + key.height, bottom: height - 56 };
  const formatX = options.formatX ?? formatShort;
  const formatY = options.formatY ?? formatShort;
  const xKind = options.xScale ?? 'linear';
  const yKind = options.yScale ?? 'linear';
  const usable = (value: number, kind: 'linear' | 'log') =>
    Number.isFinite(value) && (kind === 'linear' || value > 0);
  const points = options.series
    .flatMap((s) => s.points)
    .filter((p) => usable(p.x, xKind) && usable(p.y, yKind));
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  let [xMin, xMax] = xs.length > 0 ? [Math.min(...xs), Math.max(...xs)] : [1, 10];
  if (xMin === xMax) [xMin, xMax] = xKind === 'log' ? [xMin / 2, xMax * 2] : [xMin - 1, xMax + 1];
  let yMin = options.yMin ?? (ys.length > 0 ? Math.min(...ys) : 0);
  let yMax = options.yMax ?? (ys.length > 0 ? Math.max(...ys) : 1);
  if (yKind === 'log') {
    yMin = 10 ** Math.floor(Math.log10(yMin));
    yMax = 10 ** Math.ceil(Math.log10(yMax));
    if (yMin === yMax) yMax = yMin * 10;
  } else {
    if (options.yMin === undefined) yMin = Math.min(0, yMin);
    if (options.yMax === undefined) yMax = niceCeil(yMax);
    if (yMin === yMax) yMax = yMin + 1;
  }
  if (xKind === 'log') {
    xMin = 10 ** Math.floor(Math.log10(xMin));
    xMax = 10 ** Math.ceil(Math.log10(xMax));
  }
  const x = makeScale(xKind, xMin, xMax, plot.left, plot.right);
  const y = makeScale(yKind, yMin, yMax, plot.bottom, plot.top);

  let out = open(options, width, height);
  out += `<g class="grid">`;
  for (const tick of y.ticks) {
    out += `<line x1="${plot.left}" x2="${plot.right}" y1="${fixed(y(tick))}" y2="${fixed(y(tick))}" stroke="#d0d7de"/>`;
    out += `<text x="${plot.left - 8}" y="${fixed(y(tick) + 4)}" text-anchor="end" fill="#57606a">${escapeXml(formatY(tick))}</text>`;
  }
  for (const tick of x.ticks) {
    out += `<line x1="${fixed(x(tick))}" x2="${fixed(x(tick))}" y1="${plot.top}" y2="${plot.bottom}" stroke="#eaeef2"/>`;
    out += `<text x="${fixed(x(tick))}" y="${plot.bottom + 18}" text-anchor="middle" fill="#57606a">${escapeXml(formatX(tick))}</text>`;
  }
  out += `</g>`;
  out += `<line x1="${plot.left}" x2="${plot.right}" y1="${plot.bottom}" y2="${plot.bottom}" stroke="#57606a"/>`;
  out += `<line x1="${plot.left}" x2="${plot.left}" y1="${plot.top}" y2="${plot.bottom}" stroke="#57606a"/>`;
  out += `<g class="lines">`;
  options.series.forEach((series, s) => {
    const color = series.color ?? (PALETTE[s % PALETTE.length] as string);
    const kept = series.points
      .filter((p) => usable(p.x, xKind) && usable(p.y, yKind))
      .slice()
      .sort((a, b) => a.x - b.x);
    if (kept.length === 0) return;
    const d = kept.map((p, i) => `${i === 0 ? 'M' : 'L'}${fixed(x(p.x))},${fixed(y(p.y))}`).join(' ');
    out += `<path class="line" d="${d}" fill="none" stroke="${color}" stroke-width="2.5"${series.dashed ? ' stroke-dasharray="6 4"' : ''} data-series="${escapeXml(series.name)}"><title>${escapeXml(series.name)}</title></path>`;
    if (options.dots ?? true) {
      for (const p of kept) {
        out += `<circle class="point" cx="${fixed(x(p.x))}" cy="${fixed(y(p.y))}" r="3.5" fill="${color}" data-series="${escapeXml(series.name)}" data-x="${p.x}" data-y="${p.y}"><title>${escapeXml(p.label ?? `${series.name}: ${formatX(p.x)} → ${formatY(p.y)}`)}</title></circle>`;
      }
    }
  });
  out += `</g>`;
  out += axisLabels(options, plot);
  out += key.svg;
  return `${out}</svg>`;
}
