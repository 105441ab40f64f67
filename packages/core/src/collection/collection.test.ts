import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BatchWriteError,
  FilterError,
  IndexFormatError,
  InvalidArgumentError,
  StorageLockedError,
} from '../errors/index.js';
import { nativeFilter, zerdaFilterConvention } from '../filter/index.js';
import type { Chunk } from '../model/index.js';
import type { VectorDriver } from '../vector/driver.js';
import { HashEmbedder } from '../vector/embedders/index.js';
import { InMemoryVectorStore } from '../vector/in-memory-vector-store.js';
import { createVectorStore } from '../vector/vector-store.js';
import { openCollection } from './collection.js';
import { createFileStorage } from './file-storage.js';
import { encodeRecord } from './log-records.js';
import { createMemoryStorage } from './storage.js';

const embedder = new HashEmbedder({ dimension: 64 });
const folders: string[] = [];

afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'zerda-collection-'));
  folders.push(path);
  return path;
}

function corpus(size: number, prefix = 'c'): Chunk[] {
  const topics = [
    'solar energy panels',
    'wind turbine farms',
    'contract law disputes',
    'river water quality',
  ];
  return Array.from({ length: size }, (_, i) => ({
    id: `${prefix}${i}`,
    text: `${topics[i % topics.length]} report ${i}`,
    docId: `doc${i % 7}`,
    metadata: { topic: topics[i % topics.length]!.split(' ')[0]!, year: 2000 + (i % 10) },
  }));
}

/**
 * A v2 driver that keeps its records in a store shared across "restarts" (the test process), so it
 * behaves like a database that outlives the collection; `failAfter` makes upserts fail part-way.
 */
function durableDriver(
  shared: InMemoryVectorStore,
  options: { failAfter?: number; maxBatchSize?: number } = {},
): VectorDriver {
  let upserts = 0;
  return {
    specificationVersion: 'v2',
    name: 'durable',
    capabilities: {
      metric: 'cosine',
      scoreConversion: 'similarity',
      persistent: true,
      maxBatchSize: options.maxBatchSize ?? 1000,
    },
    filterConvention: shared.filterConvention,
    async upsert(records) {
      upserts++;
      if (options.failAfter !== undefined && upserts > options.failAfter) throw new Error('connection reset');
      await shared.add([...records], { embeddings: records.map((record) => record.vector) });
    },
    async query(vector, { topK, filter }) {
      const { hits } = await shared.search(vector, {
        topK,
        ...(filter ? { nativeFilter: nativeFilter(zerdaFilterConvention, filter as never) } : {}),
      });
      return hits.map((hit) => ({ id: hit.chunk.id, score: hit.score, chunk: hit.chunk }));
    },
    get: (ids) => shared.get(ids),
    count: () => shared.count(),
    delete: (ids) => shared.delete(ids),
    list: (options) => shared.driver.list!(options),
  };
}

async function sideIds(
  collection: Awaited<ReturnType<typeof openCollection>>,
): Promise<{ keyword: string[]; vector: string[] }> {
  const vector: string[] = [];
  for await (const page of collection.store.list!()) vector.push(...page.map((chunk) => chunk.id));
  const keyword = (await collection.retrieve('report', { mode: 'keyword', k: 100_000 })).hits.map(
    (hit) => hit.chunk.id,
  );
  return { keyword: keyword.sort(), vector: vector.sort() };
}

describe('Collection', () => {
  it('adds once and retrieves in keyword, vector and hybrid mode with filters', async () => {
    const collection = await openCollection({ store: new InMemoryVectorStore({ embedder }) });
    await collection.add(corpus(200));
    expect(await collection.count()).toBe(200);
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      const { hits } = await collection.retrieve('wind turbine', {
        mode,
        k: 5,
        filter: { year: { $gte: 2005 } },
      });
      expect(hits, mode).toHaveLength(5);
      expect(
        hits.every(
          (hit) => hit.chunk.text.startsWith('wind turbine') && (hit.chunk.metadata?.year as number) >= 2005,
        ),
        mode,
      ).toBe(true);
      expect(hits.map((hit) => hit.rank)).toEqual([1, 2, 3, 4, 5]);
    }
    expect((await collection.get(['c3', 'nope', 'c1'])).map((chunk) => chunk.id)).toEqual(['c3', 'c1']);
    expect(await collection.delete(['c1', 'c2', 'missing'])).toBe(2);
    expect(await collection.deleteWhere({ topic: 'river' })).toBe(50);
    expect(await collection.count()).toBe(148);
    expect(await collection.store.count()).toBe(148);
    await expect(collection.retrieve('x', { filter: { year: { $regex: 'x' } } as never })).rejects.toThrow(
      FilterError,
    );
    await collection.close();
  });

  it('persists through a file storage and reopens with the same results', async () => {
    const directory = await folder();
    const first = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
      checkpointEvery: 3,
    });
    for (let i = 0; i < 5; i++) await first.add(corpus(40, `b${i}-`));
    await first.delete(['b0-1']);
    const before = await first.retrieve('contract law', { k: 10 });
    await first.close();

    const second = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
    });
    expect(second.report.restored).toBe(199);
    expect(await second.count()).toBe(199);
    const after = await second.retrieve('contract law', { k: 10 });
    expect(after.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual(
      before.hits.map((hit) => [hit.chunk.id, hit.score]),
    );
    const sides = await sideIds(second);
    expect(sides.keyword).toEqual(sides.vector);
    await second.close();
  });

  it('writes nothing when it closes unchanged, leaves a short log to replay, and snapshots a long one', async () => {
    const directory = await folder();
    const open = () =>
      openCollection({ store: new InMemoryVectorStore({ embedder }), storage: createFileStorage(directory) });
    const first = await open();
    await first.add(corpus(30));
    await first.close();
    const files = async () => (await readdir(directory)).filter((name) => name.startsWith('blob-')).sort();
    const saved = await files();
    const reader = await open();
    expect((await reader.retrieve('river water', { k: 3 })).hits.length).toBe(3);
    await reader.close();
    expect(await files()).toEqual(saved);
    // A few writes: the log holds them and the next open replays it, with the snapshot left as it is.
    const writer = await open();
    await writer.delete(['c0']);
    await writer.add(corpus(3, 'extra-'));
    await writer.close();
    expect(await files()).toEqual(saved);
    const replayed = await open();
    expect(await replayed.count()).toBe(32);
    expect((await replayed.get(['c0', 'extra-1'])).map((chunk) => chunk.id)).toEqual(['extra-1']);
    // More than a thousand chunks in the log: closing snapshots, and the next open replays nothing.
    await replayed.add(corpus(1_100, 'bulk-'));
    await replayed.close();
    const resaved = await files();
    expect(resaved).not.toEqual(saved);
    const last = await open();
    expect(await last.count()).toBe(1_132);
    await last.close();
    expect(await files()).toEqual(resaved);
  });

  it('leaves a memory storage snapshot as committed while the collection reopened from it changes', async () => {
    const storage = createMemoryStorage();
    const first = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
    await first.add(corpus(30));
    await first.close();
    const committed = new Map(
      [...(await storage.readSnapshot())!].map(([key, bytes]) => [key, bytes.slice()]),
    );
    // The reopened keyword index keeps views into the bytes it read (and changes them as it adds).
    const second = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
    await second.add(corpus(30, 'more-'));
    await second.delete(['c1', 'c2']);
    expect(await storage.readSnapshot()).toEqual(committed);
    await second.close();
    const third = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
    expect(await third.count()).toBe(58);
    await third.close();
  });

  it('replays the log when the process stopped without a snapshot', async () => {
    const directory = await folder();
    const storage = createFileStorage(directory);
    const first = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
    await first.add(corpus(30));
    await first.delete(['c0']);
    // No close: the log holds the writes since the first snapshot (no intents: a store that keeps
    // nothing loses an interrupted write with the process, so there is nothing to settle).
    expect((await storage.readLog()).length).toBe(2);
    // The stopped process's lock file is still there (held by this test's process id): bypassed.
    const files = createFileStorage(directory);
    const second = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: {
        location: files.location,
        lock: async () => ({ release: async () => {} }),
        readSnapshot: () => files.readSnapshot(),
        commitSnapshot: (blobs) => files.commitSnapshot(blobs),
        appendLog: (record) => files.appendLog(record),
        readLog: () => files.readLog(),
      },
    });
    expect(await second.count()).toBe(29);
    const sides = await sideIds(second);
    expect(sides.keyword).toEqual(sides.vector);
    await second.close();
    await first.close();
  });

  it('keeps exactly the written ids in both sides when the database fails part-way', async () => {
    const shared = new InMemoryVectorStore({ embedder });
    const collection = await openCollection({
      store: createVectorStore(durableDriver(shared, { failAfter: 2, maxBatchSize: 10 })),
    });
    const error = await collection
      .add(corpus(50), { embeddings: await embedder.embed(corpus(50).map((c) => c.text)) })
      .catch((e: unknown) => e);
    expect(BatchWriteError.isInstance(error)).toBe(true);
    const { writtenIds, failedIds } = error as BatchWriteError;
    expect(writtenIds).toHaveLength(20);
    expect(failedIds).toHaveLength(30);
    expect(await collection.count()).toBe(20);
    expect(await shared.count()).toBe(20);
    const keywordIds = (await collection.retrieve('report', { mode: 'keyword', k: 100 })).hits
      .map((hit) => hit.chunk.id)
      .sort();
    expect(keywordIds).toEqual([...writtenIds].sort());
  });

  it('settles an interrupted write against the database when it opens', async () => {
    const shared = new InMemoryVectorStore({ embedder });
    const storage = createMemoryStorage();
    const first = await openCollection({
      store: createVectorStore(durableDriver(shared), { embedder }),
      storage,
    });
    await first.add(corpus(10));
    await first.close();
    // A crash after the database took a batch and before the collection recorded it.
    await storage.appendLog(encodeRecord({ t: 'intent', seq: 99, ids: ['n1', 'n2', 'c3'] }));
    await shared.add([{ id: 'n1', text: 'new solar report' }]);
    await shared.delete(['c3']);
    const second = await openCollection({
      store: createVectorStore(durableDriver(shared), { embedder }),
      storage,
    });
    expect(second.report.reconciled).toBe(3);
    expect((await second.get(['n1', 'n2', 'c3'])).map((chunk) => chunk.id)).toEqual(['n1']);
    const sides = await sideIds(second);
    expect(sides.keyword).toEqual(sides.vector);
    await second.close();
  });

  it('rebuilds its keyword side from the database with no local state, and catches up with another writer', async () => {
    const shared = new InMemoryVectorStore({ embedder });
    await shared.add(corpus(120));
    const progress: number[] = [];
    const storage = createMemoryStorage();
    const collection = await openCollection({
      store: createVectorStore(durableDriver(shared), { embedder }),
      storage,
      onProgress: ({ done }) => progress.push(done),
    });
    expect(collection.report.rebuilt).toBe(120);
    expect(progress.at(-1)).toBe(120);
    expect((await collection.retrieve('wind', { mode: 'keyword', k: 3 })).hits).toHaveLength(3);
    await collection.close();
    await shared.add(corpus(5, 'other-'));
    const again = await openCollection({
      store: createVectorStore(durableDriver(shared), { embedder }),
      storage,
    });
    expect(again.report.rebuilt).toBe(125);
    expect(again.report.warnings[0]?.message).toMatch(/another writer/);
    await again.close();
  });

  it('hides a batch in flight: readers see it before or after, never on one side only', async () => {
    const shared = new InMemoryVectorStore({ embedder });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const driver = durableDriver(shared);
    const slow: VectorDriver = {
      ...driver,
      async upsert(records, options) {
        await driver.upsert(records, options);
        await gate; // the database has the batch; the keyword side does not yet
      },
    };
    const collection = await openCollection({ store: createVectorStore(slow, { embedder }) });
    const adding = collection.add(corpus(20, 'late-'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await shared.count()).toBe(20);
    for (const mode of ['vector', 'hybrid', 'keyword'] as const) {
      const { hits } = await collection.retrieve('solar', { mode, k: 10 });
      expect(hits, mode).toHaveLength(0);
    }
    release();
    await adding;
    expect((await collection.retrieve('solar', { mode: 'hybrid', k: 10 })).hits.length).toBeGreaterThan(0);
  });

  it('refuses a second writer, naming the holder', async () => {
    const directory = await folder();
    const first = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
    });
    const error = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
    }).catch((e: unknown) => e);
    expect(StorageLockedError.isInstance(error)).toBe(true);
    expect((error as StorageLockedError).pid).toBe(process.pid);
    expect((error as Error).message).toContain(`process ${process.pid}`);
    await first.close();
    const third = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
    });
    await third.close();
  });

  it('refuses a different metric, dimension or backend, naming both values', async () => {
    const directory = await folder();
    const first = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
    });
    await first.add(corpus(5));
    await first.close();
    const metric = await openCollection({
      store: new InMemoryVectorStore({ embedder, metric: 'dot' }),
      storage: createFileStorage(directory),
    }).catch((e: unknown) => e);
    expect(InvalidArgumentError.isInstance(metric)).toBe(true);
    expect((metric as Error).message).toMatch(/created with metric "cosine", it is opened with "dot"/);
    const dimension = await openCollection({
      store: new InMemoryVectorStore({ embedder: new HashEmbedder({ dimension: 32 }) }),
      storage: createFileStorage(directory),
    }).catch((e: unknown) => e);
    expect((dimension as Error).message).toMatch(/dimension 64, it is opened with 32/);
  });

  it('refuses a folder that is not a collection, or a damaged one, and overwrites nothing', async () => {
    const directory = await folder();
    await writeFile(join(directory, 'notes.txt'), 'mine');
    const error = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
    }).catch((e: unknown) => e);
    expect(IndexFormatError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/not a Zerda collection/);
    expect((await readdir(directory)).sort()).toEqual(['notes.txt']);

    // A file where the folder should be: typed, named, and the file left as it was.
    const file = join(directory, 'notes.txt');
    const fileError = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(file),
    }).catch((e: unknown) => e);
    expect(IndexFormatError.isInstance(fileError)).toBe(true);
    expect((fileError as Error).message).toMatch(/is a file, not a folder; nothing was written/);
    expect((fileError as Error).message).toContain(file);
    expect(await readFile(file, 'utf8')).toBe('mine');

    const damaged = await folder();
    const collection = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(damaged),
    });
    await collection.add(corpus(5));
    await collection.close();
    const blob = (await readdir(damaged)).find((name) => name.startsWith('blob-chunks-'))!;
    await writeFile(join(damaged, blob), 'garbage');
    const corrupt = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(damaged),
    }).catch((e: unknown) => e);
    expect(IndexFormatError.isInstance(corrupt)).toBe(true);
  });

  it('embeds the chunks again on reopen when the store keeps nothing and cannot list its vectors', async () => {
    const storage = createMemoryStorage();
    const forgetful = () => {
      const inner = new InMemoryVectorStore({ embedder });
      const driver: VectorDriver = {
        ...durableDriver(inner),
        name: 'forgetful',
        capabilities: { metric: 'cosine', scoreConversion: 'similarity', persistent: false },
        // Lists chunks but never their vectors.
        list: async (options) => {
          const page = await inner.driver.list!(options);
          return { chunks: page.chunks, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
        },
      };
      return createVectorStore(driver, { embedder });
    };
    const first = await openCollection({ store: forgetful(), storage });
    await first.add(corpus(20));
    const before = await first.retrieve('wind turbine', { mode: 'vector', k: 3 });
    await first.close();
    const second = await openCollection({
      store: forgetful(),
      storage: { ...storage, lock: async () => ({ release: async () => {} }) },
    });
    expect(second.report.warnings.some((w) => /embedded again/.test(w.message))).toBe(true);
    const after = await second.retrieve('wind turbine', { mode: 'vector', k: 3 });
    expect(after.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual(
      before.hits.map((hit) => [hit.chunk.id, hit.score]),
    );
    expect(after.hits[0]!.score).toBeGreaterThan(0);
  });

  it('removes the files of a commit a crash interrupted when the next writer opens', async () => {
    const directory = await folder();
    const first = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
    });
    await first.add(corpus(5));
    await first.close();
    const leftovers = [
      'log-00000000000000aa.wal',
      'blob-state-00000000000000aa.bin',
      'zerda-collection.json.00000000000000aa.tmp',
    ];
    for (const name of leftovers) await writeFile(join(directory, name), 'half a commit');
    const second = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
    });
    expect(await second.count()).toBe(5);
    const files = await readdir(directory);
    for (const name of leftovers) expect(files).not.toContain(name);
    expect(files.filter((name) => name.startsWith('log-'))).toHaveLength(1);
    await second.close();
  });
});
