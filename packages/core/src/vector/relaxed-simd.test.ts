import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bundleNodeScript } from '../test-utils/bundle-node-script.js';

const here = dirname(fileURLToPath(import.meta.url));

interface ScriptOutput {
  int8Kernel: string;
  raw: { scores: number[]; equalToJs: boolean; int8Kernel: string };
  stores: Record<string, { split: boolean }>;
}

describe('int8 scans and relaxed SIMD in Node', () => {
  it('scan the same integers as the JavaScript kernels, and turn away a relaxed dot product that fails the probe', {
    timeout: 180_000,
  }, async () => {
    const work = await mkdtemp(join(tmpdir(), 'zerda-relaxed-simd-'));
    try {
      const bundle = await bundleNodeScript(
        join(here, 'test-utils/int8-scans-script.ts'),
        work,
        'int8-scans.mjs',
      );
      const run = async (flags: string[]): Promise<ScriptOutput> => {
        const { stdout } = await promisify(execFile)(process.execPath, [...flags, bundle], {
          env: { ...process.env, NODE_OPTIONS: '' },
          timeout: 120_000,
          maxBuffer: 64 * 1024 * 1024,
        });
        return JSON.parse(stdout);
      };
      const native = await run([]);
      expect(native.raw.equalToJs).toBe(true);
      expect(native.raw.scores).toHaveLength(12_000);
      expect(native.raw.int8Kernel).toBe(native.int8Kernel);
      expect(Object.keys(native.stores)).toHaveLength(7);
      expect(native.stores['int8 cosine, two threads']!.split).toBe(true);
      if (native.int8Kernel === 'relaxed-simd') return;
      // Node 20's V8 (11.3) has relaxed SIMD behind a flag, and there its dot product with an
      // accumulator adds wrongly: the probe turns it away, and the scans stay SIMD128, unchanged.
      // (Chromium's is used and compared with this: relaxed-simd-browser.test.ts in the CLI.)
      expect(process.versions.v8).toMatch(/^11\.3\./);
      const flagged = await run(['--experimental-wasm-relaxed-simd']);
      expect(flagged.int8Kernel).toBe('simd');
      expect(flagged).toEqual(native);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});
