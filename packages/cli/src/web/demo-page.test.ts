import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withChromium } from '../test-chromium.js';
import { serveDemo } from './serve-demo.js';

/*
 * `zerda demo --web` in real headless Chromium: the page indexes the sample itself, answers an
 * English and an Arabic question in three columns (keyword, vector, hybrid) with explanations,
 * shows Arabic right to left, logs no error and asks nothing of any server but its own.
 */

const wait = (expression: string) =>
  `new Promise((resolve, reject) => { const started = Date.now(); const poll = () => { if (${expression}) resolve(true); else if (Date.now() - started > 20000) reject(new Error('waited too long for: ${expression.replaceAll("'", '')}')); else setTimeout(poll, 50); }; poll(); })`;

describe('zerda demo --web', () => {
  it('renders results side by side, Arabic right to left, with no console error', {
    timeout: 180_000,
  }, async () => {
    const { url, server } = await serveDemo(0);
    try {
      await withChromium(async (page) => {
        await page.open(url);
        await page.evaluate(wait("document.body.dataset.ready === 'true'"));
        const buttons = await page.evaluate<string[]>(
          "[...document.querySelectorAll('.examples button')].map((b) => b.textContent)",
        );
        expect(buttons.length).toBeGreaterThanOrEqual(4);

        // An Arabic question through the example button.
        await page.evaluate(
          "[...document.querySelectorAll('.examples button')].find((b) => /[\\u0600-\\u06FF]/.test(b.textContent)).click()",
        );
        await page.evaluate(wait("document.body.dataset.searched === '1'"));
        const columns = await page.evaluate<Record<string, number>>(
          "Object.fromEntries(['keyword', 'vector', 'hybrid'].map((m) => [m, document.querySelectorAll('#' + m + ' .hit').length]))",
        );
        expect(columns.keyword).toBeGreaterThan(0);
        expect(columns.vector).toBeGreaterThan(0);
        expect(columns.hybrid).toBeGreaterThan(0);
        const directions = await page.evaluate<Array<{ arabic: boolean; direction: string }>>(
          "[...document.querySelectorAll('#hybrid .hit .text')].map((p) => ({ arabic: /^[^A-Za-z]*[\\u0600-\\u06FF]/.test(p.textContent), direction: getComputedStyle(p).direction }))",
        );
        expect(directions.some((d) => d.arabic)).toBe(true);
        for (const { arabic, direction } of directions) expect(direction).toBe(arabic ? 'rtl' : 'ltr');
        const explained = await page.evaluate<string>(
          "document.querySelector('#hybrid .hit .why').textContent",
        );
        expect(explained).toMatch(/keyword #\d|vector #\d/);

        // An English question typed with a filter.
        await page.evaluate(
          "document.querySelector('#query').value = 'vector search for retrieval'; document.querySelector('#filter').value = '{\"lang\": \"en\"}'; document.querySelector('form').requestSubmit()",
        );
        await page.evaluate(wait("document.body.dataset.searched === '2'"));
        const languages = await page.evaluate<string[]>(
          "[...document.querySelectorAll('.hit .meta')].map((m) => m.textContent)",
        );
        expect(languages.length).toBeGreaterThan(0);
        expect(languages.every((meta) => meta.includes('lang: en'))).toBe(true);

        const png = await page.screenshot();
        expect(png.subarray(1, 4).toString()).toBe('PNG');
        const folder = join(tmpdir(), 'zerda-screenshots');
        await mkdir(folder, { recursive: true });
        await writeFile(join(folder, 'demo-web.png'), png);
        expect(page.report().errors).toEqual([]);
        expect(page.report().requests.every((request) => request.startsWith(url))).toBe(true);
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
