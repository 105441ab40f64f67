import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IndexFormatError } from '../errors/index.js';
import type { Chunk, SearchResult } from '../model/index.js';
import { HashEmbedder } from '../vector/embedders/index.js';
import { InMemoryVectorStore } from '../vector/in-memory-vector-store.js';
import { chunkTableVersion, decodeChunkTable, encodeChunks, encodeChunkTable } from './chunk-table.js';
import { type CollectionSettings, openCollection } from './collection.js';
import { createFileStorage } from './file-storage.js';
import { type BlobSource, bytesSource, type CollectionStorage, createMemoryStorage } from './storage.js';

const embedder = new HashEmbedder({ dimension: 32 });
const folders: string[] = [];

afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'zerda-snapshot-'));
  folders.push(path);
  return path;
}

function corpus(size: number): Chunk[] {
  return Array.from({ length: size }, (_, i) => ({
    id: `c${i}`,
    text: `${['solar panels', 'wind farms', 'river water'][i % 3]} report ${i}`,
    ...(i % 2 === 0 ? { docId: `doc${i % 5}` } : {}),
    ...(i % 3 === 0 ? { metadata: { year: 2000 + i, tags: ['a', 'b'], open: i % 2 === 0 } } : {}),
  }));
}

/** The collection saved in `directory` (the file storage), opened over a new in-memory store. */
function openFolder(directory: string, settings: Pick<CollectionSettings, 'analyzer'> = {}) {
  return openCollection({
    store: new InMemoryVectorStore({ embedder }),
    storage: createFileStorage(directory),
    ...settings,
  });
}

/**
 * A new folder holding a collection of the first `size` chunks of the corpus, all in its snapshot
 * (a close alone would leave so short a log for the next open to replay).
 */
async function savedFolder(size: number): Promise<string> {
  const directory = await folder();
  const collection = await openFolder(directory);
  await collection.add(corpus(size));
  await collection.checkpoint();
  await collection.close();
  return directory;
}

/** The storage's snapshot and log, with its lock made reusable (a second opener in one test). */
function reopenable(storage: CollectionStorage): CollectionStorage {
  return { ...storage, lock: async () => ({ release: async () => {} }) };
}

describe('collection chunk table', () => {
  const chunks: Chunk[] = [
    { id: 'a', text: 'plain text' },
    { id: 'b', text: 'ünïcödé — 漢字 😀', docId: 'd1' },
    { id: 'c', text: '', metadata: { year: 2024, tags: ['x'], ok: true, name: 'n' } },
    { id: 'd', text: 'both', docId: 'd2', metadata: { n: 1.5 } },
  ];

  const ids = (list: readonly Chunk[]) => list.map((chunk) => chunk.id);

  /** `list` through a table of the current version and its texts blob, read back. */
  const roundTrip = (list: readonly Chunk[]): Chunk[] => {
    const { table, texts } = encodeChunks(list);
    expect(chunkTableVersion(table, 'test')).toBe(3);
    return decodeChunkTable(table, 'test', ids(list), bytesSource(texts));
  };

  it('reads back what it wrote, optional fields included, its ids given back and its texts apart (version 3)', () => {
    expect(roundTrip(chunks)).toEqual(chunks);
    expect(roundTrip([])).toEqual([]);
    const arabic = [{ id: 'ar', text: 'المكتبة الوطنية في القاهرة 📚', metadata: { لغة: 'عربية' } }];
    expect(roundTrip(arabic)).toEqual(arabic);
    // The texts are not in the table: they are read from the texts blob.
    const { table, texts } = encodeChunks(chunks);
    expect(new TextDecoder().decode(texts)).toBe(chunks.map((chunk) => chunk.text).join(''));
    expect(new TextDecoder().decode(table)).not.toContain('plain text');
  });

  it('copies the stored bytes of chunks read from a table when it writes them again, and encodes the others', () => {
    const many: Chunk[] = [
      ...chunks,
      { id: 'e', text: 'half \ud83d stored as JSON' },
      ...Array.from({ length: 6 }, (_, i) => ({ id: `m${i}`, text: `ünï ${'漢字😀'.repeat(i)} ${i}` })),
    ];
    const first = encodeChunks(many);
    const stored = decodeChunkTable(first.table, 'first', ids(many), bytesSource(first.texts));
    // Runs broken by a removal, a reorder, a text set by a caller and a new chunk.
    (stored[4] as Chunk).text = 'set by a caller';
    const next: Chunk[] = [
      stored[0],
      stored[1],
      stored[3],
      stored[4],
      { id: 'new', text: 'a new chunk 漢' },
      stored[6],
      stored[5],
      stored[7],
      stored[8],
      stored[9],
    ] as Chunk[];
    const expected = next.map((chunk) => ({ ...chunk }));
    const second = encodeChunks(next);
    expect(decodeChunkTable(second.table, 'second', ids(next), bytesSource(second.texts))).toEqual(expected);
    // The same bytes as writing plain copies of them.
    const plain = encodeChunks(expected);
    expect(Buffer.from(second.texts).equals(Buffer.from(plain.texts))).toBe(true);
    expect(Buffer.from(second.table).equals(Buffer.from(plain.table))).toBe(true);
    // Chunks stored one after another are copied in one read, none decoded.
    let reads = 0;
    const counted = decodeChunkTable(first.table, 'first', ids(many), {
      byteLength: first.texts.byteLength,
      read: (offset, length) => {
        reads++;
        return first.texts.subarray(offset, offset + length);
      },
    });
    // (Opening read the one text stored as JSON, to check it.)
    expect(reads).toBe(1);
    expect(Buffer.from(encodeChunks(counted).texts).equals(Buffer.from(first.texts))).toBe(true);
    expect(reads).toBe(2);
    // A copied text keeps its checksum: damage in the first blob is still found in the second.
    const damaged = first.texts.slice();
    damaged[damaged.length - 1] = (damaged[damaged.length - 1] as number) ^ 0x01;
    const fromDamaged = decodeChunkTable(first.table, 'first', ids(many), bytesSource(damaged));
    const copied = encodeChunks(fromDamaged.slice(5));
    const reread = decodeChunkTable(copied.table, 'copied', ids(many.slice(5)), bytesSource(copied.texts));
    expect(reread[0]?.text).toBe(many[5]?.text);
    expect(() => reread.at(-1)?.text).toThrow(/does not match its checksum/);
  });

  it('reads a table of version 2 (texts among its strings)', () => {
    const older = encodeChunkTable(chunks, 2);
    expect(chunkTableVersion(older, 'test')).toBe(2);
    expect(decodeChunkTable(older, 'test', ids(chunks))).toEqual(chunks);
    expect(decodeChunkTable(encodeChunkTable([], 2), 'test', [])).toEqual([]);
  });

  it('reads a table of version 1, which holds its own ids', () => {
    const older = encodeChunkTable(chunks, 1);
    expect(chunkTableVersion(older, 'test')).toBe(1);
    expect(decodeChunkTable(older, 'test')).toEqual(chunks);
    // Version 1 ids win over any given: they are the table's own.
    expect(decodeChunkTable(older, 'test', ['w', 'x', 'y', 'z'])).toEqual(chunks);
  });

  it('keeps a lone surrogate as it was, in a text or in another string', () => {
    const odd = [{ id: 'x', text: 'half \ud83d of an emoji' }, ...chunks];
    expect(roundTrip(odd)).toEqual(odd);
    const oddDocId = [...chunks, { id: 'y', text: 'fine', docId: 'half \udc00' }];
    expect(roundTrip(oddDocId)).toEqual(oddDocId);
    expect(decodeChunkTable(encodeChunkTable(odd, 2), 'test', ids(odd))).toEqual(odd);
    expect(decodeChunkTable(encodeChunkTable(odd, 1), 'test')).toEqual(odd);
  });

  it('gives chunks whose text reads, spreads, serializes and compares as a plain one, read from the blob each time', () => {
    const { table, texts } = encodeChunks(chunks);
    let reads = 0;
    const counting: BlobSource = {
      byteLength: texts.byteLength,
      read: (offset, length) => {
        reads++;
        return texts.subarray(offset, offset + length);
      },
    };
    const stored = decodeChunkTable(table, 'test', ids(chunks), counting);
    expect(reads).toBe(0);
    const second = stored[1] as Chunk;
    expect(second.text).toBe('ünïcödé — 漢字 😀');
    expect(reads).toBe(1);
    expect({ ...second }).toEqual({ id: 'b', text: 'ünïcödé — 漢字 😀', docId: 'd1' });
    expect(Object.keys(second)).toEqual(['id', 'text', 'docId']);
    expect(JSON.parse(JSON.stringify(stored))).toEqual(chunks);
    expect(structuredClone(stored)).toEqual(chunks);
    // A text set by a caller is kept, as on any object.
    second.text = 'changed';
    expect(second.text).toBe('changed');
    expect({ ...second }.text).toBe('changed');
  });

  it('refuses ids that are not those it was written with, in the same order', () => {
    const { table, texts } = encodeChunks(chunks);
    for (const [bytes, source] of [
      [table, bytesSource(texts)],
      [encodeChunkTable(chunks, 2), undefined],
    ] as const) {
      const refusal = (given: string[] | undefined) => {
        try {
          decodeChunkTable(bytes, 'where', given, source);
        } catch (error) {
          expect(IndexFormatError.isInstance(error)).toBe(true);
          return (error as Error).message;
        }
        throw new Error('accepted ids that do not match');
      };
      expect(refusal(undefined)).toMatch(/none were given/);
      expect(refusal(['a', 'b', 'c'])).toMatch(/holds 4 chunks and the keyword index 3/);
      expect(refusal(['b', 'a', 'c', 'd'])).toMatch(/does not match the keyword index/);
      expect(refusal(['a', 'b', 'c', 'e'])).toMatch(/does not match the keyword index/);
      // A boundary moved between two ids changes the digest too.
      expect(refusal(['ab', '', 'c', 'd'])).toMatch(/does not match the keyword index/);
    }
  });

  /** The message of the IndexFormatError that decoding `table` (with `texts`) throws. */
  const refused = (table: Uint8Array, texts?: BlobSource): string => {
    try {
      decodeChunkTable(table, 'where', ids(chunks), texts);
    } catch (error) {
      expect(IndexFormatError.isInstance(error)).toBe(true);
      return (error as Error).message;
    }
    throw new Error('accepted a damaged table');
  };

  it('refuses a truncated table, a foreign one, a wrong version and damaged lengths (version 2)', () => {
    const bytes = encodeChunkTable(chunks, 2);
    expect(refused(bytes.subarray(0, bytes.byteLength - 3))).toMatch(/truncated/);
    expect(refused(bytes.subarray(0, 10))).toMatch(/too short/);
    const foreign = bytes.slice();
    foreign[0] = 0;
    expect(refused(foreign)).toMatch(/magic/);
    const version = bytes.slice();
    new DataView(version.buffer).setUint32(8, 9, true);
    expect(refused(version)).toMatch(/version 9; this version of Zerda reads 1 to 3/);
    // A flipped bit in the first string's length: the lengths no longer add up to the text.
    const lengthsAt = 28 + 4;
    const flipped = bytes.slice();
    flipped[lengthsAt] = (flipped[lengthsAt] as number) ^ 0x04;
    expect(refused(flipped)).toMatch(/do not add up/);
    const count = bytes.slice();
    new DataView(count.buffer).setUint32(12, 5, true);
    expect(refused(count)).toMatch(/header says/);
    // The header made to count one byte fewer of text, and the last byte left out: a UTF-8
    // sequence cut at the end.
    const cut = encodeChunkTable([{ id: 'a', text: 'ends in 漢' }], 2).slice(0, -1);
    const cutView = new DataView(cut.buffer);
    cutView.setUint32(20, cutView.getUint32(20, true) - 1, true);
    try {
      decodeChunkTable(cut, 'where', ['a']);
      throw new Error('accepted a cut sequence');
    } catch (error) {
      expect((error as Error).message).toMatch(/not UTF-8/);
    }
    // In a table of version 1 (its own ids), the structure is what says the count is wrong.
    const olderCount = encodeChunkTable(chunks, 1);
    new DataView(olderCount.buffer).setUint32(12, 5, true);
    expect(refused(olderCount)).toMatch(/header says|count/);
  });

  it('refuses a damaged table of version 3, a texts blob of another size, and none at all', () => {
    const { table, texts } = encodeChunks(chunks);
    const source = bytesSource(texts);
    expect(refused(table.subarray(0, table.byteLength - 3), source)).toMatch(/truncated/);
    expect(refused(table.subarray(0, 20), source)).toMatch(/too short/);
    const count = table.slice();
    new DataView(count.buffer).setUint32(12, 5, true);
    expect(refused(count, source)).toMatch(/header says/);
    // Text offsets: the second made smaller than the first (they go back).
    const endsAt = 32 + 4 + 4 * 4;
    const back = table.slice();
    new DataView(back.buffer).setUint32(endsAt + 4, 1, true);
    expect(refused(back, source)).toMatch(/go back at chunk 1/);
    const unknown = table.slice();
    unknown[32 + 2] = 0x40;
    expect(refused(unknown, source)).toMatch(/unknown flags on chunk 2/);
    expect(refused(table, bytesSource(texts.subarray(1)))).toMatch(/texts blob is/);
    expect(refused(table)).toMatch(/'chunk-texts' blob, and there is none/);
  });

  it("says which chunk's text is damaged when it is read", () => {
    const { table, texts } = encodeChunks(chunks);
    const damaged = texts.slice();
    damaged[0] = (damaged[0] as number) ^ 0x20;
    const stored = decodeChunkTable(table, 'where', ids(chunks), bytesSource(damaged));
    expect(stored[1]?.text).toBe(chunks[1]?.text);
    let error: unknown;
    try {
      void stored[0]?.text;
    } catch (caught) {
      error = caught;
    }
    expect(IndexFormatError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/chunk 0 does not match its checksum/);
  });
});

/**
 * Opens a collection over `storage` (holding an older snapshot), checks it holds `chunks` and ranks
 * `query` as `before`, closes it, and checks that the snapshot was written again as version 5
 * (chunk table version 3, its texts apart). Returns that snapshot.
 */
async function reopensAsCurrent(
  storage: CollectionStorage,
  chunks: Chunk[],
  query: string,
  before: SearchResult,
): Promise<Map<string, Uint8Array>> {
  const second = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
  expect(await second.get(chunks.map((chunk) => chunk.id))).toEqual(chunks);
  const after = await second.retrieve(query, { k: 5 });
  expect(after.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual(
    before.hits.map((hit) => [hit.chunk.id, hit.score]),
  );
  await second.close();
  const rewritten = (await storage.readSnapshot())!;
  expect(JSON.parse(new TextDecoder().decode(rewritten.get('state'))).version).toBe(5);
  expect(chunkTableVersion(rewritten.get('chunks')!, 'memory')).toBe(3);
  expect(rewritten.has('chunk-texts')).toBe(true);
  return rewritten;
}

describe('collection snapshot formats', () => {
  it('refuses a snapshot blob with a flipped bit (the file storage checks a CRC-32 per blob)', async () => {
    const directory = await savedFolder(20);
    const manifest = JSON.parse(await readFile(join(directory, 'zerda-collection.json'), 'utf8'));
    expect(manifest.version).toBe(2);
    expect(typeof manifest.blobs.chunks.crc32).toBe('number');
    for (const key of ['chunks', 'vector-arena']) {
      const path = join(directory, manifest.blobs[key].file);
      const original = await readFile(path);
      const flipped = Buffer.from(original);
      flipped[flipped.length >> 1] = (flipped[flipped.length >> 1] as number) ^ 0x10;
      await writeFile(path, flipped);
      const error = await openFolder(directory).catch((e: unknown) => e);
      expect(IndexFormatError.isInstance(error), key).toBe(true);
      expect((error as Error).message).toMatch(new RegExp(`'${key}' blob does not match`));
      await writeFile(path, original);
    }
    // A blob the file system cannot open (a symbolic link to itself): said so, with its code.
    const chunksPath = join(directory, manifest.blobs.chunks.file);
    const chunksBytes = await readFile(chunksPath);
    await rm(chunksPath);
    await symlink(chunksPath, chunksPath);
    const looped = await openFolder(directory).catch((e: unknown) => e);
    expect(IndexFormatError.isInstance(looped)).toBe(true);
    expect((looped as Error).message).toMatch(
      /'chunks' blob named by the manifest could not be opened \(ELOOP\)/,
    );
    await rm(chunksPath);
    await writeFile(chunksPath, chunksBytes);
    const again = await openFolder(directory);
    expect(await again.count()).toBe(20);
    await again.close();
  });

  it('hands a deferred blob over unread, as a source that reads ranges and outlives later snapshots', async () => {
    const directory = await folder();
    const storage = createFileStorage(directory);
    const big = new Uint8Array(3 * 1024 * 1024 + 5);
    for (let i = 0; i < big.length; i += 7) big[i] = (i * 7919) & 0xff;
    await storage.commitSnapshot(
      new Map([
        ['big', big],
        ['small', Uint8Array.from([1, 2, 3])],
      ]),
    );
    let source: BlobSource | undefined;
    const read = (await storage.readSnapshot({
      defer: (key, byteLength) => {
        expect(byteLength).toBe(key === 'big' ? big.byteLength : 3);
        return key === 'big'
          ? (given) => {
              source = given;
            }
          : undefined;
      },
    }))!;
    expect([...read.keys()]).toEqual(['small']);
    expect(source?.byteLength).toBe(big.byteLength);
    const ranges = [
      [0, 10],
      [1_000_000, 70_000],
      [big.byteLength - 5, 5],
      [17, 0],
    ];
    const check = () => {
      for (const [offset, length] of ranges as Array<[number, number]>) {
        const bytes = (source as BlobSource).read(offset, length);
        expect(Buffer.from(bytes).equals(Buffer.from(big.subarray(offset, offset + length)))).toBe(true);
      }
    };
    check();
    // A later snapshot removes the blob's file: the source still reads what it was opened on.
    await storage.commitSnapshot(new Map([['small', Uint8Array.from([4])]]));
    expect((await readdir(directory)).filter((name) => name.startsWith('blob-big-'))).toEqual([]);
    check();
    let error: unknown;
    try {
      (source as BlobSource).read(big.byteLength - 2, 5);
    } catch (caught) {
      error = caught;
    }
    expect(IndexFormatError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/'big' blob ends before the 5 bytes read at/);
    // The memory storage reads nothing later: it returns every blob whole.
    const memory = createMemoryStorage();
    await memory.commitSnapshot(new Map([['big', big]]));
    const whole = await memory.readSnapshot({ defer: () => () => {} });
    expect(whole?.get('big')?.byteLength).toBe(big.byteLength);
  });

  it('reads blobs smallest first and hands each to onRead, the same bytes it returns', async () => {
    const directory = await folder();
    const storage = createFileStorage(directory);
    const sized = (n: number) => {
      const bytes = new Uint8Array(n);
      for (let i = 0; i < n; i++) bytes[i] = (i * 31 + n) & 0xff;
      return bytes;
    };
    await storage.commitSnapshot(
      new Map([
        ['large', sized(9 * 1024 * 1024)],
        ['empty', sized(0)],
        ['small', sized(10)],
        ['middle', sized(5000)],
        ['later', sized(20)],
      ]),
    );
    const announced: Array<[string, Uint8Array]> = [];
    const read = (await storage.readSnapshot({
      onRead: (key, bytes) => announced.push([key, bytes]),
      defer: (key) => (key === 'later' ? () => {} : undefined),
    }))!;
    expect(announced.map(([key]) => key)).toEqual(['empty', 'small', 'middle', 'large']);
    for (const [key, bytes] of announced) {
      expect(read.get(key)).toBe(bytes);
      expect(Buffer.from(bytes).equals(Buffer.from(sized(bytes.byteLength)))).toBe(true);
    }
    expect([...read.keys()].sort()).toEqual(['empty', 'large', 'middle', 'small']);
  });

  it('reports a damaged keyword index after the checks of the state, as a typed error, when it is decoded as it is read', async () => {
    const directory = await savedFolder(8);
    const storage = createFileStorage(directory);
    const blobs = (await storage.readSnapshot())!;
    // Checksums right (the storage takes them anew), the index's own structure wrong.
    const index = blobs.get('keyword-index')!;
    blobs.set('keyword-index', index.subarray(0, index.byteLength >> 1));
    await storage.commitSnapshot(blobs);
    const damaged = await openFolder(directory).catch((e: unknown) => e);
    expect(IndexFormatError.isInstance(damaged)).toBe(true);
    expect((damaged as Error).message).toMatch(/BM25 index/);
    // A collection opened with another analyzer is told so first, as before.
    const other = await openFolder(directory, {
      analyzer: { name: 'other', analyze: (text) => text.split(' ') },
    }).catch((e: unknown) => e);
    expect((other as Error).message).toMatch(/analyzer/);
    expect((other as Error).message).not.toMatch(/BM25 index/);
  });

  it('opens a collection whose texts blob is damaged, and says so when a damaged text is read; refuses one cut short', async () => {
    const directory = await savedFolder(20);
    const manifest = JSON.parse(await readFile(join(directory, 'zerda-collection.json'), 'utf8'));
    const path = join(directory, manifest.blobs['chunk-texts'].file);
    const original = await readFile(path);
    // The last text's last byte: chunk 19 is damaged, the others are not.
    const flipped = Buffer.from(original);
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 0x01;
    await writeFile(path, flipped);
    const opened = await openFolder(directory);
    const [healthy, damaged] = await opened.get(['c3', 'c19']);
    expect(healthy?.text).toBe(corpus(20)[3]?.text);
    let error: unknown;
    try {
      void damaged?.text;
    } catch (caught) {
      error = caught;
    }
    expect(IndexFormatError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/chunk 19 does not match its checksum/);
    await opened.close();
    await writeFile(path, original.subarray(0, original.length - 1));
    const cut = await openFolder(directory).catch((e: unknown) => e);
    expect(IndexFormatError.isInstance(cut)).toBe(true);
    expect((cut as Error).message).toMatch(/'chunk-texts' blob does not match the manifest/);
  });

  it('reads a folder written with SHA-256 blobs (storage version 1) and rewrites it as version 2', async () => {
    const directory = await folder();
    const first = await openFolder(directory);
    await first.add(corpus(12));
    const before = await first.retrieve('wind report', { k: 5 });
    await first.close();
    const manifestPath = join(directory, 'zerda-collection.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
    for (const reference of Object.values(manifest.blobs) as Array<Record<string, unknown>>) {
      const data = await readFile(join(directory, reference.file as string));
      delete reference.crc32;
      reference.sha256 = createHash('sha256').update(data).digest('hex');
    }
    manifest.version = 1;
    await writeFile(manifestPath, JSON.stringify(manifest));
    const second = await openFolder(directory);
    const after = await second.retrieve('wind report', { k: 5 });
    expect(after.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual(
      before.hits.map((hit) => [hit.chunk.id, hit.score]),
    );
    await second.close();
    expect(JSON.parse(await readFile(manifestPath, 'utf8')).version).toBe(2);
    expect((await readdir(directory)).filter((name) => name.startsWith('blob-')).length).toBe(5);
  });

  it('reads a version 1 snapshot (chunks as JSON lines) and writes version 5 on the next snapshot', async () => {
    const storage = createMemoryStorage();
    const store = new InMemoryVectorStore({ embedder });
    const first = await openCollection({ store, storage });
    await first.add(corpus(15));
    const before = await first.retrieve('solar', { k: 5 });
    const rows = store.snapshot()!.vectors;
    await first.close();
    // The same snapshot as version 1 wrote it: vectors as float32 rows in the chunks' order.
    const blobs = (await storage.readSnapshot())!;
    const chunks = decodeChunkTable(
      blobs.get('chunks')!,
      'memory',
      corpus(15).map((chunk) => chunk.id),
      bytesSource(blobs.get('chunk-texts')!),
    );
    const state = JSON.parse(new TextDecoder().decode(blobs.get('state')));
    blobs.delete('vector-arena');
    blobs.set('vectors', new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength));
    blobs.delete('chunks');
    blobs.delete('chunk-texts');
    blobs.set(
      'keyword-chunks',
      new TextEncoder().encode(chunks.map((chunk) => JSON.stringify(chunk)).join('\n')),
    );
    blobs.set('state', new TextEncoder().encode(JSON.stringify({ ...state, version: 1 })));
    await storage.commitSnapshot(blobs);
    const rewritten = await reopensAsCurrent(storage, chunks, 'solar', before);
    expect(rewritten.has('keyword-chunks')).toBe(false);
    expect(rewritten.has('vectors')).toBe(false);
    expect(rewritten.has('vector-arena')).toBe(true);
  });

  for (const [stateVersion, tableVersion] of [
    [3, 1],
    [4, 2],
  ] as const) {
    it(`reads a version ${stateVersion} snapshot (chunk table version ${tableVersion}, texts inside) and writes version 5 on the next snapshot`, async () => {
      const storage = createMemoryStorage();
      const first = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
      await first.add(corpus(15));
      await first.delete(['c2', 'c7']);
      const before = await first.retrieve('wind report', { k: 5 });
      await first.close();
      // The same snapshot as that version wrote it.
      const blobs = (await storage.readSnapshot())!;
      const kept = corpus(15)
        .map((chunk) => chunk.id)
        .filter((id) => id !== 'c2' && id !== 'c7');
      const chunks = decodeChunkTable(
        blobs.get('chunks')!,
        'memory',
        kept,
        bytesSource(blobs.get('chunk-texts')!),
      );
      const state = JSON.parse(new TextDecoder().decode(blobs.get('state')));
      expect(state.version).toBe(5);
      blobs.set('chunks', encodeChunkTable(chunks, tableVersion));
      blobs.delete('chunk-texts');
      blobs.set('state', new TextEncoder().encode(JSON.stringify({ ...state, version: stateVersion })));
      await storage.commitSnapshot(blobs);
      await reopensAsCurrent(storage, chunks, 'wind report', before);
    });
  }

  it("refuses a chunk table whose ids or order are not the keyword index's", async () => {
    const storage = createMemoryStorage();
    const first = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
    await first.add(corpus(6));
    await first.close();
    const saved = (await storage.readSnapshot())!;
    const chunks = decodeChunkTable(
      saved.get('chunks')!,
      'memory',
      corpus(6).map((chunk) => chunk.id),
      bytesSource(saved.get('chunk-texts')!),
    );
    const renamed = chunks.map((chunk, i) => ({ ...chunk, id: i === 3 ? 'other' : chunk.id }));
    for (const { table, texts } of [encodeChunks([...chunks].reverse()), encodeChunks(renamed)]) {
      const blobs = new Map(saved);
      blobs.set('chunks', table);
      blobs.set('chunk-texts', texts);
      await storage.commitSnapshot(blobs);
      const error = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage }).catch(
        (e: unknown) => e,
      );
      expect(IndexFormatError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/does not match the keyword index's ids/);
    }
  });

  it('refuses a snapshot of a version it does not know, naming it', async () => {
    const storage = createMemoryStorage();
    const first = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
    await first.add(corpus(3));
    await first.close();
    const blobs = (await storage.readSnapshot())!;
    const state = JSON.parse(new TextDecoder().decode(blobs.get('state')));
    blobs.set('state', new TextEncoder().encode(JSON.stringify({ ...state, version: 7 })));
    await storage.commitSnapshot(blobs);
    const error = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage }).catch(
      (e: unknown) => e,
    );
    expect(IndexFormatError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/version 7/);
  });
});

describe('memory storage', () => {
  it('holds no log beside a store that keeps nothing, and reopens from the snapshot taken on close', async () => {
    const storage = createMemoryStorage();
    expect(storage.volatile).toBe(true);
    const first = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage,
      checkpointEvery: 1,
    });
    await first.add(corpus(30));
    await first.delete(['c3', 'c4']);
    // No second copy of the vectors (nor of the texts) in a log.
    expect(await storage.readLog()).toEqual([]);
    const before = await first.retrieve('river report', { k: 6 });
    await first.close();
    const second = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
    expect(await second.count()).toBe(28);
    expect((await second.get(['c3', 'c4', 'c5'])).map((chunk) => chunk.id)).toEqual(['c5']);
    const after = await second.retrieve('river report', { k: 6 });
    expect(after.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual(
      before.hits.map((hit) => [hit.chunk.id, hit.score]),
    );
    await second.close();
  });

  it('still logs where a storage is durable', async () => {
    const storage = reopenable(createMemoryStorage());
    const durable: CollectionStorage = { ...storage, volatile: false };
    const first = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage: durable });
    await first.add(corpus(4));
    expect((await durable.readLog()).length).toBe(1);
    // Not closed: a second opener replays the log, vectors included.
    const second = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage: durable });
    expect(await second.count()).toBe(4);
    expect((await second.retrieve('solar', { mode: 'vector', k: 1 })).hits[0]!.score).toBeGreaterThan(0);
  });
});
