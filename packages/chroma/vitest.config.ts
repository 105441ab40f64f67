import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@zerda/source'] },
  ssr: { resolve: { conditions: ['@zerda/source'] } },
  test: {
    name: 'chroma',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // One real Chroma server (`chroma run` from the chromadb package) for every test file.
    globalSetup: ['./src/test-utils/global-setup.ts'],
  },
});
