import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withChromium } from '../test-chromium.js';
import { bundleForBrowser } from './bundle.js';
import { type PageServer, pageOutcome, servePage } from './test-page-server.js';

/*
 * The in-memory store's scans split over a web worker (`webScanThreads`), in real headless
 * Chromium: on a cross-origin isolated page the hits and scores equal the main thread's alone, the
 * worker takes its part of every scan, and the page's main thread never blocks (it may not; the
 * store waits through Atomics.waitAsync). On a page that is not isolated, asking for scan threads
 * is a typed error that says what the page needs.
 */

const here = dirname(fileURLToPath(import.meta.url));
let work: string;
let server: PageServer | undefined;
let origin: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'zerda-scan-threads-'));
  await bundleForBrowser({ entry: join(here, 'scan-threads-entry.ts'), outDir: work, name: 'app' });
  server = await servePage({
    script: join(work, 'app.js'),
    title: 'zerda scan threads',
    pages: ['/isolated/', '/plain/'],
    // The isolated page only: its script is same-origin, which require-corp allows as it is.
    headers: (path): Record<string, string> =>
      path === '/isolated/'
        ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' }
        : {},
  });
  origin = server.origin;
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const outcome = (evaluate: <T>(expression: string) => Promise<T>) =>
  pageOutcome<Record<string, unknown>>(evaluate);

describe('scans split over web workers in Chromium', () => {
  it('give the main thread’s hits on an isolated page, and are refused with a reason elsewhere', {
    timeout: 180_000,
  }, async () => {
    await withChromium(async (page) => {
      await page.open(`${origin}/isolated/`);
      expect(await outcome(page.evaluate)).toEqual({
        isolated: true,
        kernel: 'wasm',
        // The worker scans its parts with the relaxed-SIMD kernel too.
        int8Kernel: 'relaxed-simd',
        sameAsOneThread: true,
        hitsPerQuery: Array.from({ length: 12 }, () => 10),
        threads: 2,
        // 24 full scans (12 queries, twice, at once), every one split.
        splitParts: 24,
      });
      expect(page.report().errors).toEqual([]);

      await page.open(`${origin}/plain/`);
      const refused = await outcome(page.evaluate);
      expect(refused.isolated).toBe(false);
      expect(refused.refused).toEqual({
        typed: true,
        message: expect.stringMatching(/cross-origin isolated/),
      });
    });
  });
});
