import type { CliIo } from './io.js';

/**
 * A one-line progress bar on standard error, redrawn in place (`\r`, then erase to the end of
 * the line) at most every `intervalMs`. It draws only when standard error is a terminal; a
 * command prints plain progress lines otherwise (see `log`).
 */
export class ProgressBar {
  readonly enabled: boolean;
  private readonly width: number;
  private readonly intervalMs: number;
  private lastDraw = 0;
  private shown = false;
  private lastText = '';

  constructor(
    private readonly io: CliIo,
    options: { intervalMs?: number; enabled?: boolean } = {},
  ) {
    this.enabled = options.enabled ?? io.stderrIsTTY === true;
    this.width = Math.max(40, Math.min(io.columns ?? 80, 120));
    this.intervalMs = options.intervalMs ?? 100;
  }

  /**
   * Draws `label [bar] pct% details` (the bar only when `fraction` is known); skipped when the
   * last draw is more recent than the interval, unless `force`.
   */
  update(label: string, fraction: number | undefined, details: string, force = false): void {
    if (!this.enabled) return;
    const now = performance.now();
    if (!force && now - this.lastDraw < this.intervalMs) return;
    this.lastDraw = now;
    let text: string;
    if (fraction === undefined) {
      text = `${label}  ${details}`;
    } else {
      const share = Math.min(1, Math.max(0, fraction));
      const percent = `${Math.floor(share * 100)}%`.padStart(4);
      const room = this.width - label.length - percent.length - details.length - 8;
      const barWidth = Math.max(10, Math.min(30, room));
      text = `${label} ${bar(share, barWidth)} ${percent}  ${details}`;
    }
    if (text.length > this.width - 1) text = `${text.slice(0, this.width - 2)}…`;
    this.lastText = text;
    this.io.stderr(`\r\x1b[2K${text}`);
    this.shown = true;
  }

  /** Writes a line of text above the bar (and redraws the bar under it). */
  log(line: string): void {
    if (this.enabled && this.shown) {
      this.io.stderr(`\r\x1b[2K${line}\n${this.lastText}`);
    } else {
      this.io.stderr(`${line}\n`);
    }
  }

  /** Erases the bar. */
  clear(): void {
    if (this.enabled && this.shown) this.io.stderr('\r\x1b[2K');
    this.shown = false;
  }
}

const PARTIAL = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/** `▕██████▌     ▏`: a bar of `width` cells, in eighths of a cell. */
export function bar(fraction: number, width: number): string {
  const eighths = Math.round(Math.min(1, Math.max(0, fraction)) * width * 8);
  const full = Math.floor(eighths / 8);
  const partial = PARTIAL[eighths % 8] ?? '';
  const filled = '█'.repeat(full) + partial;
  return `▕${filled}${' '.repeat(Math.max(0, width - full - (partial ? 1 : 0)))}▏`;
}

/** `1:05`, `12:00`, `1:02:03` */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** `1,234` */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
