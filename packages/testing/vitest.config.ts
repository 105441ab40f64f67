import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['@zerda/source'] },
  ssr: { resolve: { conditions: ['@zerda/source'] } },
  test: { name: 'testing', testTimeout: 60_000, include: ['src/**/*.test.ts', 'test/**/*.test.ts'] },
});
