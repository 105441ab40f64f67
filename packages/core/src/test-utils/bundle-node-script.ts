import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Bundles a test script (and the core sources it imports) into one file that plain Node runs,
 * with no test runner around it: for tests that need a process of their own (killed, given V8
 * flags, or left with nothing else on its event loop). Returns the bundle's path.
 */
export async function bundleNodeScript(
  entry: string,
  outDir: string,
  fileName: string,
  format: 'es' | 'cjs' = 'es',
): Promise<string> {
  const { build } = await import('vite');
  await build({
    configFile: false,
    logLevel: 'silent',
    root: packageRoot,
    resolve: { conditions: ['@zerda/source'] },
    ssr: {
      noExternal: true,
      resolve: { conditions: ['@zerda/source'], externalConditions: ['@zerda/source'] },
    },
    build: {
      ssr: entry,
      outDir,
      emptyOutDir: false,
      minify: false,
      sourcemap: false,
      rollupOptions: { output: { entryFileNames: fileName, format } },
    },
  });
  return join(outDir, fileName);
}
