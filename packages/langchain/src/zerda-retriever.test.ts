import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { DocumentInterface } from '@langchain/core/documents';
import type { BaseMessage } from '@langchain/core/messages';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnableLambda, RunnablePassthrough, RunnableSequence } from '@langchain/core/runnables';
import { FakeListChatModel, FakeVectorStore } from '@langchain/core/utils/testing';
import {
  AbortedError,
  BackendError,
  HashEmbedder,
  HybridRetriever,
  KeywordRetriever,
  type RetrieveChunksOptions,
  type SearchResult,
  VectorRetriever,
  BaseRetriever as ZerdaBaseRetriever,
} from '@zerda/core';
import { describe, expect, it } from 'vitest';
import type { ZerdaHitMetadata } from './documents.js';
import { fromLangChainVectorStore } from './langchain-store.js';
import { corpus } from './test-utils/corpus.js';
import { FailingVectorStore } from './test-utils/langchain-stores.js';
import { ZerdaEmbeddings } from './zerda-embeddings.js';
import { ZerdaRetriever } from './zerda-retriever.js';

const embedder = new HashEmbedder({ dimension: 256 });
const embeddings = new ZerdaEmbeddings({ embedder });

/** A hybrid retriever: BM25 plus dense vectors kept in LangChain's own FakeVectorStore. */
async function hybridOver(vectorStore: FakeVectorStore): Promise<HybridRetriever> {
  const keyword = new KeywordRetriever();
  keyword.add(corpus);
  const database = fromLangChainVectorStore(vectorStore, { embedder });
  await database.add(corpus);
  return new HybridRetriever({
    keyword,
    vector: new VectorRetriever({ store: database, embedder }),
    fusion: 'weighted+rrf',
  });
}

const metaOf = (document: DocumentInterface) => document.metadata.zerda as ZerdaHitMetadata;

describe('ZerdaRetriever in a LangChain chain', () => {
  it('returns the documents Zerda ranks, in its order, with scores and explanations in metadata', async () => {
    const hybrid = await hybridOver(new FakeVectorStore(embeddings));
    const question = 'how does hybrid search fuse keyword ranking with dense vectors';
    const expected = await hybrid.retrieve(question, { k: 4 });
    expect(expected.hits.length).toBe(4);
    // Both signals contribute, so the fused order is Zerda's own, not one branch's.
    expect(
      expected.hits.some((hit) => hit.scores.keyword !== undefined && hit.scores.vector !== undefined),
    ).toBe(true);

    const retriever = new ZerdaRetriever({ retriever: hybrid, k: 4 });
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'Answer from the context only.\n\n{context}'],
      ['human', '{question}'],
    ]);
    const model = new FakeListChatModel({ responses: ['Hybrid search fuses both rankings.'] });
    const seenPrompts: string[] = [];
    const recorder = BaseCallbackHandler.fromMethods({
      handleChatModelStart(_llm, messages: BaseMessage[][]) {
        seenPrompts.push(
          messages
            .flat()
            .map((message) => String(message.content))
            .join('\n'),
        );
      },
    });
    const formatDocuments = (documents: DocumentInterface[]) =>
      documents
        .map((document, index) => `[${index + 1}] (${document.id}) ${document.pageContent}`)
        .join('\n');

    const answer = RunnableSequence.from([
      (input: { documents: DocumentInterface[]; question: string }) => ({
        context: formatDocuments(input.documents),
        question: input.question,
      }),
      prompt,
      model,
      new StringOutputParser(),
    ]);
    const chain = RunnableSequence.from([
      { documents: retriever, question: new RunnablePassthrough() },
      RunnablePassthrough.assign({ answer }),
    ]);

    const output = (await chain.invoke(question, { callbacks: [recorder] })) as {
      documents: DocumentInterface[];
      question: string;
      answer: string;
    };

    expect(output.answer).toBe('Hybrid search fuses both rankings.');
    expect(output.documents.map((document) => document.id)).toEqual(expected.hits.map((hit) => hit.chunk.id));
    output.documents.forEach((document, index) => {
      const hit = expected.hits[index]!;
      expect(document.pageContent).toBe(hit.chunk.text);
      const zerda = metaOf(document);
      expect(zerda).toMatchObject({
        id: hit.chunk.id,
        score: hit.score,
        rank: index + 1,
        retriever: 'hybrid',
      });
      expect(zerda.scores).toEqual(hit.scores);
      expect(zerda.ranks).toEqual(hit.ranks);
      expect(zerda.explanation?.method).toBe('weighted+rrf');
      expect(zerda.explanation?.description).toContain('RRF');
      // The chunk's own metadata stays at the top level, its docId included.
      expect(document.metadata.lang).toBe(hit.chunk.metadata?.lang);
      if (hit.chunk.docId !== undefined) expect(document.metadata.docId).toBe(hit.chunk.docId);
    });
    const scores = output.documents.map((document) => metaOf(document).score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);

    // The prompt the model saw holds the context in Zerda's order.
    expect(seenPrompts).toHaveLength(1);
    const positions = expected.hits.map((hit) => seenPrompts[0]!.indexOf(`(${hit.chunk.id})`));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('runs in batch and as part of a pipe, with LangChain callbacks', async () => {
    const hybrid = await hybridOver(new FakeVectorStore(embeddings));
    const retriever = new ZerdaRetriever({ retriever: hybrid, k: 3 });
    const questions = [
      'reciprocal rank fusion',
      'vector database metadata filters',
      'token budget for context',
    ];
    const events: string[] = [];
    const handler = BaseCallbackHandler.fromMethods({
      handleRetrieverStart(_retriever, query: string) {
        events.push(`start:${query}`);
      },
      handleRetrieverEnd(documents: DocumentInterface[]) {
        events.push(`end:${documents.length}`);
      },
    });

    const batched = await retriever.batch(questions, { callbacks: [handler] });
    for (const [index, question] of questions.entries()) {
      const direct = await hybrid.retrieve(question, { k: 3 });
      expect(batched[index]!.map((document) => document.id)).toEqual(direct.hits.map((hit) => hit.chunk.id));
    }
    expect(events.filter((event) => event.startsWith('start:')).sort()).toEqual(
      questions.map((question) => `start:${question}`).sort(),
    );
    expect(events.filter((event) => event === 'end:3')).toHaveLength(3);

    const ids = retriever.pipe(
      RunnableLambda.from((documents: DocumentInterface[]) => documents.map((document) => document.id)),
    );
    expect(await ids.invoke('reciprocal rank fusion')).toEqual(batched[0]!.map((document) => document.id));
  });

  it('applies its filter and per-call settings from config.configurable.zerda', async () => {
    const hybrid = await hybridOver(new FakeVectorStore(embeddings));
    const retriever = new ZerdaRetriever({ retriever: hybrid, filter: { lang: 'en' }, k: 5 });
    const english = await retriever.invoke('hybrid search combines keywords and vectors');
    expect(english.length).toBe(5);
    expect(english.every((document) => document.metadata.lang === 'en')).toBe(true);

    const recent = await retriever.invoke('hybrid search combines keywords and vectors', {
      configurable: { zerda: { k: 2, filter: { year: { $gte: 2024 } } } },
    });
    expect(recent.length).toBe(2);
    expect(recent.every((document) => (document.metadata.year as number) >= 2024)).toBe(true);
  });

  it('passes the AbortSignal to Zerda and stops when it fires', async () => {
    const seen: Array<AbortSignal | undefined> = [];
    class WaitingRetriever extends ZerdaBaseRetriever {
      readonly name = 'waiting';
      protected async retrieveChunks(_query: string, _k: number, options: RetrieveChunksOptions) {
        seen.push(options.signal);
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, 5_000);
          options.signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new AbortedError({ cause: options.signal?.reason }));
          });
        });
        return [];
      }
    }
    const retriever = new ZerdaRetriever({ retriever: new WaitingRetriever() });
    const controller = new AbortController();
    const started = Date.now();
    const pending = retriever.invoke('anything', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user cancelled')), 20);
    await expect(pending).rejects.toSatisfy((error: unknown) => AbortedError.isInstance(error));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(seen[0]).toBe(controller.signal);

    // A timeout in the config becomes a signal as well.
    await expect(retriever.invoke('anything', { timeout: 20 })).rejects.toThrow();
    expect(seen[1]).toBeInstanceOf(AbortSignal);
  });

  it('keeps answering from the other branches when a wrapped LangChain store fails, and reports it', async () => {
    const failing = new FailingVectorStore(embeddings, new Error('ECONNRESET while querying'));
    const keyword = new KeywordRetriever();
    keyword.add(corpus);
    const database = fromLangChainVectorStore(failing, { embedder });
    const hybrid = new HybridRetriever({
      keyword,
      vector: new VectorRetriever({ store: database, embedder }),
    });

    // In Zerda: the vector branch's error is a typed BackendError with the LangChain error as cause.
    const vectorOnly = new VectorRetriever({ store: database, embedder });
    const failure = await vectorOnly.retrieve('fusion').catch((error: unknown) => error);
    expect(BackendError.isInstance(failure)).toBe(true);
    expect((failure as BackendError).cause).toBe(failing.failure);
    expect((failure as BackendError).backend).toBe('langchain:memory');

    const results: SearchResult[] = [];
    const customEvents: Array<{ name: string; data: unknown }> = [];
    const handler = BaseCallbackHandler.fromMethods({
      handleCustomEvent(name: string, data: unknown) {
        customEvents.push({ name, data });
      },
    });
    const retriever = new ZerdaRetriever({
      retriever: hybrid,
      k: 3,
      onResult: (result) => results.push(result),
    });
    const documents = await retriever.invoke('reciprocal rank fusion of ranked lists', {
      callbacks: [handler],
    });

    expect(documents.length).toBe(3);
    expect(documents[0]!.id).toBe('rrf');
    expect(documents.every((document) => metaOf(document).scores.vector === undefined)).toBe(true);
    const warning = results[0]!.warnings.find((w) => w.type === 'partial-failure');
    expect(warning?.source).toBe('vector');
    expect(warning?.message).toContain('ECONNRESET');
    expect(customEvents).toHaveLength(1);
    expect(customEvents[0]!.name).toBe('zerda_warnings');
    expect((customEvents[0]!.data as { warnings: unknown[] }).warnings).toContainEqual(warning);
  });

  it('puts Zerda fields under a configurable metadata key', async () => {
    const keyword = new KeywordRetriever();
    keyword.add(corpus);
    const retriever = new ZerdaRetriever({ retriever: keyword, metadataKey: '_search', k: 1 });
    const [document] = await retriever.invoke('inverse document frequency');
    expect(document?.id).toBe('bm25');
    expect(document?.metadata._search).toMatchObject({
      id: 'bm25',
      docId: 'retrieval',
      rank: 1,
      retriever: 'keyword',
    });
    expect(document?.metadata.zerda).toBeUndefined();
    expect(() => new ZerdaRetriever({ retriever: {} as never })).toThrow(TypeError);
  });
});
