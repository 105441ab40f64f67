import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommandArgs, readNumber } from './args.js';
import { UsageError } from './io.js';
import { main } from './main.js';
import { captureIo } from './test-helpers.js';

/*
 * Fuzzing the command line: any arguments end in an exit code (0 ok, 1 failed, 2 called wrongly,
 * 3 partial) with a message, never in an "unexpected error" (an untyped exception) or a hang.
 * Flags that write files (--out, --write-run, --report) and --store are never generated, so the
 * commands only read.
 */

let tmp: string;
let store: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'zerda-args-fuzz-'));
  const corpus = join(tmp, 'corpus.jsonl');
  await writeFile(
    corpus,
    [
      {
        id: 'a',
        text: 'Solar panels convert sunlight into electricity.',
        metadata: { year: 2021, lang: 'en' },
      },
      { id: 'b', text: 'Wind turbines and solar farms feed the grid.', metadata: { year: 2023, lang: 'en' } },
      { id: 'c', text: 'الألواح الشمسية تحول ضوء الشمس إلى كهرباء', metadata: { year: 2022, lang: 'ar' } },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n'),
  );
  store = join(tmp, 'store');
  const io = captureIo();
  expect(await main(['index', corpus, '--store', store], io), io.err).toBe(0);
});

afterAll(async () => {
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
});

const writesOrStore = /^-{1,2}(out|write-run|report|store|fusion-config|embeddings|query-embeddings|qrels)\b/;

/** Flags the commands know (and some they do not), values of every kind, and hostile strings. */
const token = fc
  .oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '--k',
        '-k',
        '--mode',
        '--fusion',
        '--filter',
        '--explain',
        '--json',
        '--help',
        '-h',
        '--k1',
        '--b',
        '--depth',
        '--analyzer',
        '--dimension',
        '--weights',
        '--rrf-k',
        '--branch-k',
        '--split',
        '--method',
        '--top',
        '--tag',
        '--unknown',
        '-x',
        '--',
        '-',
        '--k=',
        '--mode=hybrid',
        '--json=false',
      ),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'hybrid',
        'keyword',
        'vector',
        'dense',
        'rrf',
        'weighted',
        'minmax',
        '0',
        '-1',
        '1e309',
        'NaN',
        '3.5',
        '10001',
        '2,1',
        '{"year": 2021}',
        '{"year": {"$gte": 2022}}',
        '{"year": {"$regex": "x"}}',
        '{"year": }',
        '[1]',
        'null',
        '{"$not": {"$not": {"$not": {"lang": "ar"}}}}',
        'solar',
        'الشمس',
        '',
        ' ',
      ),
    },
    { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  )
  .filter((value) => !writesOrStore.test(value));

const argv = fc.array(token, { maxLength: 8 });

async function run(args: string[]) {
  const io = captureIo();
  const started = performance.now();
  const code = await main(args, io);
  const elapsed = performance.now() - started;
  expect([0, 1, 2, 3], `${JSON.stringify(args)}: exit ${code}\n${io.err}`).toContain(code);
  expect(io.err, JSON.stringify(args)).not.toMatch(/unexpected error/);
  if (code !== 0) expect(io.err.trim().length, JSON.stringify(args)).toBeGreaterThan(0);
  expect(elapsed, JSON.stringify(args)).toBeLessThan(15_000);
}

describe('fuzz: the command line', () => {
  it('search over a real store, with any flags, values and queries', async () => {
    await fc.assert(
      fc.asyncProperty(argv, async (args) => {
        await run(['search', ...args, '--store', store]);
      }),
      { numRuns: 150 },
    );
  }, 180_000);

  it('search with one query and well-formed flags carrying any values', async () => {
    const flagAndValue = fc.oneof(
      fc.tuple(fc.constantFrom('--k', '-k', '--mode', '--fusion', '--filter'), token),
      fc.tuple(fc.constantFrom('--explain', '--json')),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom('solar', 'الشمس', 'grid power'),
          fc.string({ unit: 'binary', maxLength: 20 }),
        ),
        fc.array(flagAndValue, { maxLength: 4 }),
        async (query, flags) => {
          await run(['search', query, ...flags.flat(), '--store', store]);
        },
      ),
      { numRuns: 150 },
    );
  }, 180_000);

  it('a command name that is a property of every object is an unknown command', async () => {
    for (const name of ['toString', '__proto__', 'constructor', 'hasOwnProperty']) {
      const io = captureIo();
      expect(await main([name], io)).toBe(2);
      expect(io.err).toMatch(/unknown command/);
    }
  });

  it('any command name, and the read-only commands with any arguments', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constantFrom('eval', 'fuse', 'search'), fc.string({ maxLength: 8 })),
        argv,
        async (command, args) => {
          // The commands that index or run benchmarks only get their help here (they would write or run long).
          if (['index', 'bench', 'demo', 'tune'].includes(command)) {
            await run([command, '--help']);
            return;
          }
          await run([command, ...args]);
        },
      ),
      { numRuns: 150 },
    );
  }, 180_000);

  it('the argument parser throws only UsageErrors, and readNumber reads only numbers in range', () => {
    fc.assert(
      fc.property(argv, fc.string({ maxLength: 10 }), (args, value) => {
        try {
          parseCommandArgs(
            args,
            { k: { type: 'string', short: 'k' }, json: { type: 'boolean' }, mode: { type: 'string' } },
            'help',
          );
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
        }
        try {
          const number = readNumber(value, 'k', 'help', { min: 1, max: 100, integer: true });
          expect(number === undefined || (Number.isInteger(number) && number >= 1 && number <= 100)).toBe(
            true,
          );
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
