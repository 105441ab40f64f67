import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { withChromium } from '../test-chromium.js';
import { bundleForBrowser } from './bundle.js';
import { type Int8ScansOutcome, int8Scans } from './int8-scans.js';
import { pageOutcome, servePage } from './test-page-server.js';

/*
 * The in-memory store's int8 scans in real headless Chromium, which has WebAssembly's relaxed
 * SIMD: they use its 8-bit dot product (an IVF index's list scans too), and every store gives the hits and scores this Node
 * process gives with the SIMD128 kernel (Node 20 has no relaxed SIMD unless asked; where it has,
 * both sides use it and the test still compares two engines).
 */

const here = dirname(fileURLToPath(import.meta.url));

describe('int8 scans with relaxed SIMD in Chromium', () => {
  it('use its dot product, and rank and score as Node does', { timeout: 180_000 }, async () => {
    const work = await mkdtemp(join(tmpdir(), 'zerda-relaxed-simd-'));
    const server = await (async () => {
      await bundleForBrowser({ entry: join(here, 'relaxed-simd-entry.ts'), outDir: work, name: 'app' });
      return servePage({ script: join(work, 'app.js'), title: 'zerda relaxed simd' });
    })();
    try {
      const here = await int8Scans();
      await withChromium(async (page) => {
        await page.open(`${server.origin}/`);
        const browser = await pageOutcome<Int8ScansOutcome>(page.evaluate);
        expect(page.report().errors).toEqual([]);
        expect(browser.int8Kernel).toBe('relaxed-simd');
        expect(Object.keys(browser.stores)).toHaveLength(7);
        for (const [name, rounds] of Object.entries(browser.stores)) {
          expect(
            rounds.flat().map((hits) => hits.length),
            name,
          ).toEqual(Array(rounds.length * 8).fill(10));
          expect(rounds, name).toEqual(here.stores[name]);
        }
      });
    } finally {
      await server.close();
      await rm(work, { recursive: true, force: true });
    }
  });
});
