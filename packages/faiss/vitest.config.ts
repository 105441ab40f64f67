import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@zerda/source'] },
  ssr: { resolve: { conditions: ['@zerda/source'] } },
  test: {
    name: 'faiss',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Real FAISS indexes, child processes and a conformance suite: some tests take seconds.
    testTimeout: 60_000,
  },
});
