import { defineConfig } from 'vitest/config';

// One run over every package; tests import sources directly through the
// `@zerda/source` export condition, so no build is needed before testing.
export default defineConfig({
  resolve: { conditions: ['@zerda/source'] },
  ssr: { resolve: { conditions: ['@zerda/source'] } },
  test: {
    projects: ['packages/*', 'examples'],
    testTimeout: 60_000,
  },
});
