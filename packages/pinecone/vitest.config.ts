import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@zerda/source'] },
  ssr: { resolve: { conditions: ['@zerda/source'] } },
  test: {
    name: 'pinecone',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Real HTTP through the real client: generous on a loaded 2-core CI machine.
    testTimeout: 60_000,
  },
});
