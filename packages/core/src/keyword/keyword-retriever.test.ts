import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChunkValidationError, IndexFormatError, InvalidArgumentError } from '../errors/index.js';
import type { FilterInput } from '../filter/index.js';
import type { Chunk } from '../model/index.js';
import type { Analyzer } from '../text/index.js';
import { BM25Index } from './bm25-index.js';
import { loadKeywordRetriever, saveBM25Index, saveKeywordRetriever } from './keyword-files.js';
import { KeywordRetriever } from './keyword-retriever.js';

const whitespace: Analyzer = {
  name: 'test-whitespace',
  analyze: (text) =>
    text
      .toLowerCase()
      .split(/\W+/u)
      .filter((term) => term.length > 0),
};

const chunks: Chunk[] = [
  {
    id: 'a',
    text: 'solar panels convert sunlight',
    docId: 'energy',
    metadata: { category: 'energy', year: 2020 },
  },
  { id: 'b', text: 'solar solar wind power', docId: 'energy', metadata: { category: 'energy', year: 2022 } },
  {
    id: 'c',
    text: 'contract law and solar leases',
    docId: 'law',
    metadata: { category: 'legal', year: 2021 },
  },
  {
    id: 'd',
    text: 'wind turbines at sea',
    docId: 'energy',
    metadata: { category: 'energy', year: 2019, tags: ['sea'] },
  },
];

describe('KeywordRetriever', () => {
  it('returns hits scored in [0, 1] with the top hit at 1 and explanations', async () => {
    const retriever = new KeywordRetriever({ analyzer: whitespace });
    retriever.add(chunks);
    const result = await retriever.retrieve('solar', { k: 2 });
    expect(result.hits.map((hit) => hit.chunk.id)).toEqual(['b', 'a']);
    expect(result.hits[0]?.score).toBe(1);
    expect(result.hits[1]?.score).toBeGreaterThan(0);
    expect(result.hits[1]?.score).toBeLessThan(1);
    expect(result.total).toBe(3);
    expect(result.hits.map((hit) => hit.rank)).toEqual([1, 2]);
    expect(result.hits[0]?.retriever).toBe('keyword');
    expect(result.hits[0]?.scores.keyword).toBe(1);
    expect(result.hits[0]?.explanation?.components?.bm25).toBeGreaterThan(0);
    expect(result.warnings).toEqual([]);
  });

  it('honours metadata filters: equality, membership and the rest of the language', async () => {
    const retriever = new KeywordRetriever({ analyzer: whitespace });
    retriever.add(chunks);
    const ids = async (query: string, filter: FilterInput) =>
      (await retriever.retrieve(query, { k: 10, filter })).hits.map((hit) => hit.chunk.id).sort();
    expect(await ids('solar', { category: 'legal' })).toEqual(['c']);
    expect(await ids('solar wind', { category: ['legal', 'energy'] })).toEqual(['a', 'b', 'c', 'd']);
    expect(await ids('solar wind', { year: { $gte: 2021 } })).toEqual(['b', 'c']);
    expect(await ids('solar wind', { docId: 'energy', tags: 'sea' })).toEqual(['d']);
    expect(await ids('solar', { category: 'none' })).toEqual([]);
  });

  it('accepts LangChain-style documents and content objects through one normaliser', async () => {
    const retriever = new KeywordRetriever({ analyzer: whitespace });
    retriever.add([
      { id: 'lc', pageContent: 'langchain document text', metadata: { source: 'x' } },
      { id: 'ct', content: 'content shaped text' },
    ]);
    expect(retriever.get('lc')).toEqual({
      id: 'lc',
      text: 'langchain document text',
      metadata: { source: 'x' },
    });
    expect((await retriever.retrieve('text')).hits).toHaveLength(2);
  });

  it('refuses bad chunks with a typed error and keeps its state', async () => {
    const retriever = new KeywordRetriever({ analyzer: whitespace });
    retriever.add(chunks);
    expect(() =>
      retriever.add([
        { id: 'x', text: 'fine' },
        { id: 'y', text: ['not', 'text'] },
      ]),
    ).toThrow(ChunkValidationError);
    expect(() => retriever.add([{ id: 'z', text: 'ok', metadata: { nested: { no: 1 } } }])).toThrow(/nested/);
    expect(retriever.size).toBe(4);
    expect(retriever.get('x')).toBeUndefined();
    await expect(retriever.retrieve('fine')).resolves.toMatchObject({ hits: [] });
    await expect(retriever.retrieve('solar', { k: 0 })).rejects.toThrow(InvalidArgumentError);
    await expect(retriever.retrieve('solar', { k: 2.5 })).rejects.toThrow(InvalidArgumentError);
    await expect(retriever.retrieve('solar', { filter: { year: { $bogus: 1 } } as never })).rejects.toThrow(
      /\$bogus/,
    );
  });

  it('removes and replaces chunks by id', async () => {
    const retriever = new KeywordRetriever({ analyzer: whitespace });
    retriever.add(chunks);
    expect(retriever.remove(['b', 'nope'])).toBe(1);
    retriever.add([{ id: 'a', text: 'now about tides' }]);
    const result = await retriever.retrieve('solar tides');
    expect(result.hits.map((hit) => hit.chunk.id)).toEqual(['a', 'c']);
    expect(result.hits[0]?.chunk.text).toBe('now about tides');
  });

  it('lets queries running during indexing see whole batches only', async () => {
    const retriever = new KeywordRetriever({ analyzer: whitespace });
    const batchSize = 25;
    const writer = (async () => {
      for (let batch = 0; batch < 40; batch++) {
        retriever.add(
          Array.from({ length: batchSize }, (_, i) => ({
            id: `${batch}-${i}`,
            text: `zebra stripes number ${i}`,
          })),
        );
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const counts: number[] = [];
    const reader = (async () => {
      for (let i = 0; i < 60; i++) {
        counts.push((await retriever.retrieve('zebra', { k: 5000 })).hits.length);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await Promise.all([writer, reader]);
    expect(counts.every((count) => count % batchSize === 0)).toBe(true);
    expect(new Set(counts).size).toBeGreaterThan(3);
  });

  it('saves and loads a directory, refusing a mismatched chunks file', async () => {
    const retriever = new KeywordRetriever({ analyzer: whitespace, k1: 0.9, b: 0.4 });
    retriever.add(chunks);
    const directory = await mkdtemp(join(tmpdir(), 'zerda-keyword-'));
    await saveKeywordRetriever(retriever, directory);
    const loaded = await loadKeywordRetriever(directory, { analyzer: whitespace });
    expect(loaded.size).toBe(4);
    expect(loaded.index.k1).toBe(0.9);
    const [original, reloaded] = await Promise.all([
      retriever.retrieve('solar wind', { filter: { category: 'energy' } }),
      loaded.retrieve('solar wind', { filter: { category: 'energy' } }),
    ]);
    expect(reloaded.hits.map((hit) => [hit.chunk, hit.score])).toEqual(
      original.hits.map((hit) => [hit.chunk, hit.score]),
    );
    const manifest = JSON.parse(await readFile(join(directory, 'zerda-keyword.json'), 'utf8'));
    await writeFile(join(directory, manifest.chunks.file), JSON.stringify({ id: 'other', text: 'x' }));
    await expect(loadKeywordRetriever(directory, { analyzer: whitespace })).rejects.toThrow(IndexFormatError);
  });

  describe('the save is one atomic switch', () => {
    const saved = async () => {
      const retriever = new KeywordRetriever({ analyzer: whitespace });
      retriever.add(chunks);
      const directory = await mkdtemp(join(tmpdir(), 'zerda-keyword-'));
      await saveKeywordRetriever(retriever, directory);
      return { retriever, directory };
    };
    const refused = async (directory: string, message: RegExp) => {
      const error = await loadKeywordRetriever(directory, { analyzer: whitespace }).catch((caught) => caught);
      expect(IndexFormatError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(message);
    };

    it('writes a manifest and two data files, and a new save leaves only its own', async () => {
      const { retriever, directory } = await saved();
      const first = (await readdir(directory)).sort();
      expect(first).toHaveLength(3);
      expect(first).toContain('zerda-keyword.json');
      retriever.remove(['a']);
      await saveKeywordRetriever(retriever, directory);
      const second = (await readdir(directory)).sort();
      expect(second).toHaveLength(3);
      expect(second.filter((file) => first.includes(file))).toEqual(['zerda-keyword.json']);
      expect((await loadKeywordRetriever(directory, { analyzer: whitespace })).size).toBe(3);
    });

    it('debris of an interrupted save does not hide the committed one', async () => {
      const { directory } = await saved();
      await writeFile(join(directory, 'keyword-index-0123456789abcdef.bin'), 'ZERDABM2 half');
      await writeFile(join(directory, 'keyword-chunks-0123456789abcdef.jsonl'), '{"id": "x", "te');
      await writeFile(join(directory, 'zerda-keyword.json.0123456789abcdef.tmp'), '{"format": "zer');
      expect((await loadKeywordRetriever(directory, { analyzer: whitespace })).size).toBe(4);
    });

    it('refuses a missing, truncated or foreign save with IndexFormatError', async () => {
      await refused(join(tmpdir(), 'zerda-no-such-folder'), /No saved keyword retriever/);
      const { directory } = await saved();
      const manifestPath = join(directory, 'zerda-keyword.json');
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
      const indexPath = join(directory, manifest.index.file);
      const bytes = await readFile(indexPath);
      await writeFile(indexPath, bytes.subarray(0, bytes.length - 10));
      await refused(directory, /does not match the manifest/);
      await rm(indexPath);
      await refused(directory, /missing/);
      await writeFile(
        manifestPath,
        JSON.stringify({ ...manifest, index: { ...manifest.index, file: '../x.bin' } }),
      );
      await refused(directory, /valid index file/);
      await writeFile(manifestPath, JSON.stringify({ ...manifest, version: 99 }));
      await refused(directory, /Format version 99/);
      await writeFile(manifestPath, '{"format": "zerda.keyword-ret');
      await refused(directory, /not valid JSON/);
    });

    it('still loads a folder of the format before the manifest, and replaces it on the next save', async () => {
      const retriever = new KeywordRetriever({ analyzer: whitespace });
      retriever.add(chunks);
      const directory = await mkdtemp(join(tmpdir(), 'zerda-keyword-legacy-'));
      await saveBM25Index(retriever.index, join(directory, 'keyword-index.bin'));
      await writeFile(
        join(directory, 'chunks.jsonl'),
        [...retriever.chunks()].map((chunk) => JSON.stringify(chunk)).join('\n'),
      );
      const loaded = await loadKeywordRetriever(directory, { analyzer: whitespace });
      expect([...loaded.chunks()]).toEqual([...retriever.chunks()]);
      await saveKeywordRetriever(loaded, directory);
      const files = await readdir(directory);
      expect(files).toHaveLength(3);
      expect(files).not.toContain('chunks.jsonl');
      expect(files).not.toContain('keyword-index.bin');
      expect((await loadKeywordRetriever(directory, { analyzer: whitespace })).size).toBe(4);
    });
  });
});

describe('KeywordRetriever.fromParts', () => {
  it('refuses chunks that do not name the index documents exactly once each', () => {
    const retriever = new KeywordRetriever();
    retriever.add([
      { id: 'a', text: 'solar panels' },
      { id: 'b', text: 'wind farms' },
    ]);
    const index = retriever.index;
    const a = { id: 'a', text: 'solar panels' };
    expect(KeywordRetriever.fromParts(index, [a, { id: 'b', text: 'wind farms' }]).size).toBe(2);
    // Out of the index's order: matched id by id instead, and still the same chunks.
    const reordered = KeywordRetriever.fromParts(index, [{ id: 'b', text: 'wind farms' }, a]);
    expect(reordered.get('a')).toBe(a);
    expect([...reordered.chunks()].map((chunk) => chunk.id)).toEqual(['a', 'b']);
    for (const chunks of [
      [a, a],
      [a],
      [a, { id: 'c', text: 'x' }],
      [
        { id: 'b', text: 'x' },
        { id: 'b', text: 'y' },
      ],
    ]) {
      expect(() => KeywordRetriever.fromParts(index, chunks, {}, 'table.bin')).toThrow(IndexFormatError);
    }
  });
});

describe('KeywordRetriever.fromParts over a read index', () => {
  const corpus: Chunk[] = [
    { id: 'a', text: 'solar panels on roofs', metadata: { year: 2020 } },
    { id: 'b', text: 'wind farms at sea', metadata: { year: 2021 } },
    { id: 'c', text: 'solar farms in deserts', metadata: { year: 2022 } },
    { id: 'd', text: 'river water turbines', metadata: { year: 2023 } },
  ];

  it('serves chunks by the index own slots, then takes writes as a retriever built by add', async () => {
    const built = new KeywordRetriever({ analyzer: whitespace });
    built.add(corpus);
    const index = BM25Index.deserialize(built.index.serialize(), { analyzer: whitespace });
    const chunks = corpus.map((chunk) => ({ ...chunk }));
    const restored = KeywordRetriever.fromParts(index, chunks);
    expect(restored.size).toBe(4);
    expect(restored.get('c')).toBe(chunks[2]);
    expect(restored.get('zz')).toBeUndefined();
    expect([...restored.chunks()]).toEqual(corpus);
    const filtered = await restored.retrieve('solar', { k: 5, filter: { year: { $gte: 2021 } } });
    expect(filtered.hits.map((hit) => hit.chunk)).toEqual([corpus[2]]);
    // Writes after the restore: the same results as the retriever that was built by add.
    for (const retriever of [built, restored]) {
      retriever.remove(['a']);
      retriever.add([{ id: 'e', text: 'solar roofs again' }]);
    }
    expect(restored.size).toBe(4);
    expect(restored.get('a')).toBeUndefined();
    expect(restored.get('e')?.text).toBe('solar roofs again');
    expect([...restored.chunks()]).toEqual([...built.chunks()]);
    const after = await restored.retrieve('solar roofs', { k: 5 });
    const expected = await built.retrieve('solar roofs', { k: 5 });
    expect(after.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual(
      expected.hits.map((hit) => [hit.chunk.id, hit.score]),
    );
  });

  it('finds the chunks of a live index whose slots have gaps (removed documents)', () => {
    const built = new KeywordRetriever({ analyzer: whitespace });
    built.add(corpus);
    built.remove(['a']);
    const chunks = [...built.chunks()].map((chunk) => ({ ...chunk }));
    const retriever = KeywordRetriever.fromParts(built.index, chunks);
    expect(retriever.get('b')).toBe(chunks[0]);
    expect(retriever.get('d')).toBe(chunks[2]);
    expect(retriever.get('a')).toBeUndefined();
  });
});
