import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFusionConfig } from '@zerda/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTune } from './commands/tune/index.js';
import { main } from './main.js';
import { captureIo } from './test-helpers.js';

let tmp: string;

/**
 * A small collection in BEIR layout: each topic has a few documents that use its words, and a
 * query asking about it; the documents of the topic are judged relevant.
 */
async function writeCollection(folder: string, queries: number): Promise<void> {
  await mkdir(join(folder, 'qrels'), { recursive: true });
  const topics = [
    'desert fox',
    'sand dune',
    'boundary layer',
    'heat transfer',
    'library index',
    'search engine',
    'river delta',
    'solar panel',
    'wind tunnel',
    'jet engine',
    'oak forest',
    'coral reef',
    'snow leopard',
    'glass bridge',
  ].slice(0, queries);
  const corpus: string[] = [];
  const qrels: string[] = ['query-id\tcorpus-id\tscore'];
  const lines: string[] = [];
  topics.forEach((topic, t) => {
    for (let d = 0; d < 4; d++) {
      const id = `d${t}-${d}`;
      corpus.push(
        JSON.stringify({
          _id: id,
          title: '',
          text: `${topic} notes number ${d} about the ${topic.split(' ')[d % 2]}`,
        }),
      );
      if (d < 2) qrels.push(`q${t}\t${id}\t1`);
    }
    lines.push(JSON.stringify({ _id: `q${t}`, text: `what about the ${topic}` }));
  });
  await writeFile(join(folder, 'corpus.jsonl'), `${corpus.join('\n')}\n`);
  await writeFile(join(folder, 'queries.jsonl'), `${lines.join('\n')}\n`);
  await writeFile(join(folder, 'qrels', 'test.tsv'), `${qrels.join('\n')}\n`);
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'zerda-cli-tune-'));
  await writeCollection(join(tmp, 'small'), 12);
  await writeCollection(join(tmp, 'tiny'), 6);
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('zerda tune', () => {
  it('cross-validates fusion settings, reports folds beside each branch, and writes the chosen setting', async () => {
    const out = join(tmp, 'fusion.json');
    const io = captureIo();
    expect(
      await main(['tune', join(tmp, 'small'), '--out', out, '--json', '--seed', '7', '--depth', '10'], io),
    ).toBe(0);
    const report = JSON.parse(io.out);
    expect(report.judgedQueries).toBe(12);
    expect(report.folds).toHaveLength(5);
    expect(report.folds.reduce((sum: number, fold: { queries: number }) => sum + fold.queries, 0)).toBe(12);
    for (const key of ['tuned', 'keyword', 'vector']) {
      expect(report[key].mean).toBeGreaterThanOrEqual(0);
      expect(report[key].std).toBeGreaterThanOrEqual(0);
    }
    expect(report.settings).toBeGreaterThan(100);
    expect(report.seed).toBe(7);
    // Progress goes to standard error, the report alone to standard output.
    expect(io.err).toMatch(/running the keyword branch/);
    const written = parseFusionConfig(await readFile(out, 'utf8'));
    expect(written).toMatchObject({ version: 1, bm25: { k1: 1.2, b: 0.75 } });
    expect(written.description).toMatch(/zerda tune on small: 5-fold held-out nDCG@10/);

    // The same seed, the same result; the setting file is what zerda eval reads.
    const again = await runTune({ folder: join(tmp, 'small'), seed: 7, depth: 10 });
    expect(again.folds).toEqual(report.folds);
    expect(again.config).toEqual(report.config);
    const evaluated = captureIo();
    expect(
      await main(
        ['eval', join(tmp, 'small'), '--mode', 'hybrid', '--fusion-config', out, '--depth', '10', '--json'],
        evaluated,
      ),
    ).toBe(0);
    const evaluation = JSON.parse(evaluated.out);
    expect(evaluation.settings.hybrid).toMatchObject({ fusion: written.method, configFile: out });
    expect(evaluation['ndcg@10']).toBeCloseTo(report.all.tuned.ndcg10, 10);
  });

  it('prints a table by default', async () => {
    const io = captureIo();
    expect(await main(['tune', join(tmp, 'small'), '--depth', '10', '--folds', '3'], io)).toBe(0);
    expect(io.out).toMatch(/held-out nDCG@10 per fold/);
    expect(io.out).toMatch(/mean ± std\s+0\.\d{4} ± 0\.\d{4} \(keyword 0\.\d{4} ± 0\.\d{4}, vector/);
    expect(io.out).toMatch(/chosen on all queries: (weighted|rrf)/);
  });

  it('also chooses BM25 k1 and b with --tune-bm25', async () => {
    const io = captureIo();
    expect(await main(['tune', join(tmp, 'small'), '--depth', '10', '--tune-bm25', '--json'], io)).toBe(0);
    const report = JSON.parse(io.out);
    expect(report.bm25Search).toHaveLength(5);
    const best = Math.max(...report.bm25Search.map((entry: { tuned: { mean: number } }) => entry.tuned.mean));
    expect(report.tuned.mean).toBe(best);
    expect(report.bm25Search.map((e: { k1: number; b: number }) => `${e.k1}/${e.b}`)).toContain(
      `${report.config.bm25.k1}/${report.config.bm25.b}`,
    );
    const both = captureIo();
    expect(await main(['tune', join(tmp, 'small'), '--tune-bm25', '--k1', '1'], both)).toBe(2);
    expect(both.err).toMatch(/--tune-bm25 chooses k1 and b/);
  });

  it('refuses a collection with fewer than 10 judged queries, saying why', async () => {
    const io = captureIo();
    expect(await main(['tune', join(tmp, 'tiny')], io)).toBe(2);
    expect(io.err).toMatch(/has 6 judged queries; tuning needs at least 10/);
  });

  it('refuses bad flags and shows help', async () => {
    for (const argv of [['--folds', '1', 'x'], ['--query-embeddings', 'q.jsonl', 'x'], []]) {
      const io = captureIo();
      expect(await main(['tune', ...argv], io)).toBe(2);
    }
    const help = captureIo();
    expect(await main(['tune', '--help'], help)).toBe(0);
    expect(help.out).toMatch(/Usage: zerda tune <folder>/);
    expect(help.out).toMatch(/Needs at least 10 judged queries/);
  });
});

describe('zerda eval --fusion-config', () => {
  it('refuses a setting of another version or with a negative weight, naming the key (exit 1)', async () => {
    const cases: Array<[object, RegExp]> = [
      [{ version: 2, method: 'rrf' }, /fusion setting key 'version': version 2 is not supported/],
      [
        { version: 1, method: 'rrf', weights: { vector: -0.5 } },
        /fusion setting key 'weights\.vector': must be >= 0/,
      ],
      [{ version: 1, method: 'rrf', alpha: 1 }, /fusion setting key 'alpha': unknown key/],
    ];
    for (const [setting, message] of cases) {
      const file = join(tmp, 'bad.json');
      await writeFile(file, JSON.stringify(setting));
      const io = captureIo();
      expect(await main(['eval', join(tmp, 'small'), '--mode', 'hybrid', '--fusion-config', file], io)).toBe(
        1,
      );
      expect(io.err).toMatch(message);
      expect(io.err).toContain(file);
    }
    const io = captureIo();
    expect(
      await main(
        ['eval', join(tmp, 'small'), '--mode', 'hybrid', '--fusion-config', 'x.json', '--fusion', 'rrf'],
        io,
      ),
    ).toBe(2);
    expect(io.err).toMatch(/--fusion-config sets the fusion; --fusion cannot go with it/);
  });
});
