#!/usr/bin/env node
import { ExitCode } from './io.js';
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    // An interrupted command may leave a read pending (standard input) that would keep the
    // process alive: its output is consistent already, so exit now.
    if (code === ExitCode.interrupted) process.exit(code);
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `zerda: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
