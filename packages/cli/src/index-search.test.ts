import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSearch, type SearchReport } from './commands/search/index.js';
import { listSources, parseDocumentLine } from './ingest/sources.js';
import { main } from './main.js';
import { readStoreConfig, STORE_CONFIG, type StoreConfig } from './store-folder/store-config.js';
import { openStoreForWriting } from './store-folder/store-folder.js';
import { captureIo, dataRoot, readStore } from './test-helpers.js';

const cranfieldCorpus = join(dataRoot, 'cranfield', 'corpus.jsonl');
const ESC = String.fromCharCode(27);

let tmp: string;
let cranfieldStore: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'zerda-cli-index-'));
  cranfieldStore = join(tmp, 'cranfield');
  const io = captureIo();
  const code = await main(['index', cranfieldCorpus, '--store', cranfieldStore], io);
  if (code !== 0) throw new Error(`indexing Cranfield failed (${code}): ${io.err}`);
}, 120_000);
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('zerda index', () => {
  it('indexes a BEIR corpus into a collection with a config, and reports plain progress lines', async () => {
    const config = JSON.parse(await readFile(join(cranfieldStore, STORE_CONFIG), 'utf8')) as StoreConfig;
    expect(config).toMatchObject({
      format: 'zerda.store',
      version: 2,
      backend: { name: 'memory', options: {} },
      analyzer: { name: 'default' },
      embedder: { name: 'hash', dimension: 256 },
      keyword: { k1: 1.2, b: 0.75 },
      chunking: { unit: 'words', size: 200, overlap: 30 },
    });
    // Cranfield has 1,400 documents, two of them empty; long ones are split.
    const { counts, vectors } = await readStore(cranfieldStore);
    expect(counts.documents).toBe(1398);
    expect(counts.chunks).toBeGreaterThan(1398);
    expect(vectors).toBe(counts.chunks);
    // The collection's file storage: its manifest, snapshot blobs and one log; no lock once closed.
    const entries = await readdir(cranfieldStore);
    expect(entries).toContain('zerda-collection.json');
    expect(entries.filter((name) => name.startsWith('log-'))).toHaveLength(1);
    expect(entries).not.toContain('zerda-collection.lock');
  });

  it('reads folders (txt, md, jsonl), names what it cannot read, and goes on (exit code 3)', async () => {
    const docs = join(tmp, 'docs');
    await mkdir(join(docs, 'guide', '.hidden'), { recursive: true });
    await writeFile(
      join(docs, 'guide', 'install.md'),
      '---\nauthor: someone\n---\n# Installing Zerda\n\nRun pnpm install, then pnpm demo.\n',
    );
    await writeFile(join(docs, 'notes.txt'), 'Reciprocal rank fusion merges rankings.\n');
    await writeFile(join(docs, 'guide', '.hidden', 'secret.md'), 'never indexed');
    await writeFile(join(docs, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    await writeFile(join(docs, 'binary.txt'), Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28]));
    await writeFile(
      join(docs, 'chunks.jsonl'),
      [
        JSON.stringify({
          id: 'c1',
          text: 'Arabic coffee is served in small cups.',
          metadata: { lang: 'en', year: 2021 },
        }),
        '{"id": "c2", "text": }',
        JSON.stringify({ id: 'c3', text: 'قهوة عربية', metadata: { lang: 'ar', year: 2023 } }),
        JSON.stringify({ id: 'c4', text: 42 }),
        '',
      ].join('\n'),
    );
    const store = join(tmp, 'docs-store');
    const io = captureIo();
    const code = await main(['index', docs, join(tmp, 'missing.md'), '--store', store], io);
    expect(code).toBe(3);
    expect(io.err).toMatch(/warning: .*missing\.md: no such file or folder \(skipped\)/);
    expect(io.err).toMatch(/warning: .*binary\.txt: is not UTF-8 text/);
    expect(io.err).toMatch(/warning: .*chunks\.jsonl line 2: not valid JSON at column 22: expected a value/);
    expect(io.err).toMatch(/chunks\.jsonl line 4: 'text' must be a string, got number \(skipped\)/);
    expect(io.out).toMatch(/Indexed 4 documents \(4 chunks\)/);
    expect(io.out).toMatch(/4 problems \(2 files not read, 2 lines skipped\)/);
    expect(io.out).toMatch(/1 files of other types in the folders ignored/);

    const { chunks } = await readStore(store);
    {
      const byId = new Map(chunks.map((chunk) => [chunk.id, chunk]));
      const ids = chunks.map((chunk) => chunk.id).sort();
      expect(ids).toEqual([
        expect.stringMatching(/^\/.*\/docs\/guide\/install\.md$/),
        expect.stringMatching(/^\/.*\/docs\/notes\.txt$/),
        'c1',
        'c3',
      ]);
      const install = chunks.find((chunk) => chunk.id.endsWith('install.md'));
      expect(install?.metadata).toMatchObject({ title: 'Installing Zerda' });
      expect(install?.text.startsWith('# Installing Zerda')).toBe(true);
      expect(byId.get('c3')?.metadata).toEqual({
        source: expect.stringMatching(/chunks\.jsonl$/),
        lang: 'ar',
        year: 2023,
      });
    }
  });

  it('exits 1 when nothing could be read', async () => {
    const io = captureIo();
    expect(await main(['index', join(tmp, 'nothing-here'), '--store', join(tmp, 'empty-store')], io)).toBe(1);
    expect(io.err).toMatch(/nothing-here: no such file or folder/);
    await expect(readStoreConfig(join(tmp, 'empty-store'))).rejects.toThrow(/no zerda store/);
  });

  it('replaces a document indexed again, dropping chunks it no longer has', async () => {
    const file = join(tmp, 'changing.txt');
    const store = join(tmp, 'changing-store');
    const paragraph = (n: number) => `Paragraph ${n} talks about boundary layers at length. `.repeat(4);
    await writeFile(file, [1, 2, 3].map(paragraph).join('\n\n'));
    expect(
      await main(['index', file, '--store', store, '--chunk-size', '40', '--overlap', '0'], captureIo()),
    ).toBe(0);
    const before = (await readStore(store)).chunks.map((c) => c.id);
    expect(before.length).toBe(3);
    expect(before.every((id) => /changing\.txt#\d$/.test(id))).toBe(true);

    await writeFile(file, 'Now a single short paragraph.');
    const io = captureIo();
    expect(await main(['index', file, '--store', store, '--chunk-size', '40', '--overlap', '0'], io)).toBe(0);
    const after = await readStore(store);
    expect(after.chunks.map((c) => c.text)).toEqual(['Now a single short paragraph.']);
    expect(after.vectors).toBe(1);
    expect(after.counts).toEqual({ documents: 1, chunks: 1 });
  });

  it('refuses to add to a store with other settings, and starts afresh with --overwrite', async () => {
    const file = join(tmp, 'one.txt');
    await writeFile(file, 'one document');
    const store = join(tmp, 'settings-store');
    expect(await main(['index', file, '--store', store], captureIo())).toBe(0);
    const io = captureIo();
    expect(await main(['index', file, '--store', store, '--dimension', '64'], io)).toBe(1);
    expect(io.err).toMatch(/built with dimension 256, not 64.*--overwrite/);
    expect(
      await main(['index', file, '--store', store, '--dimension', '64', '--overwrite'], captureIo()),
    ).toBe(0);
    const config = await readStoreConfig(store);
    expect(config.embedder.dimension).toBe(64);
    expect((await readStore(store)).counts).toEqual({ documents: 1, chunks: 1 });
    expect((await readdir(store)).filter((name) => name.startsWith('log-'))).toHaveLength(1);
  });

  it('does not write a store into a folder that holds other files, nor read the store it writes', async () => {
    const folder = join(tmp, 'project');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'readme.md'), '# Project\n\nSome text about wings.');
    const refused = captureIo();
    expect(await main(['index', folder, '--store', folder], refused)).toBe(1);
    expect(refused.err).toMatch(/project is not a zerda store and is not empty \(it holds readme\.md\)/);
    // A store inside the folder being indexed is not read back into itself.
    const store = join(folder, 'store');
    expect(await main(['index', folder, '--store', store], captureIo())).toBe(0);
    expect(await main(['index', folder, '--store', store], captureIo())).toBe(0);
    expect((await readStore(store)).counts).toEqual({ documents: 1, chunks: 1 });
  });

  it('knows its backends, embedders and flags', async () => {
    const file = join(tmp, 'one.txt');
    const unknown = captureIo();
    expect(await main(['index', file, '--store', join(tmp, 'x'), '--backend', 'milvus'], unknown)).toBe(2);
    expect(unknown.err).toMatch(/unknown backend 'milvus': expected one of memory, chroma, faiss, pinecone/);
    const embedder = captureIo();
    expect(await main(['index', file, '--store', join(tmp, 'x'), '--embedder', 'openai'], embedder)).toBe(2);
    expect(embedder.err).toMatch(/unknown embedder 'openai': expected hash/);
    const option = captureIo();
    expect(await main(['index', file, '--store', join(tmp, 'x'), '--backend-option', 'url=x'], option)).toBe(
      2,
    );
    expect(option.err).toMatch(/the memory backend has no option 'url' \(it takes none\)/);
    const overlap = captureIo();
    expect(
      await main(['index', file, '--store', join(tmp, 'x'), '--chunk-size', '10', '--overlap', '6'], overlap),
    ).toBe(2);
    expect(overlap.err).toMatch(/--overlap must be at most half the chunk size \(5\)/);
    const noStore = captureIo();
    expect(await main(['index', file], noStore)).toBe(2);
    expect(noStore.err).toMatch(/--store <dir> is required/);
  });

  it('loads another backend with a dynamic import, or says which package it needs', async () => {
    const file = join(tmp, 'one.txt');
    const io = captureIo();
    const code = await main(['index', file, '--store', join(tmp, 'faiss-store'), '--backend', 'faiss'], io);
    // Where @zerda/faiss is installed and usable this succeeds; otherwise the message says what is
    // missing: the package, or (installed, but faiss-node not built) how to build faiss-node.
    if (code !== 0) {
      expect(code).toBe(1);
      expect(io.err).toMatch(
        /the faiss backend (needs the @zerda\/faiss package|cannot be)|faiss-node could not be loaded .*run `npx zerda-faiss build`/,
      );
      // A backend that failed on its first write says which files were not written.
      if (/faiss-node could not be loaded/.test(io.err)) expect(io.err).toMatch(/not written: .*one\.txt/);
    }
  });

  it('loads postgres the same way, and says what it needs', async () => {
    const file = join(tmp, 'pg.txt');
    await writeFile(file, 'one document');
    const io = captureIo();
    const code = await main(['index', file, '--store', join(tmp, 'pg-store'), '--backend', 'postgres'], io);
    expect(code, io.err).toBe(1);
    expect(io.err).toMatch(
      /the postgres backend (needs the @zerda\/postgres package|needs a server \(--backend-option url=)/,
    );
    const option = captureIo();
    expect(
      await main(
        ['index', file, '--store', join(tmp, 'x'), '--backend', 'postgres', '--backend-option', 'host=h'],
        option,
      ),
    ).toBe(2);
    expect(option.err).toMatch(/the postgres backend has no option 'host' \(it takes url, pglite, table\)/);
  });

  it('draws a progress bar on a terminal', async () => {
    const io = Object.assign(captureIo(), { stderrIsTTY: true, columns: 100 });
    const part = join(tmp, 'part.jsonl');
    await writeFile(part, (await readFile(cranfieldCorpus, 'utf8')).split('\n').slice(0, 300).join('\n'));
    const code = await main(['index', part, '--store', join(tmp, 'tty-store'), '--batch-size', '100'], io);
    expect(code).toBe(0);
    const bar = /indexing ▕[█▏▎▍▌▋▊▉ ]+▏ +\d+% {2}[\d,]+ docs {2}[\d,]+ chunks {2}[\d,]+ chunks\/s/;
    expect(io.err).toMatch(new RegExp(`\r${ESC}\\[2K${bar.source}`));
    expect(io.err).not.toMatch(/committed batch/);
  });

  it('reads a BEIR line and a Zerda chunk line; lists sources in name order, skipping queries.jsonl beside a corpus', async () => {
    expect(parseDocumentLine('{"_id": 7, "title": "T", "text": "body"}', 's')).toEqual({
      document: { id: '7', text: 'T body', title: 'T', source: 's' },
    });
    expect(parseDocumentLine('{"id": "a", "content": "x", "docId": "d"}', 's')).toEqual({
      document: { id: 'a', text: 'x', docId: 'd', source: 's' },
    });
    expect(parseDocumentLine('[1]', 's')).toEqual({ problem: expect.stringMatching(/JSON object/) });
    const listing = await listSources([join(dataRoot, 'cranfield')]);
    expect(listing.files.map((file) => file.path.split('/').pop())).toEqual(['corpus.jsonl']);
    expect(listing.ignored).toBeGreaterThanOrEqual(1);
  });
});

describe('zerda search', () => {
  it('prints a table with highlighted snippets and per-branch explanations (--explain)', async () => {
    const io = captureIo();
    const code = await main(
      ['search', 'boundary layer heat transfer', '--store', cranfieldStore, '--explain', '-k', '5'],
      io,
    );
    expect(io.err).toBe('');
    expect(code).toBe(0);
    expect(io.out).toMatch(
      /^hybrid \(weighted\) search for "boundary layer heat transfer": 5 hits \(of \d+ candidates\) in [\d.]+ ms \(store: 1,398 documents, [\d,]+ chunks\)\n/,
    );
    expect(io.out).toMatch(/\n#\s+score\s+id\s+source\s+snippet\n/);
    expect(io.out).toMatch(
      /\n1 {2}\d\.\d{3} {2}\S+ +\S*corpus\.jsonl +.*\[(?:heat|transfer|boundary|layer)\]/,
    );
    expect(io.out).toMatch(/keyword +#\d+ +score \d\.\d{3} +\(BM25 \d+\.\d{4}\)/);
    expect(io.out).toMatch(/vector +(#\d+ +score|not in its top)/);
    expect(io.out).toMatch(/fused +\d\.\d{4} = weighted arithmetic of minmax-normalised scores/);
    expect(io.out).not.toContain(`${ESC}[`);
  });

  it('highlights with ANSI bold when standard output takes colours', async () => {
    const io = Object.assign(captureIo(), { stdoutIsTTY: true, color: true, columns: 120 });
    expect(await main(['search', 'heat transfer', '--store', cranfieldStore, '-k', '2'], io)).toBe(0);
    expect(io.out).toMatch(new RegExp(`${ESC}\\[1m(heat|transfer)${ESC}\\[22m`));
  });

  it('prints JSON that parses, in each mode', async () => {
    for (const mode of ['hybrid', 'keyword', 'vector'] as const) {
      const io = captureIo();
      expect(
        await main(
          ['search', 'boundary layer heat transfer', '--store', cranfieldStore, '--mode', mode, '--json'],
          io,
        ),
      ).toBe(0);
      const report = JSON.parse(io.out) as SearchReport;
      expect(report.mode).toBe(mode);
      expect(report.hits).toHaveLength(10);
      expect(report.hits[0]).toMatchObject({ rank: 1, source: expect.stringMatching(/corpus\.jsonl$/) });
      for (const hit of report.hits) {
        expect(hit.score).toBeGreaterThanOrEqual(0);
        expect(hit.score).toBeLessThanOrEqual(1 + 1e-9);
        expect(typeof hit.text).toBe('string');
      }
      expect(report.storeCounts.documents).toBe(1398);
    }
  });

  it('filters on metadata in every branch', async () => {
    const report = await runSearch({
      store: cranfieldStore,
      query: 'boundary layer',
      filter: { chunk: { $gte: 2 } },
      explain: true,
    });
    expect(report.hits.length).toBeGreaterThan(0);
    for (const hit of report.hits) {
      expect(hit.metadata.chunk).toBeGreaterThanOrEqual(2);
      expect(hit.id).toMatch(/#\d+$/);
    }
    expect(Object.keys(report.hits[0]?.branches ?? {})).toEqual(['keyword', 'vector']);
  });

  it('answers from the last snapshot, and says so, while another writer holds the store', async () => {
    const store = join(tmp, 'held-store');
    await writeFile(join(tmp, 'held.txt'), 'Shock waves meet the boundary layer.');
    expect(await main(['index', join(tmp, 'held.txt'), '--store', store], captureIo())).toBe(0);
    const writer = await openStoreForWriting(store, {
      backend: 'memory',
      backendOptions: {},
      analyzer: 'default',
      dimension: 256,
      k1: 1.2,
      b: 0.75,
      chunking: { size: 200, overlap: 30 },
    });
    try {
      // Added but not yet snapshotted: durable in the log, which a reader skips while the writer holds it.
      await writer.collection.add([{ id: 'late', text: 'A late note about shock waves.' }]);
      const report = await runSearch({ store, query: 'shock waves', mode: 'keyword' });
      expect(report.hits.map((hit) => hit.id)).toEqual([expect.stringMatching(/held\.txt$/)]);
      expect(report.warnings).toEqual([
        expect.stringMatching(/another process \(process \d+ on .*\) holds the store: .*last snapshot/),
      ]);
    } finally {
      await writer.close();
    }
    const after = await runSearch({ store, query: 'shock waves', mode: 'keyword' });
    expect(after.hits).toHaveLength(2);
    expect(after.warnings).toEqual([]);
  });

  it('says where a --filter is not JSON, and which part of it is not a filter', async () => {
    const json = captureIo();
    expect(await main(['search', 'heat', '--store', cranfieldStore, '--filter', '{"year": }'], json)).toBe(2);
    expect(json.err).toContain('--filter is not valid JSON at position 9: expected a value');
    expect(json.err).toContain('  {"year": }\n           ^');
    const filter = captureIo();
    expect(
      await main(['search', 'heat', '--store', cranfieldStore, '--filter', '{"year": {"$gtx": 3}}'], filter),
    ).toBe(2);
    expect(filter.err).toMatch(/--filter: Invalid filter at 'year\.\$gtx'/);
  });

  it('says when there is no store, and how to make one', async () => {
    const io = captureIo();
    expect(await main(['search', 'heat', '--store', join(tmp, 'nowhere')], io)).toBe(1);
    expect(io.err).toMatch(
      /no zerda store at .*nowhere \(zerda-store\.json not found\); create one with: zerda index/,
    );
  });

  it('refuses bad calls', async () => {
    const words = captureIo();
    expect(await main(['search', 'heat', 'transfer', '--store', cranfieldStore], words)).toBe(2);
    expect(words.err).toMatch(/put the query in quotes \("heat transfer"\)/);
    const mode = captureIo();
    expect(await main(['search', 'heat', '--store', cranfieldStore, '--mode', 'dense'], mode)).toBe(2);
    expect(mode.err).toMatch(/unknown mode 'dense'/);
  });
});

describe('--help', () => {
  it('every command has help with an example', async () => {
    for (const command of ['index', 'search', 'eval', 'fuse', 'demo', 'bench']) {
      const io = captureIo();
      expect(await main([command, '--help'], io)).toBe(0);
      expect(io.out).toMatch(new RegExp(`^Usage: zerda ${command}`));
      expect(io.out).toMatch(/Examples?:\n {2}pnpm zerda /);
      expect(io.out).toMatch(/Exit codes:/);
    }
  });
});
