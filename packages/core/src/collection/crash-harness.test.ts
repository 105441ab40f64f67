import { describe, expect, it } from 'vitest';
import { runCrashHarness } from './test-utils/crash-harness.js';

describe('collection crash harness (small size; `pnpm crash-harness` runs the large one)', () => {
  it('loses no acknowledged write, leaves no id on one side only and gives back every text as written, across SIGKILLs at random points', {
    timeout: 180_000,
  }, async () => {
    // Far more chunks than a writer adds before its kill (after at most 30 acknowledged writes).
    const report = await runCrashHarness({ runs: 6, chunks: 50_000, batchSize: 50, maxAcks: 30, seed: 7 });
    expect(report.killed).toBe(6);
    expect(report.acknowledgedAdds).toBeGreaterThan(0);
    expect(report.lost).toBe(0);
    expect(report.oneSided).toBe(0);
    expect(report.damaged).toBe(0);
    expect(report.finalCount).toBeGreaterThan(0);
  });
});
