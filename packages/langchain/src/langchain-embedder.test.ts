import { Embeddings } from '@langchain/core/embeddings';
import { FakeEmbeddings, FakeVectorStore, SyntheticEmbeddings } from '@langchain/core/utils/testing';
import {
  AbortedError,
  BackendError,
  HashEmbedder,
  InMemoryVectorStore,
  InvalidArgumentError,
  VectorRetriever,
} from '@zerda/core';
import { describe, expect, it } from 'vitest';
import { fromLangChainEmbeddings, LangChainEmbedder } from './langchain-embedder.js';
import { corpus } from './test-utils/corpus.js';
import { ZerdaEmbeddings } from './zerda-embeddings.js';

/** LangChain embeddings that count their calls and can be told to fail or stall. */
class CountingEmbeddings extends Embeddings {
  documents = 0;
  queries = 0;
  constructor(
    private readonly behaviour: 'answer' | 'fail' | 'stall' | 'short' = 'answer',
    readonly failure = new Error('429 Too Many Requests'),
  ) {
    super({});
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    this.documents++;
    if (this.behaviour === 'fail') throw this.failure;
    if (this.behaviour === 'stall') await new Promise((resolve) => setTimeout(resolve, 5_000));
    if (this.behaviour === 'short') return texts.slice(1).map(() => [1, 0, 0]);
    return texts.map((text) => [text.length, 1, text.includes('a') ? 1 : 0]);
  }
  async embedQuery(text: string): Promise<number[]> {
    this.queries++;
    if (this.behaviour === 'fail') throw this.failure;
    return [text.length, 2, 0];
  }
}

describe('fromLangChainEmbeddings', () => {
  it("embeds with LangChain's embedDocuments and embedQuery, as Float32Arrays", async () => {
    const embeddings = new CountingEmbeddings();
    const embedder = fromLangChainEmbeddings(embeddings, { dimension: 3 });
    expect(embedder.dimension).toBe(3);
    const vectors = await embedder.embed(['abc', 'xyz!']);
    expect(vectors).toEqual([Float32Array.from([3, 1, 1]), Float32Array.from([4, 1, 0])]);
    expect(await embedder.embedQuery('hello')).toEqual(Float32Array.from([5, 2, 0]));
    expect(embeddings.documents).toBe(1);
    expect(embeddings.queries).toBe(1);
    expect(await embedder.embed([])).toEqual([]);
    expect(embeddings.documents).toBe(1);
  });

  it('knows the dimension of SyntheticEmbeddings, learns or probes it otherwise', async () => {
    expect(fromLangChainEmbeddings(new SyntheticEmbeddings({ vectorSize: 12 })).dimension).toBe(12);
    const unknown = fromLangChainEmbeddings(new FakeEmbeddings());
    expect(() => unknown.dimension).toThrow(InvalidArgumentError);
    await unknown.embed(['learn it']);
    expect(unknown.dimension).toBe(4);
    const probed = await LangChainEmbedder.create(new FakeEmbeddings());
    expect(probed.dimension).toBe(4);
    expect(() => fromLangChainEmbeddings(new FakeEmbeddings(), { dimension: 0 })).toThrow(
      InvalidArgumentError,
    );
    expect(() => fromLangChainEmbeddings({} as never)).toThrow(InvalidArgumentError);
  });

  it('serves a Zerda store and retriever', async () => {
    const embedder = fromLangChainEmbeddings(
      new ZerdaEmbeddings({ embedder: new HashEmbedder({ dimension: 64 }) }),
      {
        dimension: 64,
      },
    );
    const store = new InMemoryVectorStore({ embedder });
    await store.add(corpus);
    const result = await new VectorRetriever({ store, embedder }).retrieve('reciprocal rank fusion', {
      k: 1,
    });
    expect(result.hits[0]!.chunk.id).toBe('rrf');
  });

  it('turns failures into BackendErrors with the cause, and checks every vector', async () => {
    const failing = new CountingEmbeddings('fail');
    const error = await fromLangChainEmbeddings(failing)
      .embed(['x'])
      .catch((caught: unknown) => caught);
    expect(BackendError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      backend: 'langchain-embeddings',
      operation: 'embed',
      cause: failing.failure,
    });
    await expect(fromLangChainEmbeddings(failing).embedQuery('x')).rejects.toSatisfy(
      (caught: unknown) => BackendError.isInstance(caught) && caught.cause === failing.failure,
    );
    await expect(fromLangChainEmbeddings(new CountingEmbeddings('short')).embed(['a', 'b'])).rejects.toThrow(
      /returned 1 vectors for 2 texts/,
    );
    await expect(
      fromLangChainEmbeddings(new CountingEmbeddings(), { dimension: 5 }).embed(['a']),
    ).rejects.toThrow(/3 dimensions, expected 5/);
  });

  it('stops waiting when the signal fires', async () => {
    const embedder = fromLangChainEmbeddings(new CountingEmbeddings('stall'), { dimension: 3 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const started = Date.now();
    await expect(embedder.embed(['x'], { signal: controller.signal })).rejects.toSatisfy((error: unknown) =>
      AbortedError.isInstance(error),
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('ZerdaEmbeddings', () => {
  it('is LangChain Embeddings over a Zerda embedder, usable by a LangChain store', async () => {
    const zerda = new HashEmbedder({ dimension: 32 });
    const embeddings = new ZerdaEmbeddings({ embedder: zerda });
    expect(embeddings).toBeInstanceOf(Embeddings);
    expect(embeddings.dimensions).toBe(32);
    const [vector] = await embeddings.embedDocuments(['hello world']);
    expect(vector).toEqual(Array.from((await zerda.embed(['hello world']))[0]!));
    expect(await embeddings.embedQuery('hello world')).toHaveLength(32);
    const store = await FakeVectorStore.fromTexts(['apples and pears', 'rivers and valleys'], {}, embeddings);
    const [found] = await store.similaritySearch('valleys with rivers', 1);
    expect(found?.pageContent).toBe('rivers and valleys');
  });
});
