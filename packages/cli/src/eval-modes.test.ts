import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beirDocumentText, defaultAnalyzer, HashEmbedder } from '@zerda/core';
import { loadBeirFolder } from '@zerda/core/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalReport } from './commands/eval.js';
import { main } from './main.js';
import { captureIo, dataRoot } from './test-helpers.js';

const cisi = join(dataRoot, 'cisi');
const metrics = ['ndcg@10', 'recall@100', 'mrr@10'] as const;

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'zerda-cli-eval-modes-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Runs `zerda eval ... --json` and returns the report (failing on any error output). */
async function evalJson(...argv: string[]): Promise<EvalReport> {
  const io = captureIo();
  const code = await main(['eval', ...argv, '--json'], io);
  expect(io.err).toBe('');
  expect(code).toBe(0);
  return JSON.parse(io.out) as EvalReport;
}

describe('zerda eval --mode', () => {
  it('evaluates vector search with the hash embedder when no embeddings are given', async () => {
    const report = await evalJson(cisi, '--mode', 'vector');
    expect(report.mode).toBe('vector');
    expect(report).not.toHaveProperty('fusion');
    expect(report.settings).toEqual({
      depth: 100,
      vector: { embedder: 'hash', dimension: 256, metric: 'cosine' },
    });
    for (const metric of metrics) expect(report[metric]).toBeGreaterThan(0.05);
    expect(report.warnings).toEqual([]);
  });

  it('evaluates hybrid retrieval, and --run on the run it wrote with --write-run gives the same metrics', async () => {
    const runFile = join(tmp, 'hybrid.run');
    const hybrid = await evalJson(cisi, '--mode', 'hybrid', '--fusion', 'rrf', '--write-run', runFile);
    expect(hybrid).toMatchObject({ mode: 'hybrid', fusion: 'rrf', runFile });
    expect(hybrid.settings).toEqual({
      depth: 100,
      keyword: { preset: 'library', k1: 1.2, b: 0.75, analyzer: 'default' },
      vector: { embedder: 'hash', dimension: 256, metric: 'cosine' },
      hybrid: {
        fusion: 'rrf',
        branchK: 200,
        rrfK: 60,
        normalization: 'minmax',
        weights: { keyword: 1, vector: 1 },
        // RRF is RRF: the weak-branch guard belongs to the weighted methods.
        guard: false,
      },
    });
    const scored = await evalJson(cisi, '--run', runFile);
    expect(scored.mode).toBe('run');
    expect(scored.settings).toEqual({ run: runFile });
    expect(scored.warnings).toEqual([]);
    for (const metric of metrics) expect(scored[metric]).toBe(hybrid[metric]);

    // The keyword run too, written by the renamed option and scored by --run.
    const keywordFile = join(tmp, 'keyword.run');
    const keyword = await evalJson(cisi, '--write-run', keywordFile);
    const keywordScored = await evalJson(cisi, '--run', keywordFile);
    for (const metric of metrics) expect(keywordScored[metric]).toBe(keyword[metric]);
    // Fusion with the weak hash vectors changes the result.
    expect(hybrid['ndcg@10']).not.toBe(keyword['ndcg@10']);
  });

  it('prints the mode, vectors and fusion in the table', async () => {
    const io = captureIo();
    expect(
      await main(['eval', cisi, '--mode', 'hybrid', '--fusion', 'weighted', '--weights', '2,1'], io),
    ).toBe(0);
    expect(io.out).toMatch(/mode\s+hybrid \(weighted\)/);
    expect(io.out).toMatch(/vectors\s+HashEmbedder, dimension 256, cosine/);
    expect(io.out).toMatch(
      /fusion\s+weighted \(minmax\), 200 candidates per branch, weights keyword 2 vector 1, weak-branch guard on\n/,
    );
    expect(io.out).toMatch(/nDCG@10\s+0\.\d{4}/);
  });

  it('scores a run file, warning about judged queries it lacks', async () => {
    const runFile = join(tmp, 'partial.run');
    await writeFile(runFile, '1 Q0 28 1 3.5 mine\n1 Q0 35 2 2 mine\n999 Q0 1 1 1 mine\n');
    const report = await evalJson(cisi, '--run', runFile);
    expect(report.judgedQueries).toBe(76);
    expect(report['ndcg@10']).toBeGreaterThanOrEqual(0);
    expect(report.warnings.join('\n')).toMatch(
      /75 judged query\(ies\) have no results in the run and score 0/,
    );
    expect(report.warnings.join('\n')).toMatch(/1 query\(ies\) of the run have no relevant judgment .*: 999/);
  });

  it('fails with exit code 1 naming a missing or malformed run file, or one it cannot write', async () => {
    const malformed = join(tmp, 'malformed.run');
    await writeFile(malformed, '1 Q0 28 1 3.5 mine\n1 Q0 28 2 2 mine\n');
    const cases: Array<[string[], RegExp]> = [
      [['--run', join(tmp, 'absent.run')], /^zerda eval: .*absent\.run: file not found/],
      [['--run', malformed], /^zerda eval: .*malformed\.run:2: document '28' is listed twice for query '1'/],
      [
        ['--write-run', join(tmp, 'no-such-dir', 'x.run')],
        /^zerda eval: .*no-such-dir\/x\.run: the run file cannot be written \(ENOENT\)/,
      ],
    ];
    for (const [argv, message] of cases) {
      const io = captureIo();
      expect(await main(['eval', cisi, ...argv], io)).toBe(1);
      expect(io.err).toMatch(message);
    }
  });
});

describe('zerda eval --embeddings (your own vectors)', () => {
  // Vectors from the hash embedder written to files: evaluating them must give exactly what
  // the hash embedder gives.
  const dimension = 64;
  let combined: string;
  let docsFile: string;
  let queriesFile: string;

  beforeAll(async () => {
    const dataset = await loadBeirFolder(cisi);
    // The library preset's analyser, which the hash embedder of zerda eval takes by default.
    const embedder = new HashEmbedder({ dimension, analyzer: defaultAnalyzer });
    const docVectors = await embedder.embed(dataset.corpus.map((d) => beirDocumentText(d)));
    const docLines = dataset.corpus.map((d, i) => ({
      _id: d.id,
      vector: Array.from(docVectors[i] as Float32Array),
    }));
    const queryLines: Array<{ _id: string; vector: number[] }> = [];
    for (const q of dataset.queries)
      queryLines.push({ _id: q.id, vector: Array.from(await embedder.embedQuery(q.text)) });
    const jsonl = (records: object[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
    combined = join(tmp, 'cisi-embeddings.jsonl');
    docsFile = join(tmp, 'cisi-docs.jsonl');
    queriesFile = join(tmp, 'cisi-queries.jsonl');
    // CISI's query ids are document ids too: in one file, the type tells them apart.
    await writeFile(
      combined,
      jsonl([
        ...queryLines.map((r) => ({ ...r, type: 'query' })),
        ...docLines.map((r) => ({ type: 'doc', ...r })),
      ]),
    );
    await writeFile(docsFile, jsonl(docLines));
    await writeFile(queriesFile, jsonl(queryLines));
  });

  it('reproduces the hash embedder from one file with "type", or from two files', async () => {
    const hash = await evalJson(cisi, '--mode', 'vector', '--dimension', String(dimension));
    const one = await evalJson(cisi, '--mode', 'vector', '--embeddings', combined);
    const two = await evalJson(
      cisi,
      '--mode',
      'vector',
      '--embeddings',
      docsFile,
      '--query-embeddings',
      queriesFile,
    );
    expect(one.settings.vector).toEqual({
      embedder: 'file',
      dimension,
      metric: 'cosine',
      documentVectors: combined,
    });
    expect(two.settings.vector).toMatchObject({ documentVectors: docsFile, queryVectors: queriesFile });
    for (const metric of metrics) {
      expect(one[metric]).toBe(hash[metric]);
      expect(two[metric]).toBe(hash[metric]);
    }
    const hybridHash = await evalJson(cisi, '--mode', 'hybrid', '--dimension', String(dimension));
    const hybridFile = await evalJson(cisi, '--mode', 'hybrid', '--embeddings', combined);
    expect(hybridFile.fusion).toBe('weighted');
    for (const metric of metrics) expect(hybridFile[metric]).toBe(hybridHash[metric]);
  });
});

describe('zerda eval --embeddings errors', () => {
  let folder: string;
  beforeAll(async () => {
    folder = join(tmp, 'tiny');
    await mkdir(join(folder, 'qrels'), { recursive: true });
    await writeFile(
      join(folder, 'corpus.jsonl'),
      [
        '{"_id":"1","title":"","text":"sand foxes"}',
        '{"_id":"2","text":"desert camels"}',
        '{"_id":"3","text":"date palms"}',
      ].join('\n'),
    );
    await writeFile(join(folder, 'queries.jsonl'), '{"_id":"1","text":"fox"}\n{"_id":"q2","text":"palm"}\n');
    await writeFile(join(folder, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\n1\t1\t1\nq2\t3\t1\n');
  });

  const doc = (id: string, vector: unknown) => JSON.stringify({ _id: id, type: 'doc', vector });
  const query = (id: string, vector: unknown) => JSON.stringify({ _id: id, type: 'query', vector });
  const good = [
    doc('1', [1, 0, 0]),
    doc('2', [0, 1, 0]),
    doc('3', [0, 0, 1]),
    query('1', [1, 0.1, 0]),
    query('q2', [0, 0, 1]),
  ];

  async function failWith(lines: string[], extra: string[] = []): Promise<string> {
    const file = join(tmp, `emb-${Math.random().toString(36).slice(2)}.jsonl`);
    await writeFile(file, `${lines.join('\n')}\n`);
    const io = captureIo();
    expect(await main(['eval', folder, '--mode', 'vector', '--embeddings', file, ...extra], io)).toBe(1);
    expect(io.out).toBe('');
    return io.err;
  }

  it('accepts a complete file', async () => {
    const file = join(tmp, 'tiny-good.jsonl');
    await writeFile(file, `${good.join('\n')}\n`);
    const report = await evalJson(folder, '--mode', 'hybrid', '--embeddings', file);
    expect(report['mrr@10']).toBe(1);
  });

  it('names the file, the line and the id of a vector of the wrong length', async () => {
    const err = await failWith([good[0], good[1], doc('3', [0, 1]), ...good.slice(3)] as string[]);
    expect(err).toMatch(
      /^zerda eval: .*emb-\w+\.jsonl:3: the vector of document '3' has 2 numbers, expected 3 \(as the first vector, line 1\)/,
    );
    const queryErr = await failWith([...good.slice(0, 4), query('q2', [0, 0, 1, 0])] as string[]);
    expect(queryErr).toMatch(/\.jsonl:5: the vector of query 'q2' has 4 numbers, expected 3/);
  });

  it('names the line of a vector with a non-finite value', async () => {
    for (const bad of ['[0, null, 1]', '[0, 1e999, 1]', '[0, "1", 1]']) {
      const err = await failWith([
        good[0],
        `{"_id": "2", "type": "doc", "vector": ${bad}}`,
        ...good.slice(2),
      ] as string[]);
      expect(err).toMatch(
        /\.jsonl:2: the vector of document '2' holds .* at position 1; every value must be a finite number/,
      );
    }
  });

  it('names the line that lacks an id, or a type in a combined file', async () => {
    const noId = await failWith([
      good[0],
      '{"type": "doc", "vector": [0, 1, 0]}',
      ...good.slice(2),
    ] as string[]);
    expect(noId).toMatch(/\.jsonl:2: missing or empty '_id' \(got nothing\)/);
    const noType = await failWith([
      good[0],
      '{"_id": "2", "vector": [0, 1, 0]}',
      ...good.slice(2),
    ] as string[]);
    expect(noType).toMatch(/\.jsonl:2: '2' has no "type": .* "type": "doc" or "type": "query"/);
    const badType = await failWith([
      good[0],
      '{"_id": "2", "type": "passage", "vector": [0, 1, 0]}',
    ] as string[]);
    expect(badType).toMatch(/\.jsonl:2: '2' has "type" "passage"; expected "doc" or "query"/);
    const twice = await failWith([...good, doc('2', [0, 1, 1])] as string[]);
    expect(twice).toMatch(/\.jsonl:6: document '2' has a vector already \(.*\.jsonl:2\)/);
  });

  it('names the documents and queries that have no vector', async () => {
    const noDoc = await failWith([good[0], ...good.slice(2)] as string[]);
    expect(noDoc).toMatch(
      /\.jsonl: no vector for document '2' of .*corpus\.jsonl \(1 of 3 documents have none\)/,
    );
    const noQuery = await failWith(good.slice(0, 4) as string[]);
    expect(noQuery).toMatch(
      /\.jsonl: no vector for query 'q2' of .*queries\.jsonl \(1 of the 2 judged queries/,
    );
    // In two files, the query file is named, and a line of the wrong kind is refused.
    const queries = join(tmp, 'tiny-queries.jsonl');
    await writeFile(queries, `${JSON.stringify({ _id: '1', vector: [1, 0, 0] })}\n`);
    const docs = good.slice(0, 3).map((line) => line.replace(',"type":"doc"', ''));
    const missing = await failWith(docs, ['--query-embeddings', queries]);
    expect(missing).toMatch(/tiny-queries\.jsonl: no vector for query 'q2'/);
    const wrongKind = await failWith([...docs, query('1', [1, 0, 0])], ['--query-embeddings', queries]);
    expect(wrongKind).toMatch(/\.jsonl:4: '1' has "type": "query" in a file of document vectors/);
    await writeFile(queries, `${JSON.stringify({ _id: '1', vector: [1, 0] })}\n`);
    const shorter = await failWith(docs, ['--query-embeddings', queries]);
    expect(shorter).toMatch(
      /tiny-queries\.jsonl:1: the vector of query '1' has 2 numbers, expected 3 \(as the vectors of .*\.jsonl\)/,
    );
  });

  it('fails with a missing embeddings file', async () => {
    const io = captureIo();
    expect(
      await main(['eval', folder, '--mode', 'vector', '--embeddings', join(tmp, 'none.jsonl')], io),
    ).toBe(1);
    expect(io.err).toMatch(/none\.jsonl: file not found/);
  });
});

describe('zerda eval usage errors', () => {
  it('refuses options that do not go together, with exit code 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--mode', 'dense'], /unknown mode 'dense': expected keyword, vector, hybrid/],
      [['--run', 'x.run', '--mode', 'hybrid'], /--run scores a given run file; --mode cannot go with it/],
      [['--run', 'x.run', '--write-run', 'y.run'], /--write-run cannot go with it/],
      [['--fusion', 'rrf'], /--fusion applies to --mode hybrid, not keyword/],
      [['--mode', 'hybrid', '--fusion', 'max'], /unknown fusion 'max'/],
      [['--embeddings', 'e.jsonl'], /--embeddings applies to --mode vector or hybrid, not keyword/],
      [['--mode', 'vector', '--k1', '1'], /--k1 applies to --mode keyword or hybrid, not vector/],
      [['--mode', 'vector', '--query-embeddings', 'q.jsonl'], /--query-embeddings needs --embeddings/],
      [['--mode', 'vector', '--embeddings', 'e', '--dimension', '8'], /--dimension sets the hash embedder's/],
      [['--mode', 'hybrid', '--branch-k', '50'], /--branch-k must be at least the depth \(100\), got 50/],
      [['--mode', 'hybrid', '--weights', '1'], /--weights must be 2 numbers >= 0/],
      [
        ['--mode', 'hybrid', '--fusion', 'weighted', '--rrf-k', '10'],
        /--rrf-k does not apply to --fusion weighted/,
      ],
    ];
    for (const [argv, message] of cases) {
      const io = captureIo();
      expect(await main(['eval', cisi, ...argv], io)).toBe(2);
      expect(io.err).toMatch(message);
      expect(io.err).toMatch(/Usage: zerda eval/);
    }
  });

  it('documents the modes, the embeddings format and the exit codes in --help', async () => {
    const io = captureIo();
    expect(await main(['eval', '--help'], io)).toBe(0);
    for (const text of [
      '--mode <m>',
      '--write-run <file>',
      '--run <file>',
      '"type": "doc"',
      '--query-embeddings',
    ]) {
      expect(io.out).toContain(text);
    }
    expect(io.out).toMatch(/Exit codes: 0 success; 1 the evaluation failed/);
    expect(io.out).toMatch(/pnpm zerda eval datasets\/cisi --mode hybrid --fusion rrf --json/);
  });
});
