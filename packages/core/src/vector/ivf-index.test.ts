import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IndexFormatError, InvalidArgumentError } from '../errors/index.js';
import { compileFilter, type FilterInput, parseFilter } from '../filter/index.js';
import type { Chunk } from '../model/index.js';
import { clusteredData } from './__tests__/clustered-data.js';
import { InMemoryVectorStore, type InMemoryVectorStoreSettings } from './in-memory-vector-store.js';
import { loadInMemoryVectorStore, MANIFEST_FILE, saveInMemoryVectorStore } from './store-files.js';
import type { DistanceMetric } from './vector-database.js';

const DIMENSION = 48;
const COUNT = 4000;

function chunksFor(count: number, prefix = 'c'): Chunk[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `${prefix}${index}`,
    text: `text ${index}`,
    metadata: { index, bucket: index % 10 },
  }));
}

const data = clusteredData({ count: COUNT, dimension: DIMENSION, queries: 40, clusters: 60, seed: 7 });
const embeddings = Array.from({ length: COUNT }, (_, index) => data.row(index));

async function filled(settings: InMemoryVectorStoreSettings): Promise<InMemoryVectorStore> {
  const store = new InMemoryVectorStore({ dimension: DIMENSION, ...settings });
  await store.add(chunksFor(COUNT), { embeddings });
  return store;
}

async function ids(store: InMemoryVectorStore, query: Float32Array, options: object = {}): Promise<string[]> {
  const result = await store.search(query, { topK: 10, ...options });
  return result.hits.map((hit) => hit.chunk.id);
}

/** Mean share of the exact top 10 found by the approximate search. */
async function recallAt10(approximate: InMemoryVectorStore, exact: InMemoryVectorStore): Promise<number> {
  let found = 0;
  for (const query of data.queries) {
    const truth = new Set(await ids(exact, query));
    for (const id of await ids(approximate, query)) if (truth.has(id)) found++;
  }
  return found / (10 * data.queries.length);
}

describe('InMemoryVectorStore IVF index', () => {
  for (const kernel of ['wasm', 'js'] as const) {
    for (const metric of ['cosine', 'dot', 'l2'] as DistanceMetric[]) {
      it(`reaches recall@10 >= 0.95 with default settings (${metric}, ${kernel})`, async () => {
        const exact = await filled({ metric, kernel, index: 'exact' });
        const ivf = await filled({ metric, kernel, index: { type: 'ivf' } });
        const recall = await recallAt10(ivf, exact);
        expect(recall).toBeGreaterThanOrEqual(0.95);
        const stats = ivf.stats().index;
        expect(stats).toMatchObject({ type: 'ivf', lists: 63, probes: 8, trainedRows: COUNT });
      });
    }
  }

  it('says when a result is approximate, and searches exactly on request', async () => {
    const store = await filled({ index: { type: 'ivf', lists: 40, probes: 2 } });
    const query = data.queries[0]!;
    const approximate = await store.search(query, { topK: 5 });
    expect(approximate.approximate).toEqual({ index: 'ivf', lists: 40, probes: 2 });
    const exact = await store.search(query, { topK: 5, exact: true });
    expect(exact.approximate).toBeUndefined();
    const reference = await filled({ index: 'exact' });
    expect(exact.hits).toEqual((await reference.search(query, { topK: 5 })).hits);
    const allLists = await store.search(query, { topK: 5, probes: 40 });
    expect(allLists.approximate?.probes).toBe(40);
    expect(allLists.hits.map((hit) => hit.chunk.id)).toEqual(exact.hits.map((hit) => hit.chunk.id));
  });

  it('stays exact by default, and below the IVF size', async () => {
    const plain = await filled({});
    expect(plain.stats().index).toEqual({ type: 'exact' });
    expect((await plain.search(data.queries[0]!, { topK: 3 })).approximate).toBeUndefined();
    const auto = await filled({ index: 'auto' });
    expect(auto.stats().index).toMatchObject({ type: 'ivf', trainedRows: 0, minRows: 200_000 });
    expect((await auto.search(data.queries[0]!, { topK: 3 })).approximate).toBeUndefined();
    const small = new InMemoryVectorStore({ dimension: DIMENSION, index: { type: 'ivf' } });
    await small.add(chunksFor(500), { embeddings: embeddings.slice(0, 500) });
    expect((await small.search(data.queries[0]!, { topK: 3 })).approximate).toBeUndefined();
  });

  it('returns only hits that pass the filter, widening the lists until k pass', async () => {
    const store = await filled({ index: { type: 'ivf', lists: 64, probes: 1 } });
    const exact = await filled({ index: 'exact' });
    // A quarter of the rows pass: scanned through the index, one list (about 60 rows) at first.
    const common: FilterInput = { index: { $lt: 1000 } };
    const matches = compileFilter(parseFilter(common));
    for (const query of data.queries.slice(0, 10)) {
      const result = await store.search(query, { topK: 100, filter: common });
      expect(result.hits).toHaveLength(100);
      for (const hit of result.hits) expect(matches(hit.chunk)).toBe(true);
      expect(result.approximate?.probes).toBeGreaterThan(1);
    }
    // A selective filter is evaluated first and its rows scanned exactly: the exact store's hits.
    const selective: FilterInput = { bucket: 3 };
    for (const query of data.queries.slice(0, 10)) {
      const result = await store.search(query, { topK: 10, filter: selective });
      expect(result.approximate).toBeUndefined();
      expect(result.hits.map((hit) => hit.chunk.id)).toEqual(await ids(exact, query, { filter: selective }));
    }
  });

  it('keeps its lists consistent through adds, rewrites and deletes', async () => {
    const store = await filled({ index: { type: 'ivf', lists: 50, probes: 50 } });
    const exact = await filled({ index: 'exact' });
    store.buildIndex();
    // Deletes move the last row into the hole; adds go to the nearest list; rewrites move lists.
    const deleted = Array.from({ length: 700 }, (_, index) => `c${(index * 37) % COUNT}`);
    await store.delete(deleted);
    await exact.delete(deleted);
    const extra = clusteredData({ count: 600, dimension: DIMENSION, clusters: 60, seed: 7, queries: 0 });
    const added = chunksFor(600, 'n');
    const addedVectors = Array.from({ length: 600 }, (_, index) => extra.row(index));
    await store.add(added, { embeddings: addedVectors });
    await exact.add(added, { embeddings: addedVectors });
    const rewritten = chunksFor(200).slice(100);
    const rewrittenVectors = Array.from({ length: 100 }, (_, index) => extra.row(index + 300));
    await store.add(rewritten, { embeddings: rewrittenVectors });
    await exact.add(rewritten, { embeddings: rewrittenVectors });
    await store.delete(['n5', 'n599', 'c101']);
    await exact.delete(['n5', 'n599', 'c101']);

    const count = await store.count();
    const stats = store.stats().index;
    expect(stats).toMatchObject({ type: 'ivf', trainedRows: COUNT });
    // Probing every list is an exact search: any row missing from (or doubled in) the lists shows.
    for (const query of data.queries) expect(await ids(store, query)).toEqual(await ids(exact, query));
    const result = await store.search(data.queries[0]!, { topK: count + 10 });
    expect(result.hits).toHaveLength(count);
    expect(new Set(result.hits.map((hit) => hit.chunk.id)).size).toBe(count);
  });

  it('trains again once the store has grown to four times its trained size', async () => {
    const store = new InMemoryVectorStore({ dimension: DIMENSION, index: { type: 'ivf', lists: 10 } });
    await store.add(chunksFor(1000), { embeddings: embeddings.slice(0, 1000) });
    await store.search(data.queries[0]!, { topK: 1 });
    expect(store.stats().index).toMatchObject({ trainedRows: 1000 });
    await store.add(chunksFor(2999).slice(1000), { embeddings: embeddings.slice(1000, 2999) });
    await store.search(data.queries[0]!, { topK: 1 });
    expect(store.stats().index).toMatchObject({ trainedRows: 1000 });
    await store.add(chunksFor(4000).slice(2999), { embeddings: embeddings.slice(2999, 4000) });
    await store.search(data.queries[0]!, { topK: 1 });
    expect(store.stats().index).toMatchObject({ trainedRows: 4000 });
  });

  it('refuses bad index options with an InvalidArgumentError naming the option', async () => {
    const refused = (run: () => unknown, argument: string) => {
      expect(run).toThrowError(InvalidArgumentError);
      try {
        run();
      } catch (error) {
        expect((error as InvalidArgumentError).argument).toBe(argument);
      }
    };
    refused(() => new InMemoryVectorStore({ index: 'hnsw' as never }), 'index');
    refused(() => new InMemoryVectorStore({ index: { type: 'ivf', lists: 0 } }), 'index.lists');
    refused(() => new InMemoryVectorStore({ index: { type: 'ivf', lists: 2.5 } }), 'index.lists');
    refused(() => new InMemoryVectorStore({ index: { type: 'ivf', probes: -1 } }), 'index.probes');
    refused(() => new InMemoryVectorStore({ index: { type: 'ivf', nprobe: 3 } as never }), 'index.nprobe');
    const store = await filled({ index: { type: 'ivf' } });
    const query = data.queries[0]!;
    await expect(store.search(query, { topK: 3, probes: 0 })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
      argument: 'probes',
    });
    await expect(store.search(query, { topK: 3, exact: 'yes' as never })).rejects.toMatchObject({
      argument: 'exact',
    });
  });

  describe('saved with the store', () => {
    const settings: InMemoryVectorStoreSettings = { index: { type: 'ivf', lists: 40, probes: 3 } };

    async function trained(): Promise<InMemoryVectorStore> {
      const store = await filled(settings);
      store.buildIndex();
      // Deleted and added rows after training: the saved lists must follow them.
      await store.delete(['c0', 'c17', 'c3999']);
      await store.add(chunksFor(3, 'n'), { embeddings: [data.row(5), data.row(6), data.row(7)] });
      return store;
    }

    async function sameAnswers(loaded: InMemoryVectorStore, original: InMemoryVectorStore): Promise<void> {
      // The same centroids and lists (the codes are quantised again, so the bytes may differ).
      const { bytes: _loadedBytes, ...loadedIndex } = loaded.stats().index as { bytes: number };
      const { bytes: _originalBytes, ...originalIndex } = original.stats().index as { bytes: number };
      expect(loadedIndex).toEqual(originalIndex);
      for (const query of data.queries) {
        const expected = await original.search(query, { topK: 10 });
        const found = await loaded.search(query, { topK: 10 });
        expect(found.approximate).toEqual({ index: 'ivf', lists: 40, probes: 3 });
        expect(found.hits).toEqual(expected.hits);
      }
    }

    it('round-trips through saveInMemoryVectorStore without retraining', async () => {
      const directory = await mkdtemp(join(tmpdir(), 'zerda-ivf-'));
      try {
        const store = await trained();
        await saveInMemoryVectorStore(store, directory);
        const manifest = JSON.parse(await readFile(join(directory, MANIFEST_FILE), 'utf8'));
        expect(manifest).toMatchObject({ version: 1, index: { type: 'ivf', lists: 40, trainedRows: COUNT } });
        await sameAnswers(await loadInMemoryVectorStore(directory, settings), store);
        // An exact store saves as before (no index) and loads untrained.
        await saveInMemoryVectorStore(await filled({ index: 'exact' }), directory);
        expect(JSON.parse(await readFile(join(directory, MANIFEST_FILE), 'utf8')).index).toBeUndefined();
        const untrained = await loadInMemoryVectorStore(directory, settings);
        expect(untrained.stats().index).toMatchObject({ trainedRows: 0 });
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });

    it('refuses a saved index that puts a row in a list that does not exist', async () => {
      const directory = await mkdtemp(join(tmpdir(), 'zerda-ivf-'));
      try {
        await saveInMemoryVectorStore(await trained(), directory);
        const manifest = JSON.parse(await readFile(join(directory, MANIFEST_FILE), 'utf8'));
        manifest.index.lists = 39;
        await writeFile(join(directory, MANIFEST_FILE), JSON.stringify(manifest));
        const file = (await readdir(directory)).find((name) => name.endsWith('.bin'))!;
        const bytes = await readFile(join(directory, file));
        // Drop one centroid's bytes so the length fits 39 lists: some row is then in list 39 or above.
        const shorter = Buffer.concat([
          bytes.subarray(0, 24 + COUNT * DIMENSION * 4),
          bytes.subarray(24 + COUNT * DIMENSION * 4 + DIMENSION * 4),
        ]);
        await writeFile(join(directory, file), shorter);
        manifest.vectors.bytes = shorter.byteLength;
        manifest.vectors.sha256 = (await import('node:crypto'))
          .createHash('sha256')
          .update(shorter)
          .digest('hex');
        await writeFile(join(directory, MANIFEST_FILE), JSON.stringify(manifest));
        await expect(loadInMemoryVectorStore(directory, settings)).rejects.toSatisfy(
          (error) => IndexFormatError.isInstance(error) && /IVF list/.test(error.message),
        );
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });

    it('round-trips through the arena image, and an image without an index loads as before', async () => {
      const store = await trained();
      const image = store.snapshotArena()!;
      expect(new DataView(image.bytes.buffer).getUint32(8, true)).toBe(2);
      const loaded = new InMemoryVectorStore({ dimension: DIMENSION, ...settings });
      loaded.restoreArena(image);
      await sameAnswers(loaded, store);

      const exact = await filled({ index: 'exact' });
      const plain = exact.snapshotArena()!;
      expect(new DataView(plain.bytes.buffer).getUint32(8, true)).toBe(1);
      const fromPlain = new InMemoryVectorStore({ dimension: DIMENSION, ...settings });
      fromPlain.restoreArena(plain);
      expect(fromPlain.stats().index).toMatchObject({ trainedRows: 0 });
      expect((await fromPlain.search(data.queries[0]!, { topK: 5 })).approximate).toBeDefined();
      // A store set to scan exactly ignores a saved index.
      const exactFromImage = new InMemoryVectorStore({ dimension: DIMENSION, index: 'exact' });
      exactFromImage.restoreArena(image);
      expect((await exactFromImage.search(data.queries[0]!, { topK: 5 })).approximate).toBeUndefined();
    });

    it('refuses an arena image whose index is truncated or names a list that does not exist', () => {
      const image = (async () => (await trained()).snapshotArena()!)();
      return image.then(({ bytes, chunks }) => {
        const restore = (corrupt: Uint8Array) => () =>
          new InMemoryVectorStore({ dimension: DIMENSION, ...settings }).restoreArena({
            bytes: corrupt,
            chunks,
          });
        expect(restore(bytes.slice(0, bytes.byteLength - 16))).toThrowError(IndexFormatError);
        const wrongList = bytes.slice();
        // The last row's list number is the image's last 4 bytes (COUNT rows: a multiple of 4).
        new DataView(wrongList.buffer).setInt32(wrongList.byteLength - 4, 999, true);
        expect(restore(wrongList)).toThrowError(/IVF list 999/);
      });
    });
  });
});
