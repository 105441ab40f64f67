import { FakeEmbeddings } from '@langchain/core/utils/testing';
import type { DistanceMetric, Embedder } from '@zerda/core';
import { testVectorDatabase } from '@zerda/testing';
import { expect, it } from 'vitest';
import { fromLangChainVectorStore, type LangChainVectorDatabase } from './langchain-vector-database.js';
import { HttpVectorStore, KeyedMemoryVectorStore } from './test-utils/langchain-stores.js';
import { ZerdaEmbeddings } from './zerda-embeddings.js';

// The conformance suite of @zerda/testing, run over LangChain vector stores wrapped by
// fromLangChainVectorStore: once over a store that returns similarities, once over one that
// returns distances (converted by the adapter), once with Zerda filters pushed down as a
// Document predicate. The store declares no filter convention by default, so every Zerda
// filter is honoured through the residual path (evaluated client-side by VectorRetriever).

/** Nothing listens on port 9 (discard) here: every call fails as a real client's would. */
const unreachableUrl = 'http://127.0.0.1:9';

function create(
  scores: 'similarity' | 'distance',
  extra: Parameters<typeof fromLangChainVectorStore>[1] = {},
) {
  return ({
    dimension,
    metric,
    embedder,
  }: {
    dimension: number;
    metric: DistanceMetric;
    embedder?: Embedder;
  }): LangChainVectorDatabase => {
    // The LangChain store embeds with the embedder the suite gives (wrapped as LangChain
    // Embeddings); without one it has placeholder embeddings that the adapter never calls.
    const embeddings = embedder ? new ZerdaEmbeddings({ embedder }) : new FakeEmbeddings();
    const store = new KeyedMemoryVectorStore(embeddings, { metric, scores });
    return fromLangChainVectorStore(store, {
      metric,
      scoreKind: scores,
      dimension,
      embedder: embedder ? 'store' : 'none',
      ...extra,
    });
  };
}

const capabilities = {
  metrics: ['cosine', 'dot', 'l2'] as const,
  deletion: true,
  arrayMetadata: true,
  unreachable: ({ dimension, metric }: { dimension: number; metric: DistanceMetric }) =>
    fromLangChainVectorStore(new HttpVectorStore(new FakeEmbeddings(), unreachableUrl), {
      metric,
      dimension,
      scoreKind: 'similarity',
      embedder: 'none',
    }),
  unreachableTimeoutMs: 5_000,
};

testVectorDatabase({
  name: 'langchain (similarity scores)',
  create: create('similarity'),
  capabilities,
  additionalTests: () => {
    it('declares no filter convention, so Zerda filters take the residual path', () => {
      const database = create('similarity')({ dimension: 4, metric: 'cosine' });
      expect(database.filterConvention).toBeUndefined();
    });
  },
});

testVectorDatabase({
  name: 'langchain (distance scores)',
  create: create('distance'),
  capabilities,
});

testVectorDatabase({
  name: 'langchain (document-predicate filters)',
  create: create('similarity', { filterConvention: 'document-predicate' }),
  capabilities: { ...capabilities, metrics: ['cosine'] },
});
