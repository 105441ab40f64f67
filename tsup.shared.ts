// One build configuration for every package: ESM + CommonJS with type declarations.
import { defineConfig, type Options } from 'tsup';

export function packageBuild(entry: string[] = ['src/index.ts'], overrides: Options = {}) {
  return defineConfig({
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    splitting: false,
    treeshake: true,
    ...overrides,
  });
}
