import { randomUUID } from 'node:crypto';
import { type Index, Pinecone } from '@pinecone-database/pinecone';
import type { DistanceMetric, VectorDatabase } from '@zerda/core';
import { createVectorStore } from '@zerda/core/backend';
import { testVectorDatabase } from '@zerda/testing';
import { describe, expect, it } from 'vitest';
import { createPineconeStore } from './pinecone-store.js';
import { unusedPort } from './test-utils/loopback-pinecone.js';
import { paddedDriver } from './test-utils/padded-store.js';

// The conformance suite against the real Pinecone service, in namespaces of one existing dense
// index (created beforehand, any metric, dimension at least 66; a dotproduct one runs the sparse
// tests too). Runs only when the environment names it; each store gets its own namespace, deleted
// after the test.
//
//   PINECONE_API_KEY=... PINECONE_INDEX=my-test-index npx vitest run packages/pinecone

const apiKey = process.env.PINECONE_API_KEY;
const indexName = process.env.PINECONE_INDEX;
const controllerHostUrl = process.env.PINECONE_CONTROLLER_HOST;
const live = Boolean(apiKey && indexName);
const title = live
  ? `Pinecone live service (index ${indexName})`
  : 'Pinecone live service (skipped: set PINECONE_API_KEY and PINECONE_INDEX to run these against the real service)';

const clientSettings = { apiKey: apiKey!, ...(controllerHostUrl ? { controllerHostUrl } : {}) };
const description = live ? await new Pinecone(clientSettings).describeIndex(indexName!) : undefined;
const metric: DistanceMetric =
  description?.metric === 'dotproduct' ? 'dot' : description?.metric === 'euclidean' ? 'l2' : 'cosine';
const runId = randomUUID().slice(0, 8);
let serial = 0;

describe.skipIf(!live)(title, () => {
  const client = live ? new Pinecone(clientSettings) : undefined;
  let handle: Index | undefined;
  const namespaces = new WeakMap<VectorDatabase, string>();

  testVectorDatabase({
    name: 'pinecone (live)',
    // The index's vectors are longer than the suite's: a driver zero-pads them (see paddedDriver).
    create: async ({ dimension, embedder, sparse }) => {
      const namespace = `zerda-${runId}-${++serial}`;
      const inner = createPineconeStore({
        ...clientSettings,
        indexName: indexName!,
        ...(description?.host ? { host: description.host } : {}),
        namespace,
        ...(sparse ? { sparse } : {}),
      }).driver;
      await inner.open();
      const store = createVectorStore(paddedDriver(inner, dimension), { embedder, dimension });
      namespaces.set(store, namespace);
      return store;
    },
    destroy: async (store) => {
      const namespace = namespaces.get(store);
      if (namespace === undefined) return;
      handle ??= client!.index({
        name: indexName!,
        ...(description?.host ? { host: description.host } : {}),
      });
      await handle.deleteAll({ namespace }).catch(() => undefined); // an unused namespace does not exist
    },
    capabilities: {
      metrics: [metric],
      deletion: true,
      arrayMetadata: true,
      // Pinecone queries sparse values on dotproduct indexes only.
      ...(metric === 'dot' ? { sparse: { hybrid: true } } : {}),
      unreachable: async ({ dimension }) =>
        createPineconeStore({
          apiKey: apiKey!,
          host: `http://127.0.0.1:${await unusedPort()}`,
          metric,
          dimension,
          retry: { maxRetries: 2, initialDelayMs: 5, maxDelayMs: 20 },
        }),
    },
    propertyRuns: 3,
    testTimeoutMs: 180_000,
    additionalTests: () => {
      it('connects by name and reads the index metric and dimension', async () => {
        const store = createPineconeStore({ ...clientSettings, indexName: indexName! });
        await store.driver.open();
        expect(store.capabilities.metric).toBe(metric);
        expect(store.dimension).toBe(description!.dimension);
      });
    },
  });
});
