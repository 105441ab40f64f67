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
