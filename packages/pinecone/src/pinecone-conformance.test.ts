import { testVectorDatabase } from '@zerda/testing';
import { afterAll, beforeAll } from 'vitest';
import type { PineconeStore } from './pinecone-store.js';
import { createPineconeStore } from './pinecone-store.js';
import { type LoopbackPinecone, startLoopbackPinecone, unusedPort } from './test-utils/loopback-pinecone.js';
import { connectedLoopbackStore } from './test-utils/store-factory.js';

// The published conformance suite, through the real @pinecone-database/pinecone client, against
// the loopback Pinecone (one new index per store, found by name through describeIndex).

const apiKey = 'pcsk_loopback-conformance-key';
let server: LoopbackPinecone;
const indexOf = new WeakMap<PineconeStore, string>();

beforeAll(async () => {
  server = await startLoopbackPinecone({ apiKey });
});
afterAll(async () => {
  await server.close();
});

testVectorDatabase<PineconeStore>({
  name: 'pinecone (loopback)',
  // The store is told no metric: it describes the index (by name) and takes the index's. Sparse
  // vectors need a dotproduct index (Pinecone queries sparse values on no other).
  create: async ({ dimension, metric, embedder, sparse }) => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension,
      metric: sparse ? 'dot' : metric,
      ...(embedder ? { embedder } : {}),
      ...(sparse ? { sparse } : {}),
    });
    indexOf.set(store, indexName);
    return store;
  },
  destroy: (store) => {
    const name = indexOf.get(store);
    if (name !== undefined) server.deleteIndex(name);
  },
  capabilities: {
    metrics: ['cosine', 'dot', 'l2'],
    deletion: true,
    arrayMetadata: true,
    sparse: { hybrid: true },
    // Nothing listens on that port: connection refused, retried, then a BackendError.
    unreachable: async ({ dimension, metric }) =>
      createPineconeStore({
        apiKey,
        host: `http://127.0.0.1:${await unusedPort()}`,
        metric,
        dimension,
        retry: { maxRetries: 2, initialDelayMs: 5, maxDelayMs: 20 },
        timeoutMs: 1_000,
      }),
    unreachableTimeoutMs: 5_000,
  },
  propertyRuns: 15,
});
