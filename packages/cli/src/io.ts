/** Where a command writes; tests pass their own to capture the output. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Standard output is a terminal: size tables to `columns`. */
  stdoutIsTTY?: boolean;
  /** Standard output takes ANSI styles (a terminal, and NO_COLOR unset): highlight with bold. */
  color?: boolean;
  /** Standard error is a terminal: draw progress bars there (plain progress lines otherwise). */
  stderrIsTTY?: boolean;
  /** Terminal width in characters, when known. */
  columns?: number;
}

export const processIo: CliIo = {
  stdout: (text) => {
    process.stdout.write(text);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
  get stdoutIsTTY() {
    return process.stdout.isTTY === true;
  },
  get color() {
    return process.stdout.isTTY === true && !process.env.NO_COLOR;
  },
  get stderrIsTTY() {
    return process.stderr.isTTY === true;
  },
  get columns() {
    const columns = process.stdout.columns || process.stderr.columns;
    return columns > 0 ? columns : undefined;
  },
};

/** A mistake in how the command was called (unknown flag, bad value): exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The help of the command concerned, shown after the message. */
    readonly help?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * Exit codes: 0 success; 1 the command failed; 2 it was called wrongly; 3 it finished but left
 * something out (an unreadable file, a malformed line: named on standard error); 130 it was
 * interrupted (Ctrl-C), after leaving its output in a consistent state.
 */
export const ExitCode = { ok: 0, failure: 1, usage: 2, partial: 3, interrupted: 130 } as const;
