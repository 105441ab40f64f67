import { type FilterInput, InvalidArgumentError, nativeFilter, VectorRetriever } from '@zerda/core';
import { ChromaClient } from 'chromadb';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type ChromaWhere, chromaFilterConvention } from './chroma-filter.js';
import { type ChromaStore, type ChromaStoreSettings, createChromaStore } from './chroma-store.js';

const url = inject('chromaUrl');
const created: ChromaStore[] = [];

function open(settings: ChromaStoreSettings): ChromaStore {
  const store = createChromaStore({ url, ...settings });
  created.push(store);
  return store;
}

afterEach(async () => {
  await Promise.all(created.splice(0).map((store) => store.deleteCollection()));
});

describe('Chroma collections', () => {
  it('opens an existing collection: the data persists, and its dimension is learned', async () => {
    const collection = `reopen-${crypto.randomUUID()}`;
    const first = open({ collection, metric: 'l2' });
    await first.add(
      [
        { id: 'a', text: 'alpha', docId: 'd1', metadata: { n: 1 } },
        { id: 'b', text: 'beta' },
      ],
      {
        embeddings: [
          [1, 0, 0, 0],
          [0, 1, 0, 0],
        ],
      },
    );
    const second = open({ collection, metric: 'l2' });
    expect(second.dimension).toBeUndefined();
    expect(await second.count()).toBe(2);
    expect(second.dimension).toBe(4);
    expect(second.capabilities.persistent).toBe(true);
    const { hits } = await second.search([1, 0, 0, 0], { topK: 1 });
    expect(hits).toEqual([{ chunk: { id: 'a', text: 'alpha', docId: 'd1', metadata: { n: 1 } }, score: 1 }]);
    // A vector of another dimension is refused before any write.
    await expect(second.add([{ id: 'c', text: 'c' }], { embeddings: [[1, 0, 0]] })).rejects.toMatchObject({
      name: 'ChunkValidationError',
    });
    expect(await second.count()).toBe(2);
  });

  it('refuses a collection of another space, or of another dimension than the settings', async () => {
    const collection = `space-${crypto.randomUUID()}`;
    const cosine = open({ collection, metric: 'cosine' });
    await cosine.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 0]] });
    const l2 = createChromaStore({ url, collection, metric: 'l2' });
    await expect(l2.count()).rejects.toSatisfy(
      (error: unknown) =>
        InvalidArgumentError.isInstance(error) && /exists with space 'cosine'/.test(error.message),
    );
    const wide = createChromaStore({ url, collection, dimension: 3 });
    await expect(wide.count()).rejects.toSatisfy(
      (error: unknown) =>
        InvalidArgumentError.isInstance(error) && /holds vectors of 2 dimensions/.test(error.message),
    );
  });

  it('shares an injected client, and reports batch limits once it has asked the server', async () => {
    const client = new ChromaClient({ host: new URL(url).hostname, port: Number(new URL(url).port) });
    const store = open({ client, collection: `client-${crypto.randomUUID()}`, maxBatchSize: 100_000 });
    expect(store.capabilities.maxBatchSize).toBe(100_000);
    // The first call opens the collection and asks the server.
    await store.count();
    expect(store.capabilities.maxBatchSize).toBe(await client.getMaxBatchSize());
  });

  it('lists every record, a page at a time, with the stored vectors when asked', async () => {
    const store = open({ collection: `list-${crypto.randomUUID()}`, dimension: 2 });
    const chunks = Array.from({ length: 5 }, (_, i) => ({
      id: `c${i}`,
      text: `chunk ${i}`,
      metadata: { n: i },
    }));
    const vectors = chunks.map((_, i) => [1, i / 4]);
    await store.add(chunks, { embeddings: vectors });
    const pages = [];
    for await (const page of store.list({ pageSize: 2 })) pages.push(page);
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
    expect(pages.flat().sort(byId)).toEqual(chunks);
    const listed: Array<{ id: string; vector: number[] }> = [];
    for await (const page of store.listRecords({ pageSize: 3 })) {
      expect(page.vectors).toHaveLength(page.chunks.length);
      for (const [i, chunk] of page.chunks.entries()) {
        listed.push({ id: chunk.id, vector: Array.from(page.vectors?.[i] ?? []) });
      }
    }
    expect(listed.sort(byId).map((record) => record.id)).toEqual(chunks.map((chunk) => chunk.id));
    // As Chroma keeps them (float32, within rounding).
    for (const [i, { vector }] of listed.entries()) {
      expect(vector).toHaveLength(2);
      for (const [j, value] of vector.entries()) expect(value).toBeCloseTo(vectors[i]![j]!, 5);
    }
  });

  it('takes a hand-written where through nativeFilter; an empty where means no filter', async () => {
    const store = open({ collection: `native-${crypto.randomUUID()}`, dimension: 2 });
    await store.add(
      [
        { id: 'old', text: 'old', metadata: { year: 2019 } },
        { id: 'new', text: 'new', metadata: { year: 2023 } },
      ],
      {
        embeddings: [
          [1, 0],
          [0, 1],
        ],
      },
    );
    const ids = async (where: ChromaWhere) =>
      (
        await store.search([1, 1], { topK: 5, nativeFilter: nativeFilter(chromaFilterConvention, where) })
      ).hits
        .map((hit) => hit.chunk.id)
        .sort();
    expect(await ids({ year: { $gte: 2020 } })).toEqual(['new']);
    expect(await ids({ $or: [{ year: 2019 }, { year: { $gt: 2022 } }] })).toEqual(['new', 'old']);
    expect(await ids({})).toEqual(['new', 'old']);
  });

  it('keeps docId under another docIdKey, and filters on docId read it', async () => {
    const store = open({ collection: `docid-${crypto.randomUUID()}`, docIdKey: 'source', dimension: 2 });
    await store.add(
      [
        { id: 'a', text: 'a', docId: 'report.pdf', metadata: { docId: 'legacy' } },
        { id: 'b', text: 'b', metadata: { docId: 'notes.txt' } },
        { id: 'c', text: 'c' },
      ],
      {
        embeddings: [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
      },
    );
    const embedder = {
      dimension: 2,
      embed: async (texts: readonly string[]) => texts.map(() => Float32Array.of(1, 0)),
    };
    const retriever = new VectorRetriever({ store, embedder });
    const ids = async (filter: FilterInput) =>
      (await retriever.retrieve('q', { k: 3, filter })).hits.map((hit) => hit.chunk.id).sort();
    expect(await ids({ docId: 'report.pdf' })).toEqual(['a']);
    expect(await ids({ docId: 'notes.txt' })).toEqual(['b']);
    expect(await ids({ docId: { $ne: 'report.pdf' } })).toEqual(['b', 'c']);
    const { hits } = await store.search([1, 0], { topK: 1 });
    expect(hits[0]!.chunk).toEqual({
      id: 'a',
      text: 'a',
      docId: 'report.pdf',
      metadata: { docId: 'legacy' },
    });
  });
});
