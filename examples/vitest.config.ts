import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@zerda/source'] },
  ssr: { resolve: { conditions: ['@zerda/source'] } },
  test: {
    name: 'examples',
    include: ['swap/**/*.test.ts'],
    // A real Chroma server (the chroma package's own setup), for the Chroma run of the swap test.
    globalSetup: ['../packages/chroma/src/test-utils/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
