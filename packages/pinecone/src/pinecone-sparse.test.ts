import { readFileSync } from 'node:fs';
import {
  BackendError,
  BM25Index,
  BM25SparseEncoder,
  beirDocumentText,
  type Chunk,
  InvalidArgumentError,
  type SparseVector,
} from '@zerda/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPineconeStore } from './pinecone-store.js';
import { type LoopbackPinecone, startLoopbackPinecone } from './test-utils/loopback-pinecone.js';
import { connectedLoopbackStore, loopbackStore } from './test-utils/store-factory.js';

// Sparse-dense records through the real client against the loopback Pinecone: BM25 vectors stored
// beside the dense ones, ranked by Pinecone's sparse-dense dot product.

const apiKey = 'pcsk_sparse-test-key-0000';
let server: LoopbackPinecone;

beforeAll(async () => {
  server = await startLoopbackPinecone({ apiKey });
});
afterAll(async () => {
  await server.close();
});

function sparse(entries: ReadonlyArray<readonly [number, number]>): SparseVector {
  return {
    indices: Uint32Array.from(entries, ([index]) => index),
    values: Float32Array.from(entries, ([, value]) => value),
  };
}

const chunks: Chunk[] = [
  { id: 'a', text: 'alpha', docId: 'd1', metadata: { lang: 'en' } },
  { id: 'b', text: 'beta', docId: 'd2', metadata: { lang: 'fr' } },
  { id: 'c', text: 'gamma', docId: 'd2', metadata: { lang: 'en' } },
  { id: 'd', text: '', metadata: { lang: 'en' } },
];
const embeddings = [
  Float32Array.of(1, 0, 0),
  Float32Array.of(0, 1, 0),
  Float32Array.of(0, 0, 1),
  Float32Array.of(1, 1, 1),
];
const sparseVectors = [
  sparse([
    [2, 1],
    [9, 2],
  ]),
  sparse([
    [2, 3],
    [4_000_000_000, 1],
  ]),
  sparse([[5, 1]]),
  // An empty text has no terms: the record is written without sparse values.
  sparse([]),
];

describe('Pinecone sparse-dense vectors (sparse: true)', () => {
  it('writes sparse values beside the dense ones; searchSparse ranks by their dot product, filters pushed down', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'dot',
      sparse: true,
    });
    expect(store.capabilities.sparse).toEqual({ dimension: 2 ** 32 - 1, maxNonZero: 1000, hybrid: true });
    await store.add(chunks, { embeddings, sparseVectors });
    const stored = server.records(indexName);
    expect(stored.get('b')!.sparseValues).toEqual({ indices: [2, 4_000_000_000], values: [3, 1] });
    expect(stored.get('d')!.sparseValues).toBeUndefined();
    expect(stored.get('a')!.values).toEqual([1, 0, 0]);

    const query = sparse([
      [2, 1],
      [9, 1],
      [4_000_000_000, 0.5],
    ]);
    // a: 1 + 2 = 3; b: 3 + 0.5 = 3.5; c and d share no term with the query and are left out.
    const { hits } = await store.searchSparse!(query, { topK: 10 });
    expect(hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
      ['b', 3.5],
      ['a', 3],
    ]);
    expect(hits[0]!.chunk).toEqual(chunks[1]);
    // The Zerda filter goes down as a Pinecone filter; the native shape too.
    const filtered = await store.searchSparse!(query, { topK: 10, filter: { lang: 'en' } });
    expect(filtered.hits.map((hit) => hit.chunk.id)).toEqual(['a']);
    const byDocument = await store.searchSparse!(query, { topK: 10, filter: { docId: 'd2' } });
    expect(byDocument.hits.map((hit) => hit.chunk.id)).toEqual(['b']);
    const lastQuery = server.requests.filter((request) => request.operation === 'query').at(-1)!;
    expect(lastQuery.status).toBe(200);
    // The driver's own answer: dot products, best first, nothing scoring 0.
    const matches = await store.driver.querySparse!(sparse([[5, 2]]), { topK: 4 });
    expect(matches.map(({ id, score }) => [id, score])).toEqual([['c', 2]]);
  });

  it('searchHybrid: Pinecone sums the dense and sparse dot products of the weighted query', async () => {
    const { store } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'dot',
      sparse: true,
    });
    await store.add(chunks, { embeddings, sparseVectors });
    const query = sparse([
      [2, 1],
      [5, 4],
    ]);
    const dense = Float32Array.of(0, 2, 1);
    // dense·x: a 0, b 2, c 1, d 3; sparse·x: a 1, b 3, c 4, d 0.
    const even = await store.searchHybrid!(dense, query, { topK: 4 });
    expect(even.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
      ['b', 5],
      ['c', 5],
      ['d', 3],
      ['a', 1],
    ]);
    const keyword = await store.searchHybrid!(dense, query, { topK: 2, denseWeight: 0.25, sparseWeight: 2 });
    expect(keyword.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual([
      ['c', 8.25],
      ['b', 6.5],
    ]);
    const filtered = await store.searchHybrid!(dense, query, { topK: 4, filter: { lang: 'fr' } });
    expect(filtered.hits.map((hit) => hit.chunk.id)).toEqual(['b']);
  });

  it('lists the dense vectors, so records can be written again with new sparse vectors without re-embedding', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'dot',
      sparse: true,
    });
    await store.add(chunks, { embeddings, sparseVectors });
    const page = await store.driver.list({ limit: 10, includeVectors: true });
    expect(page.chunks.map((chunk) => chunk.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(page.vectors).toEqual(embeddings);
    const fresh = page.chunks.map((_, i) => sparse([[100 + i, 1]]));
    await store.add(page.chunks, { embeddings: page.vectors!, sparseVectors: fresh });
    expect(server.records(indexName).get('c')).toMatchObject({
      values: [0, 0, 1],
      sparseValues: { indices: [102], values: [1] },
    });
    const { hits } = await store.searchSparse!(sparse([[101, 1]]), { topK: 3 });
    expect(hits.map((hit) => hit.chunk)).toEqual([chunks[1]]);
  });

  it('needs a dotproduct index: refused in the settings, or at open with what to do', async () => {
    expect(() => createPineconeStore({ apiKey, indexName: 'x', sparse: true, metric: 'cosine' })).toThrow(
      InvalidArgumentError,
    );
    const { store } = loopbackStore(server, { apiKey, dimension: 3, metric: 'cosine', sparse: true });
    const error = await store.driver.open().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(BackendError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/cosine metric.*create the index with metric 'dotproduct'/);
  });

  it('without the sparse setting the store has no sparse operations, and refuses sparse vectors', async () => {
    const { store } = await connectedLoopbackStore(server, { apiKey, dimension: 3, metric: 'dot' });
    expect(store.capabilities.sparse).toBeUndefined();
    expect(store.searchSparse).toBeUndefined();
    expect(store.searchHybrid).toBeUndefined();
    expect(store.driver.querySparse).toBeUndefined();
    await expect(store.add(chunks, { embeddings, sparseVectors })).rejects.toThrow(InvalidArgumentError);
    expect(await store.count()).toBe(0);
  });

  it('ranks the first 300 CISI documents by BM25 as the in-process index does (top 100, 40 queries)', async () => {
    const dataset = new URL('../../../datasets/cisi/', import.meta.url);
    const readLines = (name: string) =>
      readFileSync(new URL(name, dataset), 'utf8')
        .split('\n')
        .filter((line) => line.trim().length > 0)
        .map((line) => JSON.parse(line) as { _id: string; title?: string; text: string });
    const documents = readLines('corpus.jsonl').slice(0, 300);
    const queries = readLines('queries.jsonl').slice(0, 40);
    const texts = documents.map(beirDocumentText);
    const index = new BM25Index();
    index.add(documents.map((document, i) => ({ id: document._id, text: texts[i]! })));
    const encoder = new BM25SparseEncoder();
    encoder.add(texts);

    const { store } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 2,
      metric: 'dot',
      sparse: true,
    });
    await store.add(
      documents.map((document, i) => ({ id: document._id, text: texts[i]! })),
      {
        embeddings: documents.map((_, i) => Float32Array.of(1, i)),
        sparseVectors: texts.map((text) => encoder.encodeDocument(text)),
      },
    );
    // Same ids in the same order and the same scores, within float rounding: Pinecone keeps float32
    // values, so two documents BM25 scores equally may come out a rounding error apart, and the
    // tie order (score, then id) then follows the rounding. Such swaps are counted and checked to be ties.
    const relative = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
    let compared = 0;
    let reorderedTies = 0;
    for (const query of queries) {
      const everyScore = new Map(
        index.search(query.text, documents.length).map((hit) => [hit.id, hit.score]),
      );
      const expected = index.search(query.text, 100);
      const { hits } = await store.searchSparse!(encoder.encodeQuery(query.text), { topK: 100 });
      expect(hits.length, `query ${query._id}`).toBe(expected.length);
      hits.forEach((hit, rank) => {
        const want = expected[rank]!;
        expect(relative(hit.score, want.score), `query ${query._id} rank ${rank}`).toBeLessThan(1e-4);
        if (hit.chunk.id === want.id) return;
        reorderedTies++;
        expect(
          relative(everyScore.get(hit.chunk.id)!, want.score),
          `query ${query._id} rank ${rank}`,
        ).toBeLessThan(1e-9);
      });
      compared += hits.length;
    }
    expect(reorderedTies).toBeLessThan(compared / 100);
    expect(compared).toBeGreaterThan(1000);
  });
});
