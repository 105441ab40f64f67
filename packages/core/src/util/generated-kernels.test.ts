import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'build-kernels.mjs');

describe('generated WebAssembly modules', () => {
  it('match their .wat sources (run scripts/build-kernels.mjs after editing one)', () => {
    // --check compiles every .wat and exits non-zero, naming the file, if a generated module differs.
    const output = execFileSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
    for (const name of ['dot-f32', 'dot-i8', 'ascii-tokens']) {
      expect(output).toContain(`generated/${name}.ts is up to date`);
    }
  });
});
