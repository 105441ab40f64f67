import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withChromium } from '../test-chromium.js';
import { bundleForBrowser } from './bundle.js';
import { runScenario, type ScenarioResult } from './demo-app.js';
import { type PageServer, pageOutcome, servePage } from './test-page-server.js';

/*
 * The same application (index the sample, keyword / vector / hybrid retrieval with filters, rerank,
 * assemble a context) bundled for the web and run in real headless Chromium: its results must equal
 * Node's hit for hit, with the WebAssembly SIMD kernel in use, no request leaving the page's own
 * server, and a collection persisted in IndexedDB answering again after a reload without re-indexing.
 */

const here = dirname(fileURLToPath(import.meta.url));
let work: string;
let server: PageServer | undefined;
let origin: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'zerda-runtimes-'));
  await bundleForBrowser({ entry: join(here, 'browser-entry.ts'), outDir: work, name: 'app' });
  await bundleForBrowser({ entry: join(here, 'edge-entry.ts'), outDir: work, name: 'edge', format: 'iife' });
  server = await servePage({ script: join(work, 'app.js'), title: 'zerda runtime test' });
  origin = server.origin;
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const pageResult = (evaluate: <T>(expression: string) => Promise<T>) => pageOutcome<ScenarioResult>(evaluate);

describe('the same application in Node and in Chromium', () => {
  it('gives the same hits, on the WebAssembly SIMD kernel, with no outside request, and persists across a reload', {
    timeout: 180_000,
  }, async () => {
    const node = await runScenario();
    expect(node.count).toBeGreaterThan(20);
    expect(node.queries.every((query) => query.hybrid.length > 0)).toBe(true);
    await withChromium(async (page) => {
      await page.open(`${origin}/`);
      const browser = await pageResult(page.evaluate);
      expect(browser.kernel).toBe('wasm');
      expect(browser).toEqual({ ...node, kernel: 'wasm' });
      expect(page.report().errors).toEqual([]);
      expect(page.report().requests.every((url) => url.startsWith(origin))).toBe(true);

      await page.open(`${origin}/?persist`);
      const first = await pageResult(page.evaluate);
      expect(first.indexed).toBe(true);
      await page.open(`${origin}/?persist`);
      const reloaded = await pageResult(page.evaluate);
      expect(reloaded.indexed).toBe(false);
      expect(reloaded.count).toBe(node.count);
      expect(reloaded.queries).toEqual(node.queries);
      expect(page.report().errors).toEqual([]);

      // A quota too small for what the page tries to store: a typed error, and the committed
      // state still opens and answers. (Another origin, whose quota is set before it stores anything.)
      const other = origin.replace('127.0.0.1', 'localhost');
      await page.open(`${other}/?idle`);
      await page.command('Storage.overrideQuotaForOrigin', { origin: other, quotaSize: 512 * 1024 });
      await page.open(`${other}/?persist`);
      expect((await pageResult(page.evaluate)).indexed).toBe(true);
      await page.open(`${other}/?idle`);
      const grown = await page.evaluate<{ before: number; refused?: { typed: boolean; message: string } }>(
        'globalThis.__zerdaGrow()',
      );
      expect(grown.before).toBe(node.count);
      expect(grown.refused?.typed, JSON.stringify(grown.refused)).toBe(true);
      expect(grown.refused?.message).toMatch(/quota exceeded/);
      await page.open(`${other}/?persist`);
      const after = await pageResult(page.evaluate);
      expect(after.indexed).toBe(false);
      expect(after.queries).toEqual(node.queries);
    });
  });
});

describe('the same application in an edge runtime (web-standard APIs only)', () => {
  it('gives the same hits as Node', { timeout: 120_000 }, async () => {
    const { EdgeVM } = await import('@edge-runtime/vm');
    const vm = new EdgeVM();
    expect(vm.evaluate('typeof process + typeof require')).toBe('undefinedundefined');
    vm.evaluate(await readFile(join(work, 'edge.js'), 'utf8'));
    const text = await vm.evaluate<Promise<string>>(
      'zerda.runScenario().then((result) => JSON.stringify(result))',
    );
    const edge = JSON.parse(text) as ScenarioResult;
    const node = await runScenario();
    expect(edge).toEqual({ ...node, kernel: edge.kernel });
    expect(edge.kernel).toBe('wasm');
  });
});
