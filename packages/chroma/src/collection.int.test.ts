import { type FilterInput, InvalidArgumentError, VectorRetriever } from '@zerda/core';
import { ChromaClient } from 'chromadb';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ChromaStore, type ChromaStoreSettings } from './chroma-store.js';

const url = inject('chromaUrl');
const created: ChromaStore[] = [];

function open(settings: ChromaStoreSettings): ChromaStore {
  const store = new ChromaStore({ url, ...settings });
  created.push(store);
  return store;
}

afterEach(async () => {
  await Promise.all(created.splice(0).map((store) => store.deleteCollection()));
});

describe('ChromaStore collections', () => {
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
    const l2 = new ChromaStore({ url, collection, metric: 'l2' });
    await expect(l2.count()).rejects.toSatisfy(
      (error: unknown) =>
        InvalidArgumentError.isInstance(error) && /exists with space 'cosine'/.test(error.message),
    );
    const wide = new ChromaStore({ url, collection, dimension: 3 });
    await expect(wide.count()).rejects.toSatisfy(
      (error: unknown) =>
        InvalidArgumentError.isInstance(error) && /holds vectors of 2 dimensions/.test(error.message),
    );
  });

  it('shares an injected client, and reports batch limits once it has asked the server', async () => {
    const client = new ChromaClient({ host: new URL(url).hostname, port: Number(new URL(url).port) });
    const store = open({ client, collection: `client-${crypto.randomUUID()}`, maxBatchSize: 100_000 });
    expect(store.capabilities.maxBatchSize).toBe(100_000);
    await store.connect();
    expect(store.capabilities.maxBatchSize).toBe(await client.getMaxBatchSize());
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
