// The browser side of the relaxed-SIMD test: the int8 scans' outcome (see int8-scans.ts) in
// Chromium, left on `globalThis.__zerda` for the test to read.
import { int8Scans } from './int8-scans.js';

(globalThis as { __zerda?: unknown }).__zerda = int8Scans().then(
  (result) => ({ ok: true, result }),
  (error: unknown) => ({
    ok: false,
    error: error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error),
  }),
);
