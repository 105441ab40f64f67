import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@zerda/source'] },
  ssr: { resolve: { conditions: ['@zerda/source'] } },
  test: {
    name: 'faiss',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Real FAISS indexes, child processes and a conformance suite: some tests take seconds.
    testTimeout: 60_000,
    // FAISS's OpenMP threads spin-wait after each call by default, starving the other tests on a
    // busy machine; read by libgomp when faiss-node loads, so set before it does.
    env: { OMP_WAIT_POLICY: process.env.OMP_WAIT_POLICY ?? 'PASSIVE' },
  },
});
