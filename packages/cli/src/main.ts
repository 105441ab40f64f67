import { ZerdaError } from '@zerda/core';
import { demoCommand } from './commands/demo.js';
import { evalCommand } from './commands/eval.js';
import { type CliIo, ExitCode, processIo, UsageError } from './io.js';

interface Command {
  summary: string;
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Every `zerda` sub-command. */
export const commands: Record<string, Command> = {
  demo: { summary: 'index a small bundled corpus and run sample queries', run: demoCommand },
  eval: {
    summary: 'evaluate BM25 on a BEIR-layout test collection (nDCG@10, Recall@100, MRR@10)',
    run: evalCommand,
  },
};

export const mainHelp = `Usage: zerda <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, command]) => `  ${name.padEnd(8)}${command.summary}`)
  .join('\n')}

Run 'zerda <command> --help' for a command's options.

Examples:
  pnpm zerda demo
  pnpm zerda eval ../shared/data/cisi --k1 1.2 --b 0.75
`;

/**
 * Runs the `zerda` command line and returns the exit code: 0 on success, 1 when the command
 * failed (a missing folder, a malformed file), 2 when it was called wrongly.
 */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr(mainHelp);
    return ExitCode.usage;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout(mainHelp);
    return ExitCode.ok;
  }
  const command = commands[name];
  if (!command) {
    io.stderr(`zerda: unknown command '${name}'\n\n${mainHelp}`);
    return ExitCode.usage;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`zerda ${name}: ${error.message}\n${error.help ? `\n${error.help}` : ''}`);
      return ExitCode.usage;
    }
    if (ZerdaError.isInstance(error)) {
      io.stderr(`zerda ${name}: ${error.message}\n`);
      return ExitCode.failure;
    }
    io.stderr(
      `zerda ${name}: unexpected error\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return ExitCode.failure;
  }
}
