import type { BenchSuite } from '../report.js';

/** Every suite `pnpm bench` runs, in order. */
export const suites: BenchSuite[] = [];
