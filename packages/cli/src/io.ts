/** Where a command writes; tests pass their own to capture the output. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export const processIo: CliIo = {
  stdout: (text) => {
    process.stdout.write(text);
  },
  stderr: (text) => {
    process.stderr.write(text);
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

/** Exit codes: 0 success, 1 the command failed, 2 it was called wrongly. */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const;
