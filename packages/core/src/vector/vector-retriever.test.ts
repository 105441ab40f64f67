import { describe, expect, it } from 'vitest';
import { BackendError, FilterError } from '../errors/index.js';
import { compileFilter, type FilterConvention, faissFilterConvention, parseFilter } from '../filter/index.js';
import type { Chunk } from '../model/index.js';
import { HybridRetriever } from '../retriever/index.js';
import { HashEmbedder } from './embedders/index.js';
import { InMemoryVectorStore } from './in-memory-vector-store.js';
import type { VectorDatabase, VectorSearchOptions } from './vector-database.js';
import { VectorRetriever } from './vector-retriever.js';

const embedder = new HashEmbedder({ dimension: 64 });

/** 1,000 chunks about a few topics; 1 in 100 is legal, spread over the collection. */
function corpus(): Chunk[] {
  const topics = [
    'solar energy panels',
    'wind turbine farms',
    'contract law disputes',
    'river water quality',
  ];
  return Array.from({ length: 1000 }, (_, i) => ({
    id: `c${i}`,
    text: `${topics[i % topics.length]} report number ${i}`,
    docId: `doc${i % 50}`,
    metadata: { category: i % 100 === 7 ? 'legal' : 'general', year: 2000 + (i % 25) },
  }));
}

/**
 * A real store behind a FAISS-like convention: it takes only a docId allow-list natively
 * (`docIdFilter`) and knows nothing of other metadata, as FAISS does.
 */
function docIdOnly(store: InMemoryVectorStore, calls: number[]): VectorDatabase<{ docIdFilter: string[] }> {
  return {
    specificationVersion: 'v1',
    name: 'docid-only',
    capabilities: store.capabilities,
    filterConvention: faissFilterConvention as FilterConvention,
    add: (chunks, options) => store.add(chunks, options),
    delete: (ids) => store.delete(ids),
    count: () => store.count(),
    async search(query, options: VectorSearchOptions & Partial<{ docIdFilter: string[] }>) {
      calls.push(options.topK);
      const { docIdFilter, ...rest } = options;
      return store.search(query, docIdFilter ? { ...rest, filter: { docId: { $in: docIdFilter } } } : rest);
    },
  };
}

describe('VectorRetriever', () => {
  it('finds the nearest chunks, scored as similarities with explanations', async () => {
    const store = new InMemoryVectorStore({ embedder });
    await store.add(corpus());
    const retriever = new VectorRetriever({ store });
    const result = await retriever.retrieve('wind turbine', { k: 5 });
    expect(result.hits).toHaveLength(5);
    expect(result.hits.every((h) => h.chunk.text.startsWith('wind turbine'))).toBe(true);
    expect(result.hits[0]!.score).toBeGreaterThanOrEqual(result.hits[4]!.score);
    expect(result.hits[0]!.scores.vector).toBe(result.hits[0]!.score);
    expect(result.hits[0]!.explanation?.method).toBe('cosine');
    expect(result.warnings).toEqual([]);
  });

  it('over a docId-only convention, returns exactly the top k legal chunks by widening the fetch', async () => {
    const store = new InMemoryVectorStore({ embedder });
    await store.add(corpus());
    const calls: number[] = [];
    const retriever = new VectorRetriever({ store: docIdOnly(store, calls) });
    const result = await retriever.retrieve('solar energy', { k: 5, filter: { category: 'legal' } });
    // Reference: the same store evaluating the whole filter itself.
    const reference = await store.search('solar energy', { topK: 5, filter: { category: 'legal' } });
    expect(result.hits.map((h) => h.chunk.id)).toEqual(reference.hits.map((h) => h.chunk.id));
    expect(result.hits.every((h) => h.chunk.metadata?.category === 'legal')).toBe(true);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls[0]).toBe(10);
    expect(result.warnings[0]?.type).toBe('unsupported');
    // The docId part went to the store natively, the rest was evaluated here.
    calls.length = 0;
    const mixed = await retriever.retrieve('contract law', {
      k: 3,
      filter: { docId: ['doc7', 'doc8'], year: { $gte: 2008 } },
    });
    const matches = compileFilter(parseFilter({ docId: ['doc7', 'doc8'], year: { $gte: 2008 } }));
    expect(mixed.hits.length).toBe(3);
    expect(mixed.hits.every((h) => matches(h.chunk) && h.chunk.docId === 'doc8')).toBe(true);
  });

  it('returns fewer than k, never unfiltered results, when the store runs out of matches', async () => {
    const store = new InMemoryVectorStore({ embedder });
    await store.add(corpus());
    const retriever = new VectorRetriever({ store: docIdOnly(store, []) });
    const result = await retriever.retrieve('anything', { k: 50, filter: { category: 'legal' } });
    expect(result.hits).toHaveLength(10);
    expect(result.hits.every((h) => h.chunk.metadata?.category === 'legal')).toBe(true);
  });

  it('evaluates the whole filter client-side for a store that declares no convention, or refuses in strict mode', async () => {
    const store = new InMemoryVectorStore({ embedder });
    await store.add(corpus());
    const plain: VectorDatabase = {
      specificationVersion: 'v1',
      name: 'plain',
      capabilities: store.capabilities,
      add: (c) => store.add(c),
      delete: (ids) => store.delete(ids),
      count: () => store.count(),
      search: (query, options) => store.search(query, { topK: options.topK }),
    };
    const result = await new VectorRetriever({ store: plain }).retrieve('river', {
      k: 4,
      filter: { year: 2003 },
    });
    expect(result.hits).toHaveLength(4);
    expect(result.hits.every((h) => h.chunk.metadata?.year === 2003)).toBe(true);
    await expect(
      new VectorRetriever({ store: plain, strictFilters: true }).retrieve('river', {
        filter: { year: 2003 },
      }),
    ).rejects.toThrow(FilterError);
    await expect(
      new VectorRetriever({ store }).retrieve('river', { filter: { year: { $in: 3 } } as never }),
    ).rejects.toThrow(FilterError);
  });

  it('wraps a backend failure in a typed error, which a hybrid query turns into a warning', async () => {
    const failing: VectorDatabase = {
      specificationVersion: 'v1',
      name: 'down',
      capabilities: { metric: 'cosine', persistent: false, deletion: true, scoreConversion: '1 - d' },
      add: async () => ({ ids: [] }),
      delete: async () => 0,
      count: async () => 0,
      search: async () => {
        throw new Error('ECONNREFUSED 127.0.0.1:8000');
      },
    };
    const retriever = new VectorRetriever({ store: failing });
    const error = await retriever.retrieve('q').catch((e: unknown) => e);
    expect(BackendError.isInstance(error)).toBe(true);
    expect((error as BackendError).cause).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('down search failed: ECONNREFUSED');

    const store = new InMemoryVectorStore({ embedder });
    await store.add(corpus().slice(0, 20));
    const hybrid = new HybridRetriever({
      vector: retriever,
      branches: [{ name: 'memory', retriever: new VectorRetriever({ store }) }],
    });
    const result = await hybrid.retrieve('solar', { k: 3 });
    expect(result.hits).toHaveLength(3);
    expect(result.warnings.some((w) => w.type === 'partial-failure' && w.source === 'vector')).toBe(true);
  });
});
