import { createInMemoryVectorStore, HashEmbedder, openCollection } from '@zerda/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackPinecone, startLoopbackPinecone } from './test-utils/loopback-pinecone.js';
import { loopbackStore } from './test-utils/store-factory.js';

// A collection whose keyword side is in Pinecone (sparse-dense records), through the real client
// against the loopback server: keyword retrieval by the database, and hybrid fused by Zerda or by
// Pinecone in one sparse-dense query.

const apiKey = 'pcsk_collection-test-key-00';
const embedder = new HashEmbedder({ dimension: 32 });
let server: LoopbackPinecone;
beforeAll(async () => {
  server = await startLoopbackPinecone({ apiKey });
});
afterAll(async () => {
  await server.close();
});

const chunks = [
  { id: 'solar', text: 'Solar panels turn sunlight into electricity', metadata: { topic: 'energy' } },
  { id: 'wind', text: 'Wind turbines turn moving air into electricity', metadata: { topic: 'energy' } },
  { id: 'river', text: 'A water mill on the river grinds grain', metadata: { topic: 'food' } },
  { id: 'bread', text: 'Bakers turn grain into bread', metadata: { topic: 'food' } },
  { id: 'cells', text: 'Photovoltaic cells in solar panels', metadata: { topic: 'energy' } },
];

describe("a collection with its keyword side in Pinecone (keyword: 'database')", () => {
  it('ranks keyword queries as the in-process collection, and fuses hybrid in Zerda or in Pinecone', async () => {
    const reference = await openCollection({ store: createInMemoryVectorStore({ embedder }) });
    await reference.add(chunks);
    const { store } = loopbackStore(server, { apiKey, dimension: 32, metric: 'dot', embedder, sparse: true });
    const collection = await openCollection({ store, keyword: 'database', fusion: 'database', alpha: 0.3 });
    await collection.add(chunks);
    for (const query of ['solar electricity', 'grain', 'turn into']) {
      const expected = await reference.retrieve(query, { mode: 'keyword', k: 3 });
      const actual = await collection.retrieve(query, { mode: 'keyword', k: 3 });
      expect(
        actual.hits.map((hit) => hit.chunk.id),
        query,
      ).toEqual(expected.hits.map((hit) => hit.chunk.id));
      for (const [i, hit] of actual.hits.entries()) {
        expect(hit.score).toBeCloseTo(expected.hits[i]?.score ?? Number.NaN, 4);
      }
    }
    const filtered = await collection.retrieve('turn into', {
      mode: 'keyword',
      k: 5,
      filter: { topic: 'food' },
    });
    expect(filtered.hits.map((hit) => hit.chunk.id)).toEqual(['bread']);

    // Pinecone fuses: 0.3 x dense dot product + 0.7 x BM25, one query.
    const fused = await collection.retrieve('solar electricity', { k: 3 });
    expect(fused.hits[0]?.chunk.id).toBe('solar');
    expect(fused.hits[0]?.explanation?.method).toBe('database-hybrid');
    const sparse = collection.encoder.encodeQuery('solar electricity');
    const dense = await embedder.embedQuery('solar electricity');
    const solarDense = (await embedder.embed([chunks[0]?.text as string]))[0] as Float32Array;
    let dot = 0;
    for (let i = 0; i < dense.length; i++) dot += (dense[i] as number) * (solarDense[i] as number);
    const solarSparse = collection.encoder.encodeDocument(chunks[0]?.text as string);
    let bm25 = 0;
    for (let i = 0; i < sparse.indices.length; i++) {
      const at = solarSparse.indices.indexOf(sparse.indices[i] as number);
      if (at >= 0) bm25 += (sparse.values[i] as number) * (solarSparse.values[at] as number);
    }
    expect(fused.hits[0]?.score).toBeCloseTo(0.3 * dot + 0.7 * bm25, 4);
    await collection.close();
    await reference.close();
  });

  it('fuses in Zerda by default, with the explanations of the in-process hybrid', async () => {
    const { store } = loopbackStore(server, { apiKey, dimension: 32, metric: 'dot', embedder, sparse: true });
    const collection = await openCollection({ store, keyword: 'database' });
    await collection.add(chunks);
    const { hits } = await collection.retrieve('solar electricity', { k: 3 });
    expect(hits[0]?.chunk.id).toBe('solar');
    expect(hits[0]?.explanation?.method).toMatch(/rrf|weighted/);
    expect(hits[0]?.scores.keyword).toBeGreaterThan(0);
    expect(hits[0]?.scores.vector).toBeDefined();
    await collection.close();
  });
});
