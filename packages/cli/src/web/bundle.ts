// Bundles a runtime-neutral entry for browsers and edge runtimes with Vite (Rollup), failing on any
// Node built-in: the proof that what it imports from `@zerda/core` needs no Node.
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import type { Plugin } from 'vite';

const builtins = new Set(builtinModules);

/** A Vite plugin that fails the build when anything imports a Node built-in, naming the importer. */
export function noNodeBuiltins(): Plugin {
  return {
    name: 'zerda-no-node-builtins',
    enforce: 'pre',
    resolveId(id, importer) {
      if (id.startsWith('node:') || builtins.has(id) || builtins.has(id.split('/')[0] ?? '')) {
        this.error(`${importer ?? 'the entry'} imports the Node built-in '${id}'`);
      }
      return null;
    },
  };
}

/** Bundles `entry` into one ES module file (`<name>.js` in `outDir`); returns its path. */
export async function bundleForBrowser(options: {
  entry: string;
  outDir: string;
  name: string;
  minify?: boolean;
  format?: 'es' | 'iife';
}): Promise<string> {
  const { build } = await import('vite');
  const format = options.format ?? 'es';
  await build({
    configFile: false,
    logLevel: 'silent',
    plugins: [noNodeBuiltins()],
    resolve: { conditions: ['@zerda/source', 'browser', 'import', 'default'] },
    build: {
      outDir: options.outDir,
      emptyOutDir: false,
      minify: options.minify ?? false,
      sourcemap: false,
      target: 'es2022',
      lib: { entry: options.entry, formats: [format], name: 'zerda', fileName: () => `${options.name}.js` },
    },
  });
  return join(options.outDir, `${options.name}.js`);
}
