import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IndexFormatError } from '../errors/index.js';
import type { Chunk } from '../model/index.js';
import type { DistanceMetric } from '../vector/driver.js';
import { HashEmbedder } from '../vector/embedders/index.js';
import { InMemoryVectorStore, type VectorQuantization } from '../vector/in-memory-vector-store.js';
import { type Collection, openCollection } from './collection.js';
import { createFileStorage } from './file-storage.js';
import { type CollectionStorage, createMemoryStorage } from './storage.js';

// 36 dimensions: rows padded to 36 floats and 48 codes, so padding is part of what round-trips.
const embedder = new HashEmbedder({ dimension: 36 });
const folders: string[] = [];

afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

function corpus(size: number): Chunk[] {
  return Array.from({ length: size }, (_, i) => ({
    id: `c${i}`,
    text: `${['solar panels', 'wind farms', 'river water', 'city trains'][i % 4]} report ${i} note ${i % 7}`,
  }));
}

const queries = ['solar report', 'wind farms note', 'river 3', 'trains city'];

async function vectorHits(collection: Collection): Promise<Array<Array<[string, number]>>> {
  const results: Array<Array<[string, number]>> = [];
  for (const query of queries) {
    const result = await collection.retrieve(query, { mode: 'vector', k: 5 });
    results.push(result.hits.map((hit): [string, number] => [hit.chunk.id, hit.score]));
  }
  return results;
}

async function snapshotBlobs(storage: CollectionStorage): Promise<Map<string, Uint8Array>> {
  const blobs = await storage.readSnapshot();
  if (blobs === undefined) throw new Error('no snapshot');
  return blobs;
}

/** A saved collection (memory storage) after adds and deletes, and what it answered before closing. */
async function saved(quantization: VectorQuantization, metric: DistanceMetric = 'cosine') {
  const storage = createMemoryStorage();
  const first = await openCollection({
    store: new InMemoryVectorStore({ embedder, quantization, metric }),
    storage,
  });
  await first.add(corpus(60));
  // Deleting moves the store's last rows into the holes: its order is no longer the chunks' order.
  await first.delete(['c3', 'c10', 'c11']);
  await first.add([{ id: 'late', text: 'solar farms by the river' }]);
  const before = await vectorHits(first);
  await first.close();
  return { storage, before };
}

describe('collection snapshot of the in-memory store (vector arena)', () => {
  for (const metric of ['cosine', 'l2'] as const) {
    for (const quantization of ['int8', 'none', 'int8-only'] as const) {
      it(`restores ${quantization} ${metric} vectors as saved, bit for bit, in the store's row order`, async () => {
        const { storage, before } = await saved(quantization, metric);
        const blobs = await snapshotBlobs(storage);
        expect(blobs.has('vectors')).toBe(false);
        expect(blobs.has('vector-order')).toBe(true);
        const image = blobs.get('vector-arena')!;
        const store = new InMemoryVectorStore({ embedder, quantization, metric });
        const second = await openCollection({ store, storage });
        expect(await second.count()).toBe(58);
        expect(await vectorHits(second)).toEqual(before);
        // Nothing quantised or recomputed: the store's memory is the image it was restored from.
        expect(store.snapshotArena()!.bytes).toEqual(image);
        expect(store.stats()).toMatchObject({ count: 58, quantization, metric });
        await second.close();
      });
    }
  }

  it('reads the image straight into the store scan memory, which then is the image', async () => {
    for (const quantization of ['int8', 'none', 'int8-only'] as const) {
      const storage = createMemoryStorage();
      const first = await openCollection({
        store: new InMemoryVectorStore({ embedder, quantization }),
        storage,
      });
      await first.add(corpus(20));
      await first.close();
      const saved = (await snapshotBlobs(storage)).get('vector-arena')!;
      const store = new InMemoryVectorStore({ embedder, quantization });
      const blobs = await storage.readSnapshot({
        into: (key, byteLength) => (key === 'vector-arena' ? store.arenaImageTarget(byteLength) : undefined),
      });
      const image = blobs!.get('vector-arena')!;
      expect(image).toEqual(saved);
      const chunks = Array.from({ length: 20 }, (_, i) => ({ id: `c${i}`, text: 'x' }));
      store.restoreArena({ bytes: image, chunks });
      expect(store.snapshotArena()!.bytes).toEqual(saved);
      // No copy was taken: writing over the image (past its header) writes over the store's vectors.
      image.fill(0, 32);
      expect(
        store
          .snapshotArena()!
          .bytes.subarray(32, 32 + 20 * 36)
          .some((byte) => byte !== 0),
      ).toBe(false);
    }
  });

  it('writes no order when the store holds the chunks in their own order', async () => {
    const storage = createMemoryStorage();
    const first = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
    await first.add(corpus(20));
    await first.close();
    const blobs = await snapshotBlobs(storage);
    expect(blobs.has('vector-arena')).toBe(true);
    expect(blobs.has('vector-order')).toBe(false);
    const second = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage });
    expect((await second.get(['c0', 'c19'])).map((chunk) => chunk.id)).toEqual(['c0', 'c19']);
    await second.close();
  });

  // int8 into 'none' lands in the scan memory but not where that store keeps its rows: copied out first.
  it('opens a snapshot in another quantisation mode, converting the rows', async () => {
    const cases: Array<[VectorQuantization, VectorQuantization]> = [
      ['int8', 'none'],
      ['int8', 'int8-only'],
      ['none', 'int8'],
      ['int8-only', 'int8'],
    ];
    for (const [savedMode, openedMode] of cases) {
      const { storage, before } = await saved(savedMode);
      const store = new InMemoryVectorStore({ embedder, quantization: openedMode });
      const second = await openCollection({ store, storage });
      expect(await second.count(), `${savedMode} -> ${openedMode}`).toBe(58);
      const after = await vectorHits(second);
      // The same neighbours first; scores within the codes' rounding where one side keeps codes only.
      expect(
        after.map((hits) => hits[0]![0]),
        `${savedMode} -> ${openedMode}`,
      ).toEqual(before.map((hits) => hits[0]![0]));
      for (const [q, hits] of after.entries()) {
        for (const [i, [, score]] of hits.entries())
          expect(Math.abs(score - before[q]![i]![1])).toBeLessThan(0.02);
      }
      expect(store.stats().quantization).toBe(openedMode);
      await second.close();
    }
  });

  it('reopens from a file storage, whichever kernels scan', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'zerda-arena-'));
    folders.push(directory);
    const first = await openCollection({
      store: new InMemoryVectorStore({ embedder }),
      storage: createFileStorage(directory),
    });
    await first.add(corpus(40));
    await first.delete(['c0']);
    const before = await vectorHits(first);
    await first.close();
    for (const kernel of ['js', 'auto'] as const) {
      const second = await openCollection({
        store: new InMemoryVectorStore({ embedder, kernel }),
        storage: createFileStorage(directory),
      });
      const after = await vectorHits(second);
      // The JavaScript kernels sum in another order than the SIMD ones: the last bits may differ.
      expect(after.map((hits) => hits.map(([id]) => id))).toEqual(
        before.map((hits) => hits.map(([id]) => id)),
      );
      for (const [q, hits] of after.entries()) {
        for (const [i, [, score]] of hits.entries()) expect(score).toBeCloseTo(before[q]![i]![1], 6);
      }
      await second.close();
    }
  });

  describe('refuses a damaged image or order with an IndexFormatError, overwriting nothing', () => {
    async function refusal(damage: (blobs: Map<string, Uint8Array>) => void): Promise<string> {
      const { storage } = await saved('int8');
      const blobs = await snapshotBlobs(storage);
      damage(blobs);
      await storage.commitSnapshot(blobs);
      const error = await openCollection({ store: new InMemoryVectorStore({ embedder }), storage }).catch(
        (e: unknown) => e,
      );
      expect(IndexFormatError.isInstance(error)).toBe(true);
      // The damaged snapshot is still there, as it was.
      expect((await snapshotBlobs(storage)).get('vector-arena')).toEqual(blobs.get('vector-arena'));
      return (error as Error).message;
    }
    const image = (blobs: Map<string, Uint8Array>) => blobs.get('vector-arena')!.slice();
    const header = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

    it('truncated', async () => {
      expect(await refusal((blobs) => blobs.set('vector-arena', image(blobs).subarray(0, 1000)))).toMatch(
        /truncated or inconsistent/,
      );
      expect(await refusal((blobs) => blobs.set('vector-arena', image(blobs).subarray(0, 12)))).toMatch(
        /too short/,
      );
    });

    it('foreign, or of another version', async () => {
      expect(
        await refusal((blobs) => {
          const bytes = image(blobs);
          bytes[0] = 0;
          blobs.set('vector-arena', bytes);
        }),
      ).toMatch(/not a Zerda vector image/);
      expect(
        await refusal((blobs) => {
          const bytes = image(blobs);
          header(bytes).setUint32(8, 9, true);
          blobs.set('vector-arena', bytes);
        }),
      ).toMatch(/version 9/);
    });

    it('inconsistent with itself or with the state', async () => {
      // One row fewer than the blob holds: the sizes no longer add up.
      expect(
        await refusal((blobs) => {
          const bytes = image(blobs);
          header(bytes).setUint32(16, 57, true);
          blobs.set('vector-arena', bytes);
        }),
      ).toMatch(/truncated or inconsistent/);
      expect(
        await refusal((blobs) => {
          const bytes = image(blobs);
          header(bytes).setUint32(20, 40, true);
          blobs.set('vector-arena', bytes);
        }),
      ).toMatch(/do not fit/);
      expect(
        await refusal((blobs) => {
          const bytes = image(blobs);
          bytes[29] = 2; // l2, where the state says cosine
          blobs.set('vector-arena', bytes);
        }),
      ).toMatch(/vector image holds 58 l2 vectors/);
      expect(
        await refusal((blobs) => {
          const bytes = image(blobs);
          bytes[28] = 7;
          blobs.set('vector-arena', bytes);
        }),
      ).toMatch(/unknown quantization/);
    });

    it('an order of the wrong size or that names a chunk twice', async () => {
      expect(
        await refusal((blobs) => blobs.set('vector-order', blobs.get('vector-order')!.subarray(0, 16))),
      ).toMatch(/vector order holds 16 bytes for 58 chunks/);
      expect(
        await refusal((blobs) => {
          const order = blobs.get('vector-order')!.slice();
          order.set(order.subarray(0, 4), 4);
          blobs.set('vector-order', order);
        }),
      ).toMatch(/named twice/);
    });
  });
});

describe('InMemoryVectorStore.snapshotArena / restoreArena', () => {
  it('round-trips into an empty store only, and refuses another metric or dimension', async () => {
    const store = new InMemoryVectorStore({ embedder });
    expect(store.snapshotArena()).toBeUndefined();
    await store.add(corpus(10));
    const snapshot = store.snapshotArena()!;
    expect(snapshot.chunks.map((chunk) => chunk.id)).toEqual(corpus(10).map((chunk) => chunk.id));
    const copy = new InMemoryVectorStore({ embedder });
    copy.restoreArena(snapshot);
    expect((await copy.search('wind farms', { topK: 3 })).hits).toEqual(
      (await store.search('wind farms', { topK: 3 })).hits,
    );
    expect(() => copy.restoreArena(snapshot)).toThrow(/empty store only/);
    // Ids are found again after a bulk restore (the id map is built on first use).
    expect((await copy.get(['c4', 'nope', 'c0'])).map((chunk) => chunk.id)).toEqual(['c4', 'c0']);
    expect(await copy.delete(['c0', 'c1'])).toBe(2);
    await copy.add([
      { id: 'c4', text: 'wind farms again' },
      { id: 'new', text: 'river' },
    ]);
    expect(await copy.count()).toBe(9);
    expect((await copy.get(['c9', 'c4'])).map((chunk) => chunk.text)).toEqual([
      'wind farms report 9 note 2',
      'wind farms again',
    ]);
    expect(() => new InMemoryVectorStore({ embedder, metric: 'dot' }).restoreArena(snapshot)).toThrow(
      /cosine vectors, the store is dot/,
    );
    expect(() => new InMemoryVectorStore({ dimension: 8 }).restoreArena(snapshot)).toThrow(
      /36 dimensions, the store has 8/,
    );
    expect(() =>
      new InMemoryVectorStore({ embedder }).restoreArena({ ...snapshot, chunks: snapshot.chunks.slice(1) }),
    ).toThrow(/10 vectors and 9 chunks/);
  });
});
