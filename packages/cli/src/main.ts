import { ZerdaError } from '@zerda/core';
import { benchCommand } from './commands/bench.js';
import { demoCommand } from './commands/demo/index.js';
import { evalCommand } from './commands/eval.js';
import { fuseCommand } from './commands/fuse.js';
import { indexCommand } from './commands/index/index.js';
import { searchCommand } from './commands/search/index.js';
import { tuneCommand } from './commands/tune/index.js';
import { type CliIo, ExitCode, processIo, UsageError } from './io.js';

interface Command {
  summary: string;
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Every `zerda` sub-command. */
export const commands: Record<string, Command> = {
  index: {
    summary: 'read .txt, .md and .jsonl files into a store: chunks, vectors and a BM25 index',
    run: indexCommand,
  },
  search: {
    summary: 'search a store: hybrid, keyword or vector, with filters and explanations',
    run: searchCommand,
  },
  demo: {
    summary: 'index a bundled corpus; compare keyword, vector and hybrid results',
    run: demoCommand,
  },
  eval: {
    summary: 'evaluate keyword, vector or hybrid retrieval (or score a run) on a BEIR folder',
    run: evalCommand,
  },
  tune: {
    summary: 'choose fusion settings for a BEIR folder by cross-validation on its judgments',
    run: tuneCommand,
  },
  fuse: {
    summary: 'fuse two TREC run files (RRF or min-max) into a TREC run file',
    run: fuseCommand,
  },
  bench: {
    summary: 'run the benchmark suite and draw latency and throughput charts (SVG)',
    run: benchCommand,
  },
};

export const mainHelp = `Usage: zerda <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, command]) => `  ${name.padEnd(8)}${command.summary}`)
  .join('\n')}

Run 'zerda <command> --help' for a command's options.

Exit codes: 0 success; 1 the command failed (a missing folder or file, a malformed line);
2 it was called wrongly (unknown command or flag, bad value); 3 (index) done, but some files
or lines could not be read, each named; 130 interrupted by Ctrl-C (index keeps whole batches).

Examples:
  pnpm zerda index datasets/cranfield/corpus.jsonl --store /tmp/cranfield
  pnpm zerda search "boundary layer heat transfer" --store /tmp/cranfield --explain
  pnpm zerda demo
  pnpm zerda eval datasets/cisi --k1 1.2 --b 0.75
  pnpm zerda eval datasets/cisi --mode hybrid --fusion rrf --json
  pnpm zerda eval datasets/cranfield --report cranfield.html
  pnpm zerda tune datasets/cisi --out cisi-fusion.json
  pnpm zerda fuse bm25.run vector.run --method rrf --out fused.run
  pnpm zerda bench --from bench/results/latest.json
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
  // Own keys only: `zerda toString` or `zerda __proto__` is an unknown command, not Object's method.
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
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
