import { describe, expect, it } from 'vitest';
import { BackendError, ContractVersionError, FilterError, InvalidArgumentError } from '../errors/index.js';
import {
  compileFilter,
  type FilterConvention,
  nativeFilter,
  parseFilter,
  zerdaFilterConvention,
} from '../filter/index.js';
import type { Chunk } from '../model/index.js';
import { HybridRetriever } from '../retriever/index.js';
import type { VectorDriver } from './driver.js';
import { HashEmbedder } from './embedders/index.js';
import { InMemoryVectorStore } from './in-memory-vector-store.js';
import { VectorRetriever } from './vector-retriever.js';
import { createVectorStore } from './vector-store.js';

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

/** A convention that takes only docId equality and membership natively, as FAISS does. */
const docIdConvention: FilterConvention<string[]> = {
  name: 'docid-only',
  canPushDown: (node) =>
    (node.kind === 'compare' &&
      node.field === 'docId' &&
      node.op === 'eq' &&
      typeof node.value === 'string') ||
    (node.kind === 'in' &&
      node.field === 'docId' &&
      !node.negated &&
      node.values.every((v) => typeof v === 'string')),
  translate: (node) => {
    if (node.kind === 'compare') return [node.value as string];
    if (node.kind === 'in') return node.values as string[];
    throw new Error('not pushable');
  },
};

/** A v2 driver over a real in-memory store that takes only a docId allow-list natively. */
function docIdOnly(store: InMemoryVectorStore, calls: number[]): VectorDriver<string[]> {
  return {
    specificationVersion: 'v2',
    name: 'docid-only',
    capabilities: { metric: 'cosine', scoreConversion: 'similarity', persistent: false },
    filterConvention: docIdConvention,
    upsert: async (records) =>
      void (await store.add([...records], { embeddings: records.map((r) => r.vector) })),
    get: (ids) => store.get(ids),
    count: () => store.count(),
    async query(vector, { topK, filter }) {
      calls.push(topK);
      const { hits } = await store.search(vector, {
        topK,
        ...(filter ? { filter: { docId: { $in: filter } } } : {}),
      });
      return hits.map((hit) => ({ id: hit.chunk.id, score: hit.score, chunk: hit.chunk }));
    },
  };
}

/** A v2 driver with no filter convention, no delete and no list. */
function plainDriver(store: InMemoryVectorStore): VectorDriver {
  return {
    specificationVersion: 'v2',
    name: 'plain',
    capabilities: { metric: 'cosine', scoreConversion: 'similarity', persistent: false },
    upsert: async () => {},
    get: (ids) => store.get(ids),
    count: () => store.count(),
    async query(vector, { topK }) {
      const { hits } = await store.search(vector, { topK });
      // Ids only: core fetches the chunks with get.
      return hits.map((hit) => ({ id: hit.chunk.id, score: hit.score }));
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
    const retriever = new VectorRetriever({
      store: createVectorStore(docIdOnly(store, calls), { embedder }),
    });
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
    const retriever = new VectorRetriever({ store: createVectorStore(docIdOnly(store, []), { embedder }) });
    const result = await retriever.retrieve('anything', { k: 50, filter: { category: 'legal' } });
    expect(result.hits).toHaveLength(10);
    expect(result.hits.every((h) => h.chunk.metadata?.category === 'legal')).toBe(true);
  });

  it('evaluates the whole filter client-side for a store that declares no convention, or refuses in strict mode', async () => {
    const store = new InMemoryVectorStore({ embedder });
    await store.add(corpus());
    const plain = createVectorStore(plainDriver(store), { embedder });
    expect('delete' in plain).toBe(false);
    expect('list' in plain).toBe(false);
    expect(plain.capabilities).toMatchObject({ deletion: false, listing: false });
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
    const failing: VectorDriver = {
      specificationVersion: 'v2',
      name: 'down',
      capabilities: { metric: 'cosine', persistent: false, scoreConversion: 'one-minus-distance' },
      upsert: async () => {},
      get: async () => [],
      count: async () => 0,
      query: async () => {
        throw new Error('ECONNREFUSED 127.0.0.1:8000');
      },
    };
    const retriever = new VectorRetriever({ store: createVectorStore(failing, { embedder }) });
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

  it('refuses a v1 store or an unknown contract version with a typed error naming the version', async () => {
    const store = new InMemoryVectorStore({ embedder });
    const v1 = {
      specificationVersion: 'v1',
      name: 'old',
      capabilities: store.capabilities,
      search: store.search,
    };
    const error = (() => {
      try {
        new VectorRetriever({ store: v1 });
      } catch (caught) {
        return caught;
      }
    })();
    expect(ContractVersionError.isInstance(error)).toBe(true);
    expect((error as ContractVersionError).found).toBe('v1');
    expect((error as Error).message).toMatch(/'old' implements contract version "v1".*'v2'/);
    expect(() => new VectorRetriever({ store: { ...v1, specificationVersion: 'v9' } })).toThrow(
      /version "v9"/,
    );
    expect(() => new VectorRetriever({ store: { name: 'nameless' } })).toThrow(ContractVersionError);
    // A v2 driver handed straight to a retriever is made into a store.
    const driven = new VectorRetriever({ store: plainDriver(store), embedder });
    await store.add(corpus().slice(0, 10));
    expect((await driven.retrieve('solar', { k: 2 })).hits).toHaveLength(2);
  });

  it("takes a native filter only in its own convention, never a plain object or another backend's", async () => {
    const store = new InMemoryVectorStore({ embedder });
    await store.add(corpus().slice(0, 100));
    const native = await store.search('solar', {
      topK: 3,
      nativeFilter: nativeFilter(zerdaFilterConvention, { year: 2003 }),
    });
    expect(native.hits.every((h) => h.chunk.metadata?.year === 2003)).toBe(true);
    expect(native.hits.length).toBeGreaterThan(0);
    await expect(store.search('solar', { topK: 3, nativeFilter: { year: 2003 } as never })).rejects.toSatisfy(
      (e: unknown) =>
        FilterError.isInstance(e) && /nativeFilter must be made by nativeFilter/.test((e as Error).message),
    );
    await expect(
      store.search('solar', { topK: 3, nativeFilter: nativeFilter('chroma', { year: 2003 }) as never }),
    ).rejects.toSatisfy(
      (e: unknown) =>
        FilterError.isInstance(e) &&
        /'chroma' native filter was given to the 'memory' store/.test((e as Error).message),
    );
    await expect(
      store.search('solar', {
        topK: 3,
        nativeFilter: nativeFilter(zerdaFilterConvention, { year: { $bogus: 1 } } as never),
      }),
    ).rejects.toThrow(FilterError);
    await expect(
      store.search('solar', {
        topK: 3,
        filter: { year: 2003 },
        nativeFilter: nativeFilter(zerdaFilterConvention, {}),
      }),
    ).rejects.toThrow(/either `filter`/);
  });

  it('never returns a hit its filter does not match, even when the database does (with a warning)', async () => {
    const store = new InMemoryVectorStore({ embedder });
    await store.add(corpus().slice(0, 100));
    // A database that says it takes Zerda filters natively but, caught mid-write, ignores them.
    const careless: VectorDriver<unknown> = {
      ...plainDriver(store),
      name: 'careless',
      filterConvention: zerdaFilterConvention,
    };
    const result = await createVectorStore(careless, { embedder }).search('solar', {
      topK: 5,
      filter: { year: 2003 },
    });
    expect(result.hits.every((hit) => hit.chunk.metadata?.year === 2003)).toBe(true);
    expect(result.warnings.some((w) => /do not match the filter/.test(w.message))).toBe(true);
  });

  it('refuses a search option it does not know, so an old `where` is never silently unfiltered', async () => {
    const store = new InMemoryVectorStore({ embedder });
    await expect(store.search('solar', { topK: 3, where: { year: 2003 } } as never)).rejects.toSatisfy(
      (e: unknown) => InvalidArgumentError.isInstance(e) && /no 'where' option/.test((e as Error).message),
    );
  });
});
