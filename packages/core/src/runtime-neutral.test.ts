import { mkdtemp, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * The main entry and every subpath meant for applications or backend authors import no Node
 * built-in, so they load in browsers, workers and edge runtimes. Checked by bundling each for the
 * browser with a plugin that fails on any Node built-in, naming the importer. `@zerda/core/node`
 * is the one place that may use them.
 */

const here = dirname(fileURLToPath(import.meta.url));
const builtins = new Set(builtinModules);

async function builtinImports(entry: string): Promise<string[]> {
  const { build } = await import('vite');
  const found: string[] = [];
  const outDir = await mkdtemp(join(tmpdir(), 'zerda-neutral-'));
  try {
    await build({
      configFile: false,
      logLevel: 'silent',
      plugins: [
        {
          name: 'find-node-builtins',
          enforce: 'pre',
          resolveId(id, importer) {
            if (id.startsWith('node:') || builtins.has(id) || builtins.has(id.split('/')[0] ?? '')) {
              found.push(`${importer?.replace(here, 'src')} -> ${id}`);
              return { id, external: true };
            }
            return null;
          },
        },
      ],
      resolve: { conditions: ['@zerda/source', 'browser', 'import', 'default'] },
      build: {
        outDir,
        write: false,
        minify: false,
        lib: { entry, formats: ['es'], fileName: () => 'out.js' },
        rollupOptions: { external: ['fast-check'] },
      },
    });
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
  return found;
}

describe('runtime-neutral entries', () => {
  for (const entry of ['index.ts', 'backend/index.ts', 'testing.ts']) {
    it(`${entry} pulls in no Node built-in`, { timeout: 120_000 }, async () => {
      expect(await builtinImports(join(here, entry))).toEqual([]);
    });
  }

  it('the Node subpath does use them (the check can fail)', { timeout: 120_000 }, async () => {
    expect((await builtinImports(join(here, 'node.ts'))).length).toBeGreaterThan(0);
  });
});
