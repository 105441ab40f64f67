import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBeirFolder } from './beir.js';
import { beirDocumentText } from './beir-types.js';
import { DatasetError } from './dataset-error.js';

const dataRoot = join(dirname(fileURLToPath(import.meta.url)), '../../../../datasets');

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zerda-beir-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function makeFolder(name: string, files: Record<string, string>): Promise<string> {
  const folder = join(root, name);
  for (const [file, content] of Object.entries(files)) {
    await mkdir(dirname(join(folder, file)), { recursive: true });
    await writeFile(join(folder, file), content);
  }
  return folder;
}

const corpus = [
  { _id: 'd1', title: 'Owls', text: 'Owls hunt at night.' },
  { _id: 'd2', title: '', text: 'Bats also hunt at night.' },
  { _id: 3, title: 'Larks', text: 'Larks sing at dawn.' },
]
  .map((d) => JSON.stringify(d))
  .join('\n');
const queries = [
  { _id: 'q1', text: 'night hunters' },
  { _id: 'q2', text: 'dawn song' },
  { _id: 'q3', text: 'unjudged' },
  { _id: 'q4', text: 'only non-relevant judgments' },
]
  .map((q) => JSON.stringify(q))
  .join('\n');

describe('loadBeirFolder', () => {
  it('reads corpus, queries and qrels/test.tsv and keeps only judged queries', async () => {
    const folder = await makeFolder('small', {
      'corpus.jsonl': `${corpus}\n\n`,
      'queries.jsonl': queries,
      'qrels/test.tsv': 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\nq2\t3\t1\nq4\td1\t0\nq9\td1\t1\n',
      'qrels.tsv': 'query-id\tcorpus-id\tscore\nq3\td1\t1\n',
    });
    const dataset = await loadBeirFolder(folder);
    expect(dataset.name).toBe('small');
    expect(dataset.files.qrels).toBe(join(folder, 'qrels', 'test.tsv'));
    expect(dataset.corpus).toEqual([
      { id: 'd1', title: 'Owls', text: 'Owls hunt at night.' },
      { id: 'd2', title: '', text: 'Bats also hunt at night.' },
      { id: '3', title: 'Larks', text: 'Larks sing at dawn.' },
    ]);
    expect(dataset.queries).toHaveLength(4);
    expect(dataset.judgedQueries.map((q) => q.id)).toEqual(['q1', 'q2']);
    expect(dataset.qrels.get('q1')?.get('d2')).toBe(2);
    expect(dataset.warnings).toEqual(['1 judged query id(s) are not in queries.jsonl and cannot be run: q9']);
  });

  it('falls back to qrels.tsv', async () => {
    const folder = await makeFolder('flat', {
      'corpus.jsonl': corpus,
      'queries.jsonl': queries,
      'qrels.tsv': 'query-id\tcorpus-id\tscore\nq3\td1\t1\n',
    });
    const dataset = await loadBeirFolder(folder);
    expect(dataset.judgedQueries.map((q) => q.id)).toEqual(['q3']);
  });

  it('indexes title and text as one field', () => {
    expect(beirDocumentText({ title: 'Owls', text: 'hunt' })).toBe('Owls hunt');
    expect(beirDocumentText({ title: '', text: 'hunt' })).toBe('hunt');
  });

  it('names the file and line of a malformed line', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ 'corpus.jsonl': `${corpus}\n{"_id": "d4", "text": ` }, /corpus\.jsonl:4: not valid JSON/],
      [{ 'corpus.jsonl': '{"title": "x", "text": "y"}' }, /corpus\.jsonl:1: missing or empty '_id'/],
      [{ 'corpus.jsonl': '{"_id": "a", "text": 5}' }, /corpus\.jsonl:1: 'text' must be a string, got number/],
      [{ 'corpus.jsonl': '[1]' }, /corpus\.jsonl:1: expected a JSON object, got an array/],
      [
        { 'corpus.jsonl': '{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}' },
        /corpus\.jsonl:2: duplicate document id 'a' \(first on line 1\)/,
      ],
      [{ 'queries.jsonl': '{"_id": "q1"}' }, /queries\.jsonl:1: 'text' must be a string, got undefined/],
      [{ 'qrels.tsv': 'query-id\tcorpus-id\tscore\nq1\td1\n' }, /qrels\.tsv:2: expected 3 fields/],
    ];
    let n = 0;
    for (const [files, message] of cases) {
      const folder = await makeFolder(`bad${n++}`, {
        'corpus.jsonl': corpus,
        'queries.jsonl': queries,
        'qrels.tsv': 'query-id\tcorpus-id\tscore\nq1\td1\t1\n',
        ...files,
      });
      const error = await loadBeirFolder(folder).catch((e: unknown) => e);
      expect(DatasetError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('says what is missing', async () => {
    await expect(loadBeirFolder(join(root, 'nowhere'))).rejects.toThrow(/nowhere: folder not found/);
    const noQrels = await makeFolder('noqrels', { 'corpus.jsonl': corpus, 'queries.jsonl': queries });
    await expect(loadBeirFolder(noQrels)).rejects.toThrow(
      /no judgments: expected qrels\/test\.tsv or qrels\.tsv/,
    );
    const noCorpus = await makeFolder('nocorpus', { 'queries.jsonl': queries, 'qrels.tsv': 'a\tb\t1\n' });
    await expect(loadBeirFolder(noCorpus)).rejects.toThrow(/corpus\.jsonl: file not found/);
  });

  it('loads the shared collections with the sizes their README gives', async () => {
    const cisi = await loadBeirFolder(join(dataRoot, 'cisi'));
    expect([cisi.corpus.length, cisi.queries.length, cisi.judgedQueries.length]).toEqual([1460, 112, 76]);
    let judgments = 0;
    for (const j of cisi.qrels.values()) judgments += j.size;
    expect(judgments).toBe(3114);
    const cranfield = await loadBeirFolder(join(dataRoot, 'cranfield'));
    expect([cranfield.corpus.length, cranfield.judgedQueries.length]).toEqual([1400, 225]);
    expect(cranfield.warnings).toEqual([]);
  });
});
