import { Document, type DocumentInterface } from '@langchain/core/documents';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { PromptTemplate } from '@langchain/core/prompts';
import { RunnablePassthrough, RunnableSequence } from '@langchain/core/runnables';
import { FakeListChatModel, FakeVectorStore } from '@langchain/core/utils/testing';
import {
  BackendError,
  ChunkValidationError,
  ContractVersionError,
  createInMemoryVectorStore,
  evaluateFilter,
  type FilterConvention,
  FilterError,
  type FilterInput,
  type FilterNode,
  HashEmbedder,
  nativeFilter,
  parseFilter,
  serializeFilter,
  type VectorDatabase,
  type Warning,
  zerdaFilterConvention,
} from '@zerda/core';
import { createVectorStore, type VectorDriver } from '@zerda/core/backend';
import { describe, expect, it } from 'vitest';
import { chunkToDocument } from './documents.js';
import { fromLangChainVectorStore } from './langchain-store.js';
import { corpus } from './test-utils/corpus.js';
import { ZerdaEmbeddings } from './zerda-embeddings.js';
import { ZerdaVectorStore } from './zerda-vector-store.js';

const embedder = new HashEmbedder({ dimension: 256 });
const embeddings = new ZerdaEmbeddings({ embedder });
const documents = corpus.map((chunk) => chunkToDocument(chunk));

function allowed(filter: FilterInput): string[] {
  const node = parseFilter(filter);
  return corpus.filter((chunk) => evaluateFilter(node, chunk)).map((chunk) => chunk.id);
}

async function storeOver(
  database: VectorDatabase,
  args: Partial<ConstructorParameters<typeof ZerdaVectorStore>[1]> = {},
) {
  const store = new ZerdaVectorStore(embeddings, { database, ...args });
  await store.addDocuments(documents);
  return store;
}

describe('ZerdaVectorStore over Zerda’s in-memory store', () => {
  it('adds Documents with their ids and searches them, with similarity scores', async () => {
    const database = createInMemoryVectorStore({ embedder });
    const store = new ZerdaVectorStore(embeddings, { database });
    expect(store._vectorstoreType()).toBe('zerda');
    const ids = await store.addDocuments(documents);
    expect(ids).toEqual(corpus.map((chunk) => chunk.id));
    expect(await database.count()).toBe(corpus.length);

    const results = await store.similaritySearchWithScore('dense vectors compared by cosine similarity', 3);
    expect(results).toHaveLength(3);
    const [first, score] = results[0]!;
    expect(first).toBeInstanceOf(Document);
    expect(first.id).toBe('dense');
    expect(first.pageContent).toBe(corpus[1]!.text);
    expect(first.metadata).toEqual({ ...corpus[1]!.metadata, docId: 'retrieval' });
    expect(score).toBeGreaterThan(0);
    expect(score).toBeLessThanOrEqual(1 + 1e-6);
    const scores = results.map(([, value]) => value);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);

    const plain = await store.similaritySearch('dense vectors compared by cosine similarity', 3);
    expect(plain.map((document) => document.id)).toEqual(results.map(([document]) => document.id));
  });

  it('accepts Zerda filters, pushed down whole to a store that evaluates the language', async () => {
    const warnings: Warning[] = [];
    const store = await storeOver(createInMemoryVectorStore({ embedder }), {
      onWarnings: (w) => warnings.push(...w),
    });
    const filter: FilterInput = {
      $or: [{ lang: { $ne: 'en' } }, { year: { $gte: 2023 } }],
      id: { $ne: 'chroma' },
    };
    const results = await store.similaritySearch('hybrid search', 10, filter);
    expect(results.map((document) => document.id).sort()).toEqual(allowed(filter).sort());
    expect(warnings).toEqual([]);
    await expect(store.similaritySearch('x', 3, { year: { $gt: 'recent' } } as never)).rejects.toThrow(
      FilterError,
    );
  });

  it('evaluates what the database cannot, client-side, widening the fetch', async () => {
    // FAISS-like: a v2 driver whose convention pushes down only docId equality and membership.
    const inner = createInMemoryVectorStore({ embedder }).driver as VectorDriver<FilterInput>;
    const docIdOnly: FilterConvention<FilterInput> = {
      name: 'doc-id-only',
      canPushDown: (node: FilterNode) =>
        (node.kind === 'compare' && node.op === 'eq' && node.field === 'docId') ||
        (node.kind === 'in' && !node.negated && node.field === 'docId'),
      translate: serializeFilter,
    };
    const queried: unknown[] = [];
    const faissLike = createVectorStore(
      {
        specificationVersion: 'v2',
        name: 'faiss-like',
        capabilities: inner.capabilities,
        filterConvention: docIdOnly,
        upsert: (records, options) => inner.upsert(records, options),
        query: (vector, options) => {
          queried.push(options.filter);
          return inner.query(vector, options);
        },
        get: (ids, options) => inner.get(ids, options),
        count: (options) => inner.count(options),
      } satisfies VectorDriver<FilterInput>,
      { embedder },
    );
    const warnings: Warning[] = [];
    const store = await storeOver(faissLike, { onWarnings: (w) => warnings.push(...w) });
    const filter: FilterInput = { docId: ['fusion', 'languages'], lang: 'en' };
    const results = await store.similaritySearch('reciprocal rank fusion', 4, filter);
    expect(results.map((document) => document.id).sort()).toEqual(allowed(filter).sort());
    expect(warnings[0]).toMatchObject({ type: 'unsupported', source: 'faiss-like' });
    expect(queried.at(-1)).toEqual({ docId: { $in: ['fusion', 'languages'] } });

    const strict = await storeOver(faissLike, { strictFilters: true });
    await expect(strict.similaritySearch('x', 2, filter)).rejects.toSatisfy(
      (error: unknown) => FilterError.isInstance(error) && error.reason === 'unsupported',
    );
  });

  it('deletes by id and refuses a delete without ids', async () => {
    const database = createInMemoryVectorStore({ embedder });
    const store = await storeOver(database);
    await store.delete({ ids: ['bm25', 'rrf'] });
    expect(await database.count()).toBe(corpus.length - 2);
    const ids = (await store.similaritySearch('ranking', 20)).map((document) => document.id);
    expect(ids).not.toContain('bm25');
    await expect(store.delete({})).rejects.toThrow(/ids/);
  });

  it('keeps ids given as options, as Document.id, or makes UUIDs, and replaces by id', async () => {
    const database = createInMemoryVectorStore({ embedder });
    const store = new ZerdaVectorStore(embeddings, { database });
    const ids = await store.addDocuments(
      [
        new Document({ pageContent: 'first', metadata: {} }),
        new Document({ id: 'own', pageContent: 'second', metadata: {} }),
        new Document({ id: 'overridden', pageContent: 'third', metadata: {} }),
      ],
      { ids: [undefined as unknown as string, 'own', 'given'].map((id) => id) },
    );
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids.slice(1)).toEqual(['own', 'given']);
    await store.addDocuments([
      new Document({ id: 'own', pageContent: 'second, replaced', metadata: { v: 2 } }),
    ]);
    expect(await database.count()).toBe(3);
    const [hit] = await store.similaritySearch('second, replaced', 1);
    expect(hit).toMatchObject({ id: 'own', pageContent: 'second, replaced', metadata: { v: 2 } });
  });

  it('refuses metadata Zerda cannot store, unless told to flatten it', async () => {
    const nested = new Document({
      id: 'split',
      pageContent: 'a chunk from a text splitter',
      metadata: {
        source: 'a.md',
        loc: { lines: { from: 3, to: 9 } },
        when: new Date('2024-05-01T00:00:00Z'),
      },
    });
    const strict = new ZerdaVectorStore(embeddings, { database: createInMemoryVectorStore({ embedder }) });
    const error = await strict.addDocuments([nested]).catch((caught: unknown) => caught);
    expect(ChunkValidationError.isInstance(error)).toBe(true);
    expect((error as ChunkValidationError).problems[0]).toMatchObject({ id: 'split', index: 0 });

    const flat = new ZerdaVectorStore(embeddings, {
      database: createInMemoryVectorStore({ embedder }),
      metadata: 'flatten',
    });
    await flat.addDocuments([nested]);
    const [found] = await flat.similaritySearch('text splitter', 1, { 'loc.lines.from': { $gte: 3 } });
    expect(found?.metadata).toEqual({
      source: 'a.md',
      'loc.lines.from': 3,
      'loc.lines.to': 9,
      when: '2024-05-01T00:00:00.000Z',
    });
  });

  it('serves a LangChain chain through asRetriever, and builds with fromTexts / fromDocuments', async () => {
    const store = await ZerdaVectorStore.fromTexts(
      corpus.map((chunk) => chunk.text),
      corpus.map((chunk) => ({ ...chunk.metadata, chunkId: chunk.id })),
      embeddings,
      { database: createInMemoryVectorStore({ embedder }) },
    );
    const retriever = store.asRetriever({ k: 2, filter: { lang: 'en' } });
    const prompt = PromptTemplate.fromTemplate('Context:\n{context}\n\nQuestion: {question}');
    const chain = RunnableSequence.from([
      {
        context: retriever.pipe((docs: DocumentInterface[]) => docs.map((d) => d.metadata.chunkId).join(',')),
        question: new RunnablePassthrough(),
      },
      prompt,
      new FakeListChatModel({ responses: ['ok'] }),
      new StringOutputParser(),
    ]);
    expect(await chain.invoke('token budget for the prompt')).toBe('ok');
    const docs = await retriever.invoke('token budget for the prompt');
    expect(docs).toHaveLength(2);
    expect(docs[0]!.metadata.chunkId).toBe('context');
    expect(docs.every((document) => document.metadata.lang === 'en')).toBe(true);

    const again = await ZerdaVectorStore.fromDocuments(documents, embeddings, {
      database: createInMemoryVectorStore({ embedder }),
    });
    expect((await again.similaritySearch('FAISS nearest neighbour', 1))[0]?.id).toBe('faiss');
  });

  it('takes a native filter of the store’s convention, and refuses v1 stores and deleting where it cannot', async () => {
    const store = await storeOver(createInMemoryVectorStore({ embedder }));
    const native = await store.similaritySearch(
      'hybrid search',
      10,
      nativeFilter(zerdaFilterConvention, { lang: 'ar' }),
    );
    expect(native.map((document) => document.id)).toEqual(['arabic']);
    await expect(store.similaritySearch('x', 3, nativeFilter('chroma', { lang: 'ar' }))).rejects.toThrow(
      FilterError,
    );

    const v1 = { specificationVersion: 'v1', name: 'old-store', search: async () => ({ hits: [] }) };
    expect(() => new ZerdaVectorStore(embeddings, { database: v1 })).toThrow(ContractVersionError);
    expect(() => new ZerdaVectorStore(embeddings, {} as never)).toThrow(/store/);

    const cannotDelete = await storeOver(fromLangChainVectorStore(new FakeVectorStore(embeddings)));
    await expect(cannotDelete.delete({ ids: ['bm25'] })).rejects.toSatisfy(
      (error: unknown) => BackendError.isInstance(error) && error.operation === 'delete',
    );
  });

  it('round-trips: a LangChain store wrapped as Zerda, wrapped back as LangChain, keeps filters and ids', async () => {
    const warnings: Warning[] = [];
    const database = fromLangChainVectorStore(new FakeVectorStore(embeddings));
    const store = await storeOver(database, { onWarnings: (w) => warnings.push(...w) });
    const filter: FilterInput = { topic: 'fusion', year: { $lt: 2024 } };
    const results = await store.similaritySearch('fusion of rankings', 5, filter);
    expect(results.map((document) => document.id).sort()).toEqual(allowed(filter).sort());
    expect(warnings.some((warning) => warning.type === 'unsupported')).toBe(true);
  });
});
