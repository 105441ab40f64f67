import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withChromium } from '../test-chromium.js';
import { bundleForBrowser } from './bundle.js';

/*
 * The in-memory store's scans split over a web worker (`webScanThreads`), in real headless
 * Chromium: on a cross-origin isolated page the hits and scores equal the main thread's alone, the
 * worker takes its part of every scan, and the page's main thread never blocks (it may not; the
 * store waits through Atomics.waitAsync). On a page that is not isolated, asking for scan threads
 * is a typed error that says what the page needs.
 */

const here = dirname(fileURLToPath(import.meta.url));
let work: string;
let server: Server;
let origin: string;

const ISOLATION = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'zerda-scan-threads-'));
  await bundleForBrowser({ entry: join(here, 'scan-threads-entry.ts'), outDir: work, name: 'app' });
  const page =
    '<!doctype html><meta charset="utf-8"><title>zerda scan threads</title><link rel="icon" href="data:,"><script type="module" src="/app.js"></script>';
  server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const headers = path.startsWith('/isolated') ? ISOLATION : {};
    if (path.endsWith('/app.js')) {
      response.writeHead(200, { 'content-type': 'text/javascript', ...headers });
      response.end(await readFile(join(work, 'app.js')));
    } else if (path === '/isolated/' || path === '/plain/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
      response.end(page);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  if (work) await rm(work, { recursive: true, force: true });
});

async function outcome(evaluate: <T>(expression: string) => Promise<T>): Promise<Record<string, unknown>> {
  const result = await evaluate<{ ok: boolean; result?: Record<string, unknown>; error?: string }>(
    'globalThis.__zerda',
  );
  if (!result.ok) throw new Error(`the page failed: ${result.error}`);
  return result.result as Record<string, unknown>;
}

describe('scans split over web workers in Chromium', () => {
  it('give the main thread’s hits on an isolated page, and are refused with a reason elsewhere', {
    timeout: 180_000,
  }, async () => {
    await withChromium(async (page) => {
      await page.open(`${origin}/isolated/`);
      expect(await outcome(page.evaluate)).toEqual({
        isolated: true,
        kernel: 'wasm',
        sameAsOneThread: true,
        hitsPerQuery: Array.from({ length: 12 }, () => 10),
        threads: 2,
        // 24 full scans (12 queries, twice, at once), every one split.
        workerParts: 24,
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
