// One build configuration for every package: ESM + CommonJS with type declarations.
// `splitting`: a module that two entry points use (core's filter nodes, used by `.` and `./testing`)
// goes into one shared chunk per format, so it has one instance, as in the sources; for CommonJS
// tsup's splitting is experimental, and scripts/check-packed.mjs checks the result from the tarball.
// No source maps: the output is readable, unminified JavaScript, and the tarball ships no sources.
import { defineConfig, type Options } from 'tsup';

export function packageBuild(entry: Options['entry'] = ['src/index.ts'], overrides: Options = {}) {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: false,
    clean: true,
    target: 'node20',
    splitting: true,
    treeshake: true,
    ...overrides,
  });
}
