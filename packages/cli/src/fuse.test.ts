import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  beirDocumentText,
  HashEmbedder,
  HybridRetriever,
  InMemoryVectorStore,
  KeywordRetriever,
  luceneEnglishAnalyzer,
  parseTrecRun,
  reciprocalRankFusion,
  VectorRetriever,
} from '@zerda/core';
import { loadBeirFolder, readTrecRun } from '@zerda/core/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEval } from './commands/eval.js';
import { fuseRuns, rankRun, runFuse } from './commands/fuse.js';
import { main } from './main.js';
import { captureIo, dataRoot } from './test-helpers.js';

const cisi = join(dataRoot, 'cisi');

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'zerda-cli-fuse-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('fuseRuns', () => {
  const a = new Map([
    [
      'q1',
      [
        { docId: 'c', score: 1 },
        { docId: 'a', score: 3 },
        { docId: 'b', score: 2 },
      ],
    ],
  ]);
  const b = new Map([
    [
      'q1',
      [
        { docId: 'b', score: 0.9 },
        { docId: 'd', score: 0.5 },
      ],
    ],
    ['q2', [{ docId: 'x', score: 1 }]],
  ]);

  it('ranks each run by score and fuses with RRF (k, weights)', () => {
    const fused = fuseRuns([a, b], { method: 'rrf', k: 0 });
    // a: a 1, b 2, c 3; b: b 1, d 2.
    expect(fused.get('q1')?.map((e) => [e.docId, e.score])).toEqual([
      ['b', 1 / 2 + 1],
      ['a', 1],
      ['d', 1 / 2],
      ['c', 1 / 3],
    ]);
    expect(fused.get('q2')?.map((e) => e.docId)).toEqual(['x']);
    const weighted = fuseRuns([a, b], { method: 'rrf', k: 0, weights: [3, 1] });
    expect(weighted.get('q1')?.[0]).toMatchObject({ docId: 'a', score: 3 });
  });

  it('fuses min-max normalised scores by weighted arithmetic mean; depth and top cut', () => {
    // a: a 1, b 0.5, c 0; b: b 1, d 0.
    const fused = fuseRuns([a, b], { method: 'minmax' });
    expect(Object.fromEntries(fused.get('q1')?.map((e) => [e.docId, e.score]) ?? [])).toEqual({
      a: 0.5,
      b: 0.75,
      c: 0,
      d: 0,
    });
    const cut = fuseRuns([a, b], { method: 'minmax', depth: 1, top: 2, weights: [1, 3] });
    expect(cut.get('q1')?.map((e) => [e.docId, e.score])).toEqual([
      ['b', 0.75],
      ['a', 0.25],
    ]);
  });

  it('orders equal scores by document id, ascending, as Zerda retrievers do', () => {
    expect(
      rankRun([
        { docId: 'b', score: 1 },
        { docId: 'c', score: 2 },
        { docId: 'a', score: 1 },
      ]).map((e) => e.docId),
    ).toEqual(['c', 'a', 'b']);
  });
});

describe('zerda fuse', () => {
  const runA = '1 Q0 d1 1 2.5 A\n1 Q0 d2 2 1.5 A\n2 Q0 d3 1 1 A\n';
  const runB = '1 Q0 d2 1 0.8 B\n1 Q0 d4 2 0.2 B\n';

  it('writes the fused run as a TREC run file', async () => {
    const [pathA, pathB, out] = ['a.run', 'b.run', 'fused.run'].map((name) => join(tmp, name)) as [
      string,
      string,
      string,
    ];
    await writeFile(pathA, runA);
    await writeFile(pathB, runB);
    const io = captureIo();
    expect(await main(['fuse', pathA, pathB, '--method', 'rrf', '--out', out], io)).toBe(0);
    expect(io.err).toBe('');
    expect(io.out).toMatch(/wrote .*fused\.run \(2 queries, 4 lines\)/);
    expect(io.out).toMatch(/1 query\(ies\) are not in .*b\.run/);
    const text = await readFile(out, 'utf8');
    expect(text.split('\n')[0]).toMatch(/^1 Q0 d2 1 0\.0325\d+ zerda-fuse-rrf$/);
    const fused = parseTrecRun(text);
    expect(fused.get('1')?.map((e) => e.docId)).toEqual(['d2', 'd1', 'd4']);
    const expected = reciprocalRankFusion([
      { items: [{ id: 'd1' }, { id: 'd2' }] },
      { items: [{ id: 'd2' }, { id: 'd4' }] },
    ]);
    expect(fused.get('1')?.map((e) => e.score)).toEqual(expected.map((item) => item.score));

    const json = captureIo();
    expect(
      await main(
        [
          'fuse',
          pathA,
          pathB,
          '--method',
          'minmax',
          '--weights',
          '2,1',
          '--out',
          out,
          '--json',
          '--tag',
          'mm',
        ],
        json,
      ),
    ).toBe(0);
    const report = JSON.parse(json.out) as Record<string, unknown>;
    expect(report).toMatchObject({ method: 'minmax', weights: [2, 1], queries: 2, documents: 4 });
    expect(report).not.toHaveProperty('fused');
    expect(await readFile(out, 'utf8')).toMatch(/^1 Q0 d1 1 0\.666\d+ mm$/mu);
  });

  it('fails with exit code 1 naming a missing or malformed run file and its line', async () => {
    const bad = join(tmp, 'bad.run');
    await writeFile(bad, '1 Q0 d1 1 2.5 A\n1 Q0 d2 2 high A\n');
    const good = join(tmp, 'good.run');
    await writeFile(good, runA);
    const out = join(tmp, 'never.run');
    const cases: Array<[string[], RegExp]> = [
      [[good, join(tmp, 'missing.run')], /^zerda fuse: .*missing\.run: file not found/],
      [[good, bad], /^zerda fuse: .*bad\.run:2: score 'high' is not a finite number/],
    ];
    for (const [runs, message] of cases) {
      const io = captureIo();
      expect(await main(['fuse', ...runs, '--method', 'rrf', '--out', out], io)).toBe(1);
      expect(io.err).toMatch(message);
    }
    await writeFile(bad, '1 Q0 d1 1 2.5\n');
    const io = captureIo();
    expect(await main(['fuse', good, bad, '--method', 'rrf', '--out', out], io)).toBe(1);
    expect(io.err).toMatch(/bad\.run:1: expected 6 fields 'qid Q0 docid rank score tag', found 5/);
    await expect(readFile(out)).rejects.toThrow();
  });

  it('fails with exit code 2 on bad flags, weights and methods', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['a.run', 'b.run', '--out', 'x'], /missing --method/],
      [['a.run', 'b.run', '--method', 'combsum', '--out', 'x'], /unknown method 'combsum'/],
      [['a.run', 'b.run', '--method', 'rrf'], /missing --out/],
      [['a.run', '--method', 'rrf', '--out', 'x'], /expected two run files, got 1/],
      [
        ['a.run', 'b.run', '--method', 'rrf', '--out', 'x', '--weights', '1'],
        /--weights must be 2 numbers >= 0/,
      ],
      [['a.run', 'b.run', '--method', 'rrf', '--out', 'x', '--weights', '1,-2'], /got '1,-2'/],
      [['a.run', 'b.run', '--method', 'rrf', '--out', 'x', '--weights', '1,abc'], /got '1,abc'/],
      [['a.run', 'b.run', '--method', 'rrf', '--out', 'x', '--weights', '0,0'], /cannot all be 0/],
      [['a.run', 'b.run', '--method', 'minmax', '--out', 'x', '--k', '10'], /--k .* rrf only/],
      [['a.run', 'b.run', '--method', 'rrf', '--out', 'x', '--k=-1'], /--k must be a number >= 0/],
      [
        ['a.run', 'b.run', '--method', 'rrf', '--out', 'x', '--depth', '0'],
        /--depth must be an integer >= 1/,
      ],
    ];
    for (const [argv, message] of cases) {
      const io = captureIo();
      expect(await main(['fuse', ...argv], io)).toBe(2);
      expect(io.err).toMatch(message);
      expect(io.err).toMatch(/Usage: zerda fuse/);
    }
  });

  it('shows help with methods, exit codes and examples', async () => {
    const io = captureIo();
    expect(await main(['fuse', '--help'], io)).toBe(0);
    expect(io.out).toMatch(/Usage: zerda fuse <runA> <runB>/);
    expect(io.out).toMatch(
      /Exit codes: 0 success; 1 a run file is missing or malformed[\s\S]*; 2 the command was called wrongly/,
    );
    expect(io.out).toMatch(/Examples:\n {2}pnpm zerda eval .*--write-run/);
  });
});

describe('fusing Zerda runs reproduces the HybridRetriever (CISI)', () => {
  // The runs are as deep as each hybrid branch fetches (branchK = 200 for k = 100).
  const depth = 100;
  const branchK = 200;
  let keywordRun: string;
  let vectorRun: string;

  beforeAll(async () => {
    keywordRun = join(tmp, 'cisi-keyword.run');
    vectorRun = join(tmp, 'cisi-vector.run');
    // The pyserini preset: Lucene's analysis with k1 0.9, b 0.4, as the hybrid below is built.
    const preset = 'pyserini';
    await runEval({ folder: cisi, preset, mode: 'keyword', depth: branchK, writeRunPath: keywordRun });
    await runEval({ folder: cisi, preset, mode: 'vector', depth: branchK, writeRunPath: vectorRun });
  }, 120_000);

  /** The hybrid built from core's classes, with the settings of `zerda eval --preset pyserini`. */
  async function hybridFor(fusion: 'rrf' | 'weighted') {
    const dataset = await loadBeirFolder(cisi);
    const chunks = dataset.corpus.map((d) => ({ id: d.id, text: beirDocumentText(d) }));
    const keyword = new KeywordRetriever({ analyzer: luceneEnglishAnalyzer, k1: 0.9, b: 0.4 });
    keyword.add(chunks);
    const embedder = new HashEmbedder({ dimension: 256, analyzer: luceneEnglishAnalyzer });
    const store = new InMemoryVectorStore({ embedder, metric: 'cosine' });
    await store.add(chunks);
    const vector = new VectorRetriever({ store, embedder });
    return {
      dataset,
      // The guard off: `zerda fuse` fuses the runs with fixed weights.
      hybrid: new HybridRetriever({
        keyword,
        vector,
        fusion,
        branchK,
        normalization: 'minmax',
        guard: false,
      }),
    };
  }

  it.each([
    ['rrf', 'rrf'],
    ['minmax', 'weighted'],
  ] as const)('zerda fuse --method %s gives the ranking and scores of fusion %s', async (method, fusion) => {
    const out = join(tmp, `cisi-fused-${method}.run`);
    const report = await runFuse({ runs: [keywordRun, vectorRun], method, out });
    const { dataset, hybrid } = await hybridFor(fusion);
    const written = await readTrecRun(out);
    const keywordEntries = await readTrecRun(keywordRun);
    expect(report.queries).toBe(dataset.judgedQueries.length);
    let differsFromKeyword = 0;
    for (const query of dataset.judgedQueries) {
      const { hits, warnings } = await hybrid.retrieve(query.text, { k: depth });
      expect(warnings).toEqual([]);
      expect(hits).toHaveLength(depth);
      const fused = (report.fused.get(query.id) ?? []).slice(0, depth);
      // Same documents in the same order, over the whole top 100.
      expect(
        fused.map((e) => e.docId),
        `query ${query.id}`,
      ).toEqual(hits.map((h) => h.chunk.id));
      fused.forEach((entry, i) => {
        expect(Math.abs(entry.score - (hits[i]?.score as number))).toBeLessThanOrEqual(1e-9);
        expect(hits[i]?.explanation?.method).toBe(fusion);
      });
      // The file holds the same ranking (ranked as fuse ranks its inputs).
      expect(
        rankRun(written.get(query.id) ?? [])
          .slice(0, depth)
          .map((e) => e.docId),
      ).toEqual(fused.map((e) => e.docId));
      const keywordTop = rankRun(keywordEntries.get(query.id) ?? [], 10).map((e) => e.docId);
      if (
        keywordTop.join() !==
        fused
          .slice(0, 10)
          .map((e) => e.docId)
          .join()
      )
        differsFromKeyword++;
    }
    // Fusion really changed the rankings: the comparison is not of BM25 with itself.
    expect(differsFromKeyword).toBeGreaterThan(dataset.judgedQueries.length / 2);
  });
});
