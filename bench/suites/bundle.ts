import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { BenchRow, BenchSuite } from '../report.js';

/*
 * What an application ships of @zerda/core: three small applications bundled for the browser with
 * Vite (Rollup, tree shaking, minified), measured minified and gzipped. `everything` keeps every
 * export, so the gap to it is what `sideEffects: false` and tree shaking let a bundler drop. Built
 * from the sources (the `@zerda/source` condition), as the published ESM build is the same modules.
 */

const here = dirname(fileURLToPath(import.meta.url));
const apps = {
  'keyword retriever only': 'keyword-only.ts',
  'hybrid + in-memory store': 'hybrid-memory.ts',
  'every export (no tree shaking possible)': 'everything.ts',
} as const;

async function bundle(entry: string): Promise<{ minified: number; gzipped: number }> {
  const { build } = await import('vite');
  const outDir = await mkdtemp(join(tmpdir(), 'zerda-bundle-'));
  const builtins = new Set(builtinModules);
  try {
    await build({
      configFile: false,
      logLevel: 'silent',
      plugins: [
        {
          name: 'no-node-builtins',
          resolveId(id, importer) {
            if (id.startsWith('node:') || builtins.has(id))
              this.error(`${importer} imports the Node built-in ${id}`);
            return null;
          },
        },
      ],
      resolve: { conditions: ['@zerda/source', 'browser', 'import', 'default'] },
      build: {
        outDir,
        minify: true,
        sourcemap: false,
        target: 'es2022',
        lib: { entry, formats: ['es'], fileName: () => 'app.js' },
      },
    });
    const code = await readFile(join(outDir, 'app.js'));
    return { minified: code.byteLength, gzipped: gzipSync(code, { level: 9 }).byteLength };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

export const bundleSuite: BenchSuite = {
  name: 'bundle',
  defaultSizes: [0],
  async run(options) {
    const rows: BenchRow[] = [];
    for (const [system, file] of Object.entries(apps)) {
      const { minified, gzipped } = await bundle(join(here, '..', 'bundle-apps', file));
      options.log(
        `  ${system}: ${(minified / 1024).toFixed(1)} KiB minified, ${(gzipped / 1024).toFixed(1)} KiB gzipped`,
      );
      rows.push({
        suite: 'bundle',
        system,
        size: 0,
        memoryBytes: gzipped,
        quality: { minifiedBytes: minified, gzippedBytes: gzipped },
        notes:
          'browser bundle of @zerda/core for this application (Vite, minified); memoryBytes holds the gzipped size',
      });
    }
    return rows;
  },
};
