import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from './io.js';

/** The repository root: three levels up from packages/cli/src. */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The shared evaluation collections (`../shared/data` from the repository root). */
export const dataRoot = join(repoRoot, '../shared/data');

/** A CliIo that records what a command writes. */
export function captureIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}
