/**
 * The `zerda` command as a user runs it: a separate process (`node --import tsx
 * --conditions=@zerda/source packages/cli/src/bin.ts`, which is what `pnpm zerda` runs), for the
 * quick start and for interrupting an index run part-way.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIndex } from './commands/index/index.js';
import { runSearch, type SearchReport } from './commands/search/index.js';
import { dataRoot, readStore, repoRoot } from './test-helpers.js';

const cranfieldCorpus = join(dataRoot, 'cranfield', 'corpus.jsonl');
const bin = join(repoRoot, 'packages', 'cli', 'src', 'bin.ts');

function zerda(args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', '--conditions=@zerda/source', bin, ...args], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: '1' },
  });
}

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function collect(child: ChildProcessWithoutNullStreams): {
  output: { stdout: string; stderr: string };
  done: Promise<Finished>;
} {
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    output.stdout += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    output.stderr += text;
  });
  const done = new Promise<Finished>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, ...output }));
  });
  return { output, done };
}

async function run(args: string[]): Promise<Finished> {
  const child = zerda(args);
  child.stdin.end();
  return collect(child).done;
}

/** Resolves when `test` is true of the output so far (polled), or rejects after `ms`. */
async function waitFor(
  output: { stderr: string },
  test: (stderr: string) => boolean,
  ms = 60_000,
): Promise<void> {
  const started = Date.now();
  while (!test(output.stderr)) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting; stderr so far:\n${output.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let tmp: string;
let lines: string[];
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'zerda-cli-process-'));
  lines = (await readFile(cranfieldCorpus, 'utf8')).split('\n').filter((line) => line.trim() !== '');
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/**
 * The store holds whole batches of `size` input lines: exactly the documents of the first
 * n * size lines (that have words), each with all its chunks. Returns n.
 */
async function expectWholeBatches(store: string, size: number): Promise<number> {
  const { chunks, vectors, counts } = await readStore(store);
  const byId = new Set(chunks.map((chunk) => chunk.id));
  const documents = new Set(chunks.map((chunk) => chunk.docId));
  const ids = lines.map((line) => JSON.parse(line) as { _id: string; title: string; text: string });
  let batches = 0;
  for (let n = 1; n * size <= ids.length; n++) {
    const expected = ids
      .slice(0, n * size)
      .filter((d) => `${d.title} ${d.text}`.trim() !== '')
      .map((d) => d._id);
    if (expected.length === documents.size && expected.every((id) => documents.has(id))) batches = n;
  }
  expect(
    batches,
    `the store holds ${documents.size} documents, not whole batches of ${size}`,
  ).toBeGreaterThan(0);
  // Every split document has all its chunks.
  for (const chunk of chunks) {
    const total = chunk.metadata?.chunks;
    if (typeof total === 'number') {
      for (let part = 1; part <= total; part++) expect(byId.has(`${chunk.docId}#${part}`)).toBe(true);
    }
  }
  // Every chunk is in both sides: the keyword side's and the vector store's counts agree.
  expect(vectors).toBe(chunks.length);
  expect(counts).toEqual({ documents: documents.size, chunks: chunks.length });
  return batches;
}

describe('pnpm zerda, as a process', () => {
  it('indexes Cranfield, then searches it with --explain and with --json', async () => {
    const store = join(tmp, 'cranfield');
    const indexed = await run(['index', cranfieldCorpus, '--store', store]);
    expect(indexed.stderr).toMatch(/committed batch \d+: 1,398 documents/);
    expect(indexed.code).toBe(0);
    expect(indexed.stdout).toMatch(/^Indexed 1,398 documents \([\d,]+ chunks\) from 1 file/);

    const [explained, json] = await Promise.all([
      run(['search', 'boundary layer heat transfer', '--store', store, '--explain']),
      run(['search', 'boundary layer heat transfer', '--store', store, '--json']),
    ]);
    expect(explained.stderr).toBe('');
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(
      /^hybrid \(weighted\) search for "boundary layer heat transfer": 10 hits/,
    );
    expect(explained.stdout).toMatch(/keyword +#1 +score 1\.000 +\(BM25 [\d.]+\)/);
    expect(explained.stdout).toMatch(/fused +[\d.]+ = /);

    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as SearchReport;
    expect(report.hits).toHaveLength(10);
    expect(report.hits.some((hit) => /heat transfer/.test(hit.text))).toBe(true);
  }, 120_000);

  it('Ctrl-C part-way commits whole batches only; the store opens and answers', async () => {
    const store = join(tmp, 'interrupted');
    const child = zerda(['index', '-', '--store', store, '--batch-size', '100']);
    const { output, done } = collect(child);
    // 250 documents, and standard input left open: the run can only end by the interrupt.
    child.stdin.write(`${lines.slice(0, 250).join('\n')}\n`);
    await waitFor(output, (stderr) => /committed batch 1: /.test(stderr));
    child.kill('SIGINT');
    const finished = await done;
    expect(finished.stderr).toMatch(/interrupted: committing the whole batches read so far/);
    expect(finished.code).toBe(130);
    expect(finished.stdout).toMatch(/^Interrupted: (?:99|199|200|100) documents .* in whole batches/);
    const batches = await expectWholeBatches(store, 100);
    expect([1, 2]).toContain(batches);
    expect(await readdir(store)).toContain('zerda-collection.json');
    expect(await readdir(store)).not.toContain('zerda-collection.lock');
    const answer = await runSearch({ store, query: 'slipstream wing', k: 3 });
    expect(answer.hits.length).toBe(3);
  }, 120_000);

  it('a kill mid-run (no chance to clean up) leaves the last commit, which opens and answers', async () => {
    const store = join(tmp, 'killed');
    const child = zerda(['index', '-', '--store', store, '--batch-size', '50', '--commit-interval', '0']);
    const { output, done } = collect(child);
    child.stdin.write(`${lines.slice(0, 400).join('\n')}\n`);
    // Commits may cover several batches when writing falls behind reading: wait for any commit past the first.
    await waitFor(output, (stderr) => /committed batch ([2-9]|\d{2,}): /.test(stderr));
    child.kill('SIGKILL');
    const finished = await done;
    expect(finished.signal).toBe('SIGKILL');
    const batches = await expectWholeBatches(store, 50);
    expect(batches).toBeGreaterThanOrEqual(2);
    const answer = await runSearch({ store, query: 'boundary layer', k: 2, mode: 'vector' });
    expect(answer.hits.length).toBe(2);

    // The next run takes over the dead process's lock, replays the collection's log and adds.
    await writeFile(join(tmp, 'more.txt'), 'One more document about shock waves.');
    const summary = await runIndex({ paths: [join(tmp, 'more.txt')], store });
    expect(summary.totals.documents).toBe(
      batches * 50 - lines.slice(0, batches * 50).filter(isEmpty).length + 1,
    );
    expect((await readdir(store)).filter((name) => name.startsWith('log-'))).toHaveLength(1);
  }, 120_000);
});

function isEmpty(line: string): boolean {
  const document = JSON.parse(line) as { title: string; text: string };
  return `${document.title} ${document.text}`.trim() === '';
}
