import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@zerda/source'] },
  ssr: { resolve: { conditions: ['@zerda/source'] } },
  test: {
    name: 'postgres',
    include: ['src/**/*.test.ts'],
    // One PGlite served over the wire protocol for the tests of the real pg client.
    globalSetup: ['./src/test-utils/global-setup.ts'],
    // vitest projects do not inherit the root testTimeout; a PGlite takes seconds to start (more on a busy machine).
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
