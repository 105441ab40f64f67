import { describe, expect, it } from 'vitest';
import { main } from './main.js';
import { captureIo } from './test-helpers.js';

describe('zerda', () => {
  it('lists its commands with --help', async () => {
    const io = captureIo();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.out).toMatch(/Usage: zerda <command>/);
    expect(io.out).toMatch(/ {2}eval {4}/);
    expect(io.out).toMatch(/ {2}demo {4}/);
    expect(io.out).toMatch(/ {2}fuse {4}fuse two TREC run files/);
    expect(io.out).toMatch(/Exit codes: 0 success; 1 the command failed[\s\S]*;\s+2 it was called wrongly/);
    expect(io.out).toMatch(/pnpm zerda fuse .* --method rrf --out fused\.run/);
  });

  it('shows the help on stderr with exit code 2 when no command is given', async () => {
    const io = captureIo();
    expect(await main([], io)).toBe(2);
    expect(io.err).toMatch(/Usage: zerda <command>/);
  });

  it('refuses an unknown command', async () => {
    const io = captureIo();
    expect(await main(['serach'], io)).toBe(2);
    expect(io.err).toMatch(/^zerda: unknown command 'serach'/);
  });
});
