import { testVectorDatabase } from '@zerda/testing';
import { ChromaClient } from 'chromadb';
import { inject } from 'vitest';
import { type ChromaStore, createChromaStore } from './chroma-store.js';
import { freePort } from './test-utils/chroma-server.js';

const url = inject('chromaUrl');
// One client for every store, as an application would share it.
const client = new ChromaClient({ host: new URL(url).hostname, port: Number(new URL(url).port) });

testVectorDatabase<ChromaStore>({
  name: 'chroma',
  create: ({ dimension, metric, embedder }) =>
    createChromaStore({
      client,
      url,
      collection: `conformance-${crypto.randomUUID()}`,
      dimension,
      metric,
      embedder,
      // Small, so that the batching is exercised.
      maxBatchSize: 50,
      timeoutMs: 10_000,
    }),
  destroy: (store) => store.deleteCollection(),
  capabilities: {
    metrics: ['cosine', 'l2', 'dot'],
    deletion: true,
    arrayMetadata: false,
    unreachable: async ({ dimension, metric }) =>
      createChromaStore({ url: `http://127.0.0.1:${await freePort()}`, dimension, metric, timeoutMs: 2_000 }),
    unreachableTimeoutMs: 3_000,
  },
});
