import type { Document } from '@langchain/core/documents';
import { FakeEmbeddings, FakeVectorStore, SyntheticEmbeddings } from '@langchain/core/utils/testing';
import {
  AbortedError,
  BackendError,
  ChunkValidationError,
  evaluateFilter,
  type FilterConvention,
  FilterError,
  type FilterInput,
  type FilterNode,
  HashEmbedder,
  HybridRetriever,
  InvalidArgumentError,
  KeywordRetriever,
  nativeFilter,
  parseFilter,
  serializeFilter,
  VectorRetriever,
} from '@zerda/core';
import { describe, expect, it } from 'vitest';
import { fromLangChainEmbeddings } from './langchain-embedder.js';
import { langChainFilter } from './langchain-filter.js';
import { fromLangChainVectorStore } from './langchain-store.js';
import { corpus } from './test-utils/corpus.js';
import {
  FailingVectorStore,
  KeyedMemoryVectorStore,
  SlowVectorStore,
} from './test-utils/langchain-stores.js';
import { ZerdaEmbeddings } from './zerda-embeddings.js';

const embedder = new HashEmbedder({ dimension: 128 });
const embeddings = new ZerdaEmbeddings({ embedder });

/** Every chunk of the corpus matching the filter, by Zerda's reference semantics. */
function expectedIds(filter: FilterInput): string[] {
  const node = parseFilter(filter);
  return corpus.filter((chunk) => evaluateFilter(node, chunk)).map((chunk) => chunk.id);
}

describe('fromLangChainVectorStore over LangChain FakeVectorStore', () => {
  it('stores chunks and returns them with ids, docIds, metadata and similarity scores', async () => {
    const store = new FakeVectorStore(embeddings);
    const database = fromLangChainVectorStore(store);
    expect(database.specificationVersion).toBe('v2');
    expect(database.name).toBe('langchain:memory');
    // The store's own filter passes through; no Zerda filter is pushed down by default.
    expect(database.filterConvention?.name).toBe('langchain');
    expect(database.filterConvention?.canPushDown(parseFilter({ lang: 'en' }))).toBe(false);
    expect(database.capabilities).toMatchObject({
      metric: 'cosine',
      scoreConversion: 'similarity',
      deletion: false,
      persistent: false,
    });
    expect(database.driver.scoreKind).toBe('similarity'); // FakeVectorStore's type 'memory' is known

    const added = await database.add(corpus);
    expect(added.ids).toEqual(corpus.map((chunk) => chunk.id));
    expect(await database.count()).toBe(corpus.length);

    const [query] = await embedder.embed(['dense vectors compared by cosine similarity']);
    const { hits } = await database.search(query!, { topK: 3 });
    expect(hits).toHaveLength(3);
    expect(hits[0]!.chunk).toEqual(corpus.find((chunk) => chunk.id === 'dense'));
    for (const hit of hits) expect(hit.chunk).toEqual(corpus.find((chunk) => chunk.id === hit.chunk.id));
    const scores = hits.map((hit) => hit.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(scores[0]).toBeGreaterThan(0);
    expect(scores[0]).toBeLessThanOrEqual(1 + 1e-9);

    // A text query is embedded by the store's own embeddings.
    const byText = await database.search('dense vectors compared by cosine similarity', { topK: 1 });
    expect(byText.hits[0]!.chunk.id).toBe('dense');
    const threshold = await database.search(query!, { topK: 10, scoreThreshold: scores[1]! });
    expect(threshold.hits.map((hit) => hit.chunk.id)).toEqual(hits.slice(0, 2).map((hit) => hit.chunk.id));
  });

  it('cannot delete or replace through FakeVectorStore, and says so', async () => {
    const database = fromLangChainVectorStore(new FakeVectorStore(embeddings));
    await database.add(corpus.slice(0, 3));
    // A store that cannot delete makes a Zerda store without `delete` (no method that only throws).
    expect(database.delete).toBeUndefined();
    expect(database.capabilities.deletion).toBe(false);
    const again = await database.add([{ ...corpus[0]!, text: 'BM25 again, a second copy' }]);
    expect(again.warnings?.[0]?.type).toBe('unsupported');
    // The id is stored twice, and searches return it once.
    const [query] = await embedder.embed(['BM25 term frequency']);
    const { hits } = await database.search(query!, { topK: 10 });
    expect(hits.filter((hit) => hit.chunk.id === 'bm25')).toHaveLength(1);
    expect(await database.count()).toBe(3);
    // Read from the store's memory: the latest copy.
    expect((await database.get(['bm25']))[0]?.text).toBe('BM25 again, a second copy');
  });

  it('honours Zerda filters it cannot express through the residual path of VectorRetriever', async () => {
    const store = new FakeVectorStore(embeddings);
    const database = fromLangChainVectorStore(store);
    await database.add(corpus);
    const retriever = new VectorRetriever({ store: database, embedder, k: 3 });

    const filters: FilterInput[] = [
      { lang: 'en', year: { $gte: 2020 } },
      { $or: [{ topic: 'keyword' }, { tags: 'embeddings' }] },
      { draft: { $exists: false }, topic: { $nin: ['vector', 'fusion'] } },
      { docId: 'languages' },
      { year: { $lt: 2010 } },
    ];
    for (const filter of filters) {
      const result = await retriever.retrieve('ranking vectors fusion', { filter });
      const allowed = expectedIds(filter);
      expect(result.hits.length).toBe(Math.min(3, allowed.length));
      for (const hit of result.hits) expect(allowed).toContain(hit.chunk.id);
      expect(result.warnings.some((warning) => warning.type === 'unsupported')).toBe(true);
    }
    // Strict mode refuses instead of evaluating client-side.
    const strict = new VectorRetriever({ store: database, embedder, strictFilters: true });
    await expect(strict.retrieve('x', { filter: { lang: 'en' } })).rejects.toSatisfy(
      (error: unknown) => FilterError.isInstance(error) && error.reason === 'unsupported',
    );
  });

  it('widens the fetch until k matches are found for a rare filter value', async () => {
    const store = new KeyedMemoryVectorStore(embeddings);
    const database = fromLangChainVectorStore(store, { scoreConversion: 'similarity' });
    const many = Array.from({ length: 200 }, (_, index) => ({
      id: `c${index}`,
      text: `common passage number ${index} about retrieval`,
      metadata: { rare: index % 50 === 7 },
    }));
    await database.add(many);
    const retriever = new VectorRetriever({ store: database, embedder, k: 4 });
    const result = await retriever.retrieve('passage about retrieval', { filter: { rare: true } });
    expect(result.hits.map((hit) => hit.chunk.id).sort()).toEqual(['c107', 'c157', 'c57', 'c7']);
    expect(store.searches.length).toBeGreaterThan(1);
  });

  it("passes the store's native filter through untouched", async () => {
    const store = new FakeVectorStore(embeddings);
    const database = fromLangChainVectorStore(store);
    await database.add(corpus);
    const [query] = await embedder.embed(['hybrid search']);
    const seen: Document[] = [];
    const predicate = (document: Document) => {
      seen.push(document);
      return document.metadata.lang !== 'en';
    };
    const { hits } = await database.search(query!, { topK: 10, nativeFilter: langChainFilter(predicate) });
    expect(hits.map((hit) => hit.chunk.id).sort()).toEqual(['arabic', 'spanish']);
    expect(seen.length).toBe(corpus.length);
    // The same through the convention, by name; a bare function or another backend's filter is refused.
    const byName = await database.search(query!, {
      topK: 10,
      nativeFilter: nativeFilter('langchain', predicate),
    });
    expect(byName.hits.map((hit) => hit.chunk.id).sort()).toEqual(['arabic', 'spanish']);
    for (const wrong of [predicate, nativeFilter('chroma', { lang: 'en' })]) {
      await expect(database.search(query!, { topK: 10, nativeFilter: wrong as never })).rejects.toSatisfy(
        (error: unknown) => FilterError.isInstance(error),
      );
    }
  });

  it("pushes Zerda filters down as a Document predicate with filterConvention: 'document-predicate'", async () => {
    const store = new FakeVectorStore(embeddings);
    const database = fromLangChainVectorStore(store, { filterConvention: 'document-predicate' });
    await database.add(corpus);
    expect(database.filterConvention?.name).toBe('langchain');
    const retriever = new VectorRetriever({ store: database, embedder, k: 20 });
    const filter: FilterInput = { $or: [{ lang: 'ar' }, { year: { $gt: 2022 }, id: { $ne: 'context' } }] };
    const result = await retriever.retrieve('anything at all', { filter });
    expect(result.warnings).toEqual([]);
    expect(result.hits.map((hit) => hit.chunk.id).sort()).toEqual(expectedIds(filter).sort());
  });

  it('takes a FilterConvention and sends its translation as the store filter', async () => {
    const received: unknown[] = [];
    class RecordingStore extends KeyedMemoryVectorStore {
      declare FilterType: never;
      override async similaritySearchVectorWithScore(query: number[], k: number, filter?: never) {
        received.push(filter);
        return super.similaritySearchVectorWithScore(query, k);
      }
    }
    // A tiny convention of a store that takes equality on `lang` only, as Zerda's filter JSON.
    const langOnly: FilterConvention<unknown> = {
      name: 'lang-only',
      canPushDown: (node: FilterNode) => node.kind === 'compare' && node.field === 'lang' && node.op === 'eq',
      translate: serializeFilter,
    };
    const database = fromLangChainVectorStore(new RecordingStore(embeddings), {
      filterConvention: langOnly,
      scoreConversion: 'similarity',
    });
    await database.add(corpus);
    const result = await new VectorRetriever({ store: database, embedder }).retrieve('x', {
      filter: { lang: 'en', year: 2009 },
    });
    expect(received.at(-1)).toEqual({ lang: { $eq: 'en' } });
    // The rest is evaluated client-side, and says so.
    expect(result.hits.map((hit) => hit.chunk.id).sort()).toEqual(
      expectedIds({ lang: 'en', year: 2009 }).sort(),
    );
    expect(result.warnings.some((warning) => warning.type === 'unsupported')).toBe(true);
  });
});

describe('score direction', () => {
  const query = async () => (await embedder.embed(['dense vectors compared by cosine similarity']))[0]!;

  it('converts declared distances to similarities (cosine: 1 - d)', async () => {
    const similarities = fromLangChainVectorStore(new KeyedMemoryVectorStore(embeddings), {
      scoreConversion: 'similarity',
    });
    const distances = fromLangChainVectorStore(
      new KeyedMemoryVectorStore(embeddings, { scores: 'distance' }),
      { scoreConversion: 'one-minus-distance' },
    );
    await similarities.add(corpus);
    await distances.add(corpus);
    const a = await similarities.search(await query(), { topK: 5 });
    const b = await distances.search(await query(), { topK: 5 });
    expect(b.hits.map((hit) => hit.chunk.id)).toEqual(a.hits.map((hit) => hit.chunk.id));
    for (const [index, hit] of b.hits.entries()) expect(hit.score).toBeCloseTo(a.hits[index]!.score, 10);
    expect(distances.capabilities.scoreConversion).toBe('one-minus-distance');
    expect(distances.driver.scoreKind).toBe('distance');
    expect(b.warnings).toEqual([]);
  });

  it('applies the other conversions: Euclidean, squared Euclidean, negated inner product, learnt by metric', async () => {
    const store = new KeyedMemoryVectorStore(embeddings, { scores: 'distance' });
    await fromLangChainVectorStore(store, { scoreConversion: 'one-minus-distance' }).add(corpus);
    // The store's own answer: distances, nearest first.
    const raw = await store.similaritySearchVectorWithScore(Array.from(await query()), 3);
    const rawHits = raw.map(([document, distance]) => ({ chunk: { id: document.id }, score: distance }));
    const cases = [
      {
        options: { metric: 'l2' as const, scoreConversion: 'euclidean-distance' as const },
        expected: (d: number) => 1 / (1 + d),
      },
      {
        options: { metric: 'l2' as const, scoreConversion: 'squared-euclidean-distance' as const },
        expected: (d: number) => 1 / (1 + Math.sqrt(d)),
      },
      {
        options: { metric: 'dot' as const, scoreConversion: 'negated' as const },
        expected: (d: number) => -d,
      },
      // Undeclared: distances learnt from the order, converted as the metric's distances are.
      { options: { metric: 'l2' as const }, expected: (d: number) => 1 / (1 + d) },
      { options: { metric: 'dot' as const }, expected: (d: number) => -d },
    ];
    for (const { options, expected } of cases) {
      const database = fromLangChainVectorStore(store, options);
      const { hits } = await database.search(await query(), { topK: 3 });
      expect(hits.map((hit) => hit.chunk.id)).toEqual(rawHits.map((hit) => hit.chunk.id));
      for (const [index, hit] of hits.entries()) {
        expect(hit.score).toBeCloseTo(expected(rawHits[index]!.score), 10);
      }
    }
    expect(() => fromLangChainVectorStore(store, { scoreConversion: 'euclid' as never })).toThrow(
      InvalidArgumentError,
    );
    expect(() => fromLangChainVectorStore(store, { metric: 'hamming' as never })).toThrow(
      InvalidArgumentError,
    );
  });

  it('learns the direction of an unknown store from the order of its results', async () => {
    const database = fromLangChainVectorStore(new KeyedMemoryVectorStore(embeddings, { scores: 'distance' }));
    expect(database.driver.scoreKind).toBeUndefined();
    await database.add(corpus);
    const { hits, warnings } = await database.search(await query(), { topK: 4 });
    expect(database.driver.scoreKind).toBe('distance');
    expect(warnings).toEqual([]);
    expect(hits[0]!.chunk.id).toBe('dense');
    const scores = hits.map((hit) => hit.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(database.capabilities.scoreConversion).toBe('one-minus-distance');
  });

  it('warns when the results contradict the declared direction, and when it cannot tell', async () => {
    const wrong = fromLangChainVectorStore(new KeyedMemoryVectorStore(embeddings, { scores: 'distance' }), {
      scoreConversion: 'similarity',
    });
    await wrong.add(corpus);
    const result = await wrong.search(await query(), { topK: 4 });
    expect(result.warnings[0]).toMatchObject({ type: 'compatibility', source: 'langchain:keyed-memory' });
    expect(result.warnings[0]?.message).toContain('contradicts');

    // FakeEmbeddings embeds every text alike: every score is equal, the direction stays unknown.
    const flat = fromLangChainVectorStore(new KeyedMemoryVectorStore(new FakeEmbeddings()));
    await flat.add(corpus.slice(0, 3));
    const unknown = await flat.search([0.1, 0.2, 0.3, 0.4], { topK: 3 });
    expect(flat.driver.scoreKind).toBeUndefined();
    expect(unknown.warnings[0]?.type).toBe('compatibility');
  });
});

describe('errors', () => {
  it('turns an exception inside the store into a BackendError with the cause kept', async () => {
    const failure = new Error('socket hang up');
    const store = new FailingVectorStore(embeddings, failure);
    const database = fromLangChainVectorStore(store);
    const search = await database.search([1, 0, 0], { topK: 3 }).catch((error: unknown) => error);
    expect(BackendError.isInstance(search)).toBe(true);
    expect(search).toMatchObject({ backend: 'langchain:memory', operation: 'search', cause: failure });
    expect((search as Error).message).toContain('socket hang up');

    const add = await database
      .add(corpus.slice(0, 1), { embeddings: [[1, 0, 0]] })
      .catch((error: unknown) => error);
    expect(BackendError.isInstance(add)).toBe(true);
    expect(add).toMatchObject({ operation: 'add', cause: failure });

    // And an embeddings failure, through the store's own embeddings, as well.
    const embeddingFailure = new Error('rate limited');
    const brokenEmbeddings = new SyntheticEmbeddings({ vectorSize: 8 });
    brokenEmbeddings.embedDocuments = async () => {
      throw embeddingFailure;
    };
    const viaEmbedder = fromLangChainVectorStore(new FakeVectorStore(brokenEmbeddings), {
      embedder: fromLangChainEmbeddings(brokenEmbeddings),
    });
    const embedError = await viaEmbedder.add(corpus.slice(0, 1)).catch((error: unknown) => error);
    expect(BackendError.isInstance(embedError)).toBe(true);
    expect((embedError as BackendError).cause).toBe(embeddingFailure);
  });

  it('wraps a store method that throws synchronously, too', async () => {
    const failure = new TypeError("Cannot read properties of undefined (reading 'query')");
    class SyncThrowingStore extends FakeVectorStore {
      override similaritySearchVectorWithScore(): Promise<[Document, number][]> {
        throw failure;
      }
    }
    const database = fromLangChainVectorStore(new SyncThrowingStore(embeddings));
    await expect(database.search([1, 0, 0], { topK: 1 })).rejects.toSatisfy(
      (error: unknown) => BackendError.isInstance(error) && error.cause === failure,
    );
  });

  it('becomes a warning in a hybrid query, and the keyword branch still answers', async () => {
    const database = fromLangChainVectorStore(new FailingVectorStore(embeddings));
    const keyword = new KeywordRetriever();
    keyword.add(corpus);
    const hybrid = new HybridRetriever({
      keyword,
      vector: new VectorRetriever({ store: database, embedder }),
    });
    const result = await hybrid.retrieve('nearest neighbour search over embeddings', { k: 3 });
    expect(result.hits[0]!.chunk.id).toBe('faiss');
    expect(result.hits.every((hit) => hit.scores.keyword !== undefined)).toBe(true);
    expect(result.warnings).toContainEqual(
      expect.objectContaining({ type: 'partial-failure', source: 'vector' }),
    );
    expect(result.warnings[0]!.message).toContain('BackendError');
  });

  it('refuses bad input with typed errors before calling the store', async () => {
    const store = new KeyedMemoryVectorStore(embeddings);
    const database = fromLangChainVectorStore(store, { scoreConversion: 'similarity' });
    await database.add(corpus.slice(0, 2), { embeddings: [new Float32Array([1, 0, 0]), [0, 1, 0]] });
    expect(database.dimension).toBe(3);
    await expect(database.search([1, 0], { topK: 1 })).rejects.toThrow(InvalidArgumentError);
    await expect(database.search([0, 0, 0], { topK: 1 })).rejects.toThrow(/zero vector/);
    await expect(database.search([1, 0, 0], { topK: 0 })).rejects.toThrow(InvalidArgumentError);
    await expect(database.search([1, Number.NaN, 0], { topK: 1 })).rejects.toThrow(InvalidArgumentError);
    const bad = await database
      .add(corpus.slice(2, 4), {
        embeddings: [
          [1, 0],
          [0, 1, Number.POSITIVE_INFINITY],
        ],
      })
      .catch((error: unknown) => error);
    expect(ChunkValidationError.isInstance(bad)).toBe(true);
    expect((bad as ChunkValidationError).problems.map((problem) => problem.id)).toEqual(['rrf', 'hybrid']);
    await expect(database.add([{ id: '', text: 'x' }])).rejects.toThrow(ChunkValidationError);
    expect(store.searches).toEqual([]);
    expect(store.entries.size).toBe(2);
    expect(() => fromLangChainVectorStore({} as never)).toThrow(InvalidArgumentError);
  });

  it('stops waiting when the signal fires, with an AbortedError', async () => {
    const database = fromLangChainVectorStore(new SlowVectorStore(embeddings, 5_000));
    const controller = new AbortController();
    const started = Date.now();
    const pending = database.search([1, 0, 0], { topK: 1, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toSatisfy((error: unknown) => AbortedError.isInstance(error));
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(database.count({ signal: AbortSignal.abort() })).rejects.toThrow(AbortedError);
  });

  it('bounds each store call by timeoutMs, with a retryable BackendError', async () => {
    const database = fromLangChainVectorStore(new SlowVectorStore(embeddings, 5_000), { timeoutMs: 50 });
    const started = Date.now();
    const error = await database.search([1, 0, 0], { topK: 1 }).catch((caught: unknown) => caught);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(BackendError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ backend: 'langchain:memory', operation: 'search', retryable: true });
    expect((error as Error).message).toContain('timeoutMs');
    expect(() => fromLangChainVectorStore(new FakeVectorStore(embeddings), { timeoutMs: 0 })).toThrow(
      InvalidArgumentError,
    );
  });
});

describe('a store with ids and delete', () => {
  it('replaces by id, deletes and counts', async () => {
    const store = new KeyedMemoryVectorStore(embeddings);
    const database = fromLangChainVectorStore(store, { scoreConversion: 'similarity', maxBatchSize: 4 });
    expect(database.capabilities).toMatchObject({ deletion: true, maxBatchSize: 4 });
    const progress: number[] = [];
    await database.add(corpus, { onProgress: ({ written }) => progress.push(written) });
    expect(progress).toEqual([4, 8, 10]);
    expect(store.entries.get('bm25')?.metadata).toMatchObject({
      _zerda_id: 'bm25',
      _zerda_doc_id: 'retrieval',
    });

    const replaced = await database.add([
      { id: 'bm25', text: 'Okapi BM25, rewritten', metadata: { lang: 'en' } },
    ]);
    expect(replaced.warnings).toBeUndefined();
    expect(await database.count()).toBe(corpus.length);
    const [query] = await embedder.embed(['Okapi BM25, rewritten']);
    const { hits } = await database.search(query!, { topK: 1 });
    expect(hits[0]!.chunk).toEqual({ id: 'bm25', text: 'Okapi BM25, rewritten', metadata: { lang: 'en' } });

    // get reads by id (through a probe search here: the store has no read by id), in the order asked.
    expect(await database.get(['rrf', 'missing', 'bm25'])).toEqual([
      corpus.find((chunk) => chunk.id === 'rrf'),
      { id: 'bm25', text: 'Okapi BM25, rewritten', metadata: { lang: 'en' } },
    ]);
    expect(await database.delete!(['bm25', 'dense', 'missing'])).toBe(2);
    expect(await database.delete!(['missing'])).toBe(0);
    expect(await database.count()).toBe(corpus.length - 2);
  });

  it('reads documents that Zerda did not write: Document.id, else a hash of the text, flattened metadata', async () => {
    const store = new KeyedMemoryVectorStore(new SyntheticEmbeddings({ vectorSize: 8 }));
    await store.addDocuments([
      {
        id: 'native-1',
        pageContent: 'written by LangChain',
        metadata: { loc: { lines: { from: 1, to: 3 } } },
      },
    ]);
    await store.addVectors(
      [[1, 1, 1, 1, 1, 1, 1, 1]],
      [{ pageContent: 'no id at all', metadata: { source: 'a.txt', pages: [1, 2] } }],
      { ids: ['ignored-by-metadata'] },
    );
    const database = fromLangChainVectorStore(store, { scoreConversion: 'similarity' });
    const { hits } = await database.search('written by LangChain', { topK: 2 });
    const native = hits.find((hit) => hit.chunk.id === 'native-1');
    expect(native?.chunk.metadata).toEqual({ 'loc.lines.from': 1, 'loc.lines.to': 3 });
    expect(hits.find((hit) => hit.chunk.text === 'no id at all')?.chunk).toMatchObject({
      id: 'ignored-by-metadata',
      metadata: { source: 'a.txt', pages: '[1,2]' },
    });
    expect(await database.count()).toBe(2);
  });

  it('embeds with the Zerda embedder it is given, for texts and queries alike', async () => {
    const store = new KeyedMemoryVectorStore(new FakeEmbeddings());
    const database = fromLangChainVectorStore(store, { embedder, scoreConversion: 'similarity' });
    expect(database.dimension).toBe(128);
    await database.add(corpus);
    expect(store.entries.get('rrf')?.embedding).toHaveLength(128);
    const { hits } = await database.search('reciprocal rank fusion', { topK: 1 });
    expect(hits[0]!.chunk.id).toBe('rrf');

    // LangChain embeddings whose dimension is not known yet: learnt from the first vectors.
    const lazy = fromLangChainVectorStore(new KeyedMemoryVectorStore(new FakeEmbeddings()), {
      embedder: fromLangChainEmbeddings(new FakeEmbeddings()),
      scoreConversion: 'similarity',
    });
    expect(lazy.dimension).toBeUndefined();
    await lazy.add(corpus.slice(0, 2));
    expect(lazy.dimension).toBe(4);
    expect((await lazy.search('anything', { topK: 2 })).hits).toHaveLength(2);
  });
});
