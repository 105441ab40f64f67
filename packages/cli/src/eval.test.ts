import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTrecRun } from '@zerda/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEval, scoreRun } from './commands/eval.js';
import { main } from './main.js';
import { captureIo, dataRoot } from './test-helpers.js';

const cisi = join(dataRoot, 'cisi');
const cranfield = join(dataRoot, 'cranfield');

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'zerda-cli-eval-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('runEval', () => {
  it('evaluates CISI and reports metrics in [0, 1] with timings and settings', async () => {
    const report = await runEval({ folder: cisi });
    expect(report.collection).toBe('cisi');
    expect(report.documents).toBe(1460);
    expect(report.queries).toBe(112);
    expect(report.judgedQueries).toBe(76);
    for (const metric of ['ndcg@10', 'recall@100', 'mrr@10'] as const) {
      expect(report[metric]).toBeGreaterThan(0);
      expect(report[metric]).toBeLessThanOrEqual(1);
    }
    expect(report.indexTimeMs).toBeGreaterThan(0);
    expect(report.queryLatencyMs?.p50).toBeGreaterThanOrEqual(0);
    expect(report.queryLatencyMs?.p99).toBeGreaterThanOrEqual(report.queryLatencyMs?.p50 as number);
    expect(report.mode).toBe('keyword');
    // What the library serves, unless told otherwise (the library preset).
    expect(report.settings).toEqual({
      depth: 100,
      keyword: { preset: 'library', k1: 1.2, b: 0.75, analyzer: 'default' },
    });
  });

  it('writes a TREC run file that scores the same', async () => {
    const runPath = join(tmp, 'cisi.run');
    const report = await runEval({ folder: cisi, writeRunPath: runPath, k1: 1.2, b: 0.75 });
    expect(report.runFile).toBe(runPath);
    const run = parseTrecRun(await readFile(runPath, 'utf8'));
    expect(run.size).toBe(76);
    for (const entries of run.values()) expect(entries.length).toBeLessThanOrEqual(100);
    const scored = await scoreRun({ folder: cisi, runPath });
    expect(scored.mode).toBe('run');
    for (const metric of ['ndcg@10', 'recall@100', 'mrr@10'] as const)
      expect(scored[metric]).toBe(report[metric]);
  });
});

describe('zerda eval', () => {
  it('prints the JSON report with --json', async () => {
    const io = captureIo();
    const code = await main(['eval', cisi, '--json', '--k1', '1.2', '--b', '0.75'], io);
    expect(io.err).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(io.out) as Record<string, unknown>;
    for (const field of [
      'documents',
      'judgedQueries',
      'ndcg@10',
      'recall@100',
      'mrr@10',
      'indexTimeMs',
      'queryLatencyMs',
      'settings',
    ]) {
      expect(report).toHaveProperty(field);
    }
    expect(report.queryLatencyMs).toHaveProperty('p50');
    expect(report.queryLatencyMs).toHaveProperty('p99');
    expect(report.mode).toBe('keyword');
    expect(report.settings).toEqual({
      depth: 100,
      keyword: { preset: 'library', k1: 1.2, b: 0.75, analyzer: 'default' },
    });
  });

  it('prints a readable table by default', async () => {
    const io = captureIo();
    expect(await main(['eval', cranfield], io)).toBe(0);
    expect(io.out).toMatch(/nDCG@10\s+0\.\d{4}/);
    expect(io.out).toMatch(/Recall@100\s+0\.\d{4}/);
    expect(io.out).toMatch(/225 judged of 225/);
  });

  it('shows help with an example', async () => {
    const io = captureIo();
    expect(await main(['eval', '--help'], io)).toBe(0);
    expect(io.out).toMatch(/Usage: zerda eval <folder>/);
    expect(io.out).toMatch(/Examples:\n {2}pnpm zerda eval/);
  });

  it('fails with exit code 1 and a message naming a missing folder', async () => {
    const io = captureIo();
    expect(await main(['eval', join(tmp, 'no-such-folder')], io)).toBe(1);
    expect(io.err).toMatch(/^zerda eval: .*no-such-folder: folder not found/);
  });

  it('fails with exit code 2 on a bad flag or value', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['eval', cisi, '--k2', '1'], /Unknown option '--k2'/],
      [['eval', cisi, '--b', '1.5'], /--b must be a number >= 0 and <= 1, got '1.5'/],
      [['eval', cisi, '--k1', 'abc'], /--k1 must be a number >= 0, got 'abc'/],
      [['eval', cisi, '--k1'], /--k1/],
      [['eval'], /missing the collection folder/],
      [['eval', cisi, cranfield], /expected one folder, got 2/],
      [['eval', cisi, '--analyzer', 'klingon'], /unknown analyzer 'klingon'/],
    ];
    for (const [argv, message] of cases) {
      const io = captureIo();
      expect(await main(argv, io)).toBe(2);
      expect(io.err).toMatch(message);
      expect(io.err).toMatch(/Usage: zerda eval/);
    }
  });
});

// Reference scores of a Lucene-built BM25 (datasets/README.md): nDCG@10 / Recall@100.
const references = [
  { collection: 'cisi', k1: 0.9, b: 0.4, ndcg: 0.3611, recall: 0.4252 },
  { collection: 'cisi', k1: 1.2, b: 0.75, ndcg: 0.3722, recall: 0.4349 },
  { collection: 'cranfield', k1: 0.9, b: 0.4, ndcg: 0.3514, recall: 0.7233 },
  { collection: 'cranfield', k1: 1.2, b: 0.75, ndcg: 0.3663, recall: 0.7356 },
];

describe('reference scores (Lucene BM25, README of the collections)', () => {
  it.each(references)(
    '$collection at k1=$k1 b=$b reaches nDCG@10 $ndcg and Recall@100 $recall (within 0.005)',
    async (ref) => {
      // Lucene's analysis (the pyserini preset's), with the reference's k1 and b.
      const report = await runEval({
        folder: join(dataRoot, ref.collection),
        preset: 'pyserini',
        k1: ref.k1,
        b: ref.b,
      });
      expect(report['ndcg@10']).toBeGreaterThanOrEqual(ref.ndcg - 0.005);
      expect(report['recall@100']).toBeGreaterThanOrEqual(ref.recall - 0.005);
    },
  );
});
