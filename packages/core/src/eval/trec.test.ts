import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { DatasetError } from './dataset-error.js';
import { evaluateRun } from './metrics.js';
import { formatTrecRun, parseQrels, parseTrecRun } from './trec.js';
import { readQrels, readTrecRun, writeTrecRun } from './trec-files.js';
import type { Run } from './types.js';

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'zerda-trec-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const run: Run = new Map([
  [
    'q1',
    [
      { docId: 'b', score: 1.5 },
      { docId: 'a', score: 2.25 },
      { docId: 'c', score: 1.5 },
    ],
  ],
  ['q2', [{ docId: 'z', score: 0.1 + 0.2 }]],
]);

describe('TREC run files', () => {
  it('formats queries in trec_eval order with ranks from 1 and full-precision scores', () => {
    expect(formatTrecRun(run, { tag: 'bm25' })).toBe(
      'q1 Q0 a 1 2.25 bm25\nq1 Q0 c 2 1.5 bm25\nq1 Q0 b 3 1.5 bm25\nq2 Q0 z 1 0.30000000000000004 bm25\n',
    );
    expect(formatTrecRun(run, { depth: 1 }).split('\n')[0]).toBe('q1 Q0 a 1 2.25 zerda');
  });

  it('round-trips through a file', async () => {
    const path = join(folder, 'run.txt');
    await writeTrecRun(path, run, { tag: 'x' });
    const back = await readTrecRun(path);
    expect(back.get('q2')).toEqual([{ docId: 'z', score: 0.30000000000000004 }]);
    expect(new Set(back.get('q1')?.map((e) => e.docId))).toEqual(new Set(['a', 'b', 'c']));
    const qrels = new Map([['q1', new Map([['c', 1]])]]);
    expect(evaluateRun(back, qrels).metrics['mrr@10']).toBe(0.5);
  });

  it('names the line of a malformed run line', () => {
    const bad = (text: string) => {
      try {
        parseTrecRun(text, 'run.txt');
      } catch (error) {
        expect(DatasetError.isInstance(error)).toBe(true);
        return (error as DatasetError).message;
      }
      throw new Error('expected an error');
    };
    expect(bad('q1 Q0 a 1 2 t\nq1 Q0 b 2 t\n')).toBe(
      "run.txt:2: expected 6 fields 'qid Q0 docid rank score tag', found 5",
    );
    expect(bad('q1 Q0 a 1 high t')).toMatch(/^run\.txt:1: score 'high'/);
    expect(bad('q1 Q0 a one 1 t')).toMatch(/^run\.txt:1: rank 'one'/);
    expect(bad('q1 Q0 a 1 2 t\n\nq1 Q0 a 2 1 t')).toMatch(/^run\.txt:3: document 'a' is listed twice/);
  });

  it('refuses ids or tags that a run file cannot hold', () => {
    expect(() => formatTrecRun(new Map([['q 1', [{ docId: 'a', score: 1 }]]]))).toThrow(InvalidArgumentError);
    expect(() => formatTrecRun(run, { tag: 'two words' })).toThrow(InvalidArgumentError);
    expect(() => formatTrecRun(new Map([['q', [{ docId: 'a', score: Number.NaN }]]]))).toThrow(/not finite/);
  });

  it('reports a missing file as a DatasetError', async () => {
    await expect(readTrecRun(join(folder, 'nope.txt'))).rejects.toThrow(/nope\.txt: file not found/);
  });
});

describe('qrels', () => {
  it('reads BEIR TSV with a header and TREC four-column lines', async () => {
    expect(parseQrels('query-id\tcorpus-id\tscore\n1\t28\t1\n1\t35\t2\n2\t7\t0\n')).toEqual(
      new Map([
        [
          '1',
          new Map([
            ['28', 1],
            ['35', 2],
          ]),
        ],
        ['2', new Map([['7', 0]])],
      ]),
    );
    const path = join(folder, 'qrels.trec');
    await writeFile(path, '\uFEFFq1 0 d1 1\r\nq1 0 d2 0\r\n');
    expect(await readQrels(path)).toEqual(
      new Map([
        [
          'q1',
          new Map([
            ['d1', 1],
            ['d2', 0],
          ]),
        ],
      ]),
    );
  });

  it('names the line of a bad grade (after the header)', () => {
    expect(() => parseQrels('query-id\tcorpus-id\tscore\n1\t2\tyes\n', 'q.tsv')).toThrow(
      "q.tsv:2: relevance grade 'yes' is not an integer",
    );
    expect(() => parseQrels('1\t2\n', 'q.tsv')).toThrow(/^q\.tsv:1: expected 3 fields/);
  });
});
