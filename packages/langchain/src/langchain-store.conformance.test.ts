import { FakeEmbeddings } from '@langchain/core/utils/testing';
import { type DistanceMetric, type Embedder, parseFilter } from '@zerda/core';
import { testVectorDatabase } from '@zerda/testing';
import { expect, it } from 'vitest';
import { distanceConversions } from './langchain-scores.js';
import { fromLangChainVectorStore, type LangChainStore } from './langchain-store.js';
import { HttpVectorStore, KeyedMemoryVectorStore } from './test-utils/langchain-stores.js';
import { ZerdaEmbeddings } from './zerda-embeddings.js';

// The conformance suite of @zerda/testing, run over LangChain vector stores wrapped by
// fromLangChainVectorStore: once over a store that returns similarities, once over one that
// returns distances (converted by the adapter), once with Zerda filters pushed down as a
// Document predicate. By default the store's convention pushes no Zerda filter down, so every
// Zerda filter is honoured through the residual path (evaluated client-side by core's store).

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
  }): LangChainStore => {
    // The LangChain store embeds with the embedder the suite gives (wrapped as LangChain
    // Embeddings); without one it has placeholder embeddings that the adapter never calls.
    const embeddings = embedder ? new ZerdaEmbeddings({ embedder }) : new FakeEmbeddings();
    const store = new KeyedMemoryVectorStore(embeddings, { metric, scores });
    return fromLangChainVectorStore(store, {
      metric,
      scoreConversion: scores === 'similarity' ? 'similarity' : distanceConversions[metric],
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
      scoreConversion: 'similarity',
      embedder: 'none',
    }),
  unreachableTimeoutMs: 5_000,
};

testVectorDatabase({
  name: 'langchain (similarity scores)',
  create: create('similarity'),
  capabilities,
  additionalTests: () => {
    it('pushes no Zerda filter down by default, so Zerda filters take the residual path', () => {
      const database = create('similarity')({ dimension: 4, metric: 'cosine' });
      expect(database.filterConvention?.name).toBe('langchain');
      expect(database.filterConvention?.canPushDown(parseFilter({ lang: 'en' }))).toBe(false);
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
