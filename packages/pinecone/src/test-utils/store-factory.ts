import type { DistanceMetric, Embedder } from '@zerda/core';
import { createPineconeStore, type PineconeStore, type PineconeStoreSettings } from '../pinecone-store.js';
import type { LoopbackMetric, LoopbackPinecone } from './loopback-pinecone.js';

/** Pinecone's name of a Zerda metric. */
export function pineconeMetricOf(metric: DistanceMetric): LoopbackMetric {
  return metric === 'dot' ? 'dotproduct' : metric === 'l2' ? 'euclidean' : 'cosine';
}

/** Retries fast enough for tests: a few ms of backoff. */
export const fastRetry = {
  maxRetries: 6,
  initialDelayMs: 2,
  maxDelayMs: 20,
  maxRetryAfterMs: 2_000,
} as const;

let serial = 0;

/** A new index on the loopback server (unique name), and a store on it through the real client (not yet connected). */
export function loopbackStore(
  server: LoopbackPinecone,
  {
    dimension,
    metric,
    embedder,
    apiKey,
    ...settings
  }: {
    dimension: number;
    metric: DistanceMetric;
    embedder?: Embedder;
    apiKey: string;
  } & Partial<PineconeStoreSettings>,
): { store: PineconeStore; indexName: string } {
  serial++;
  const indexName = `zerda-test-${process.pid}-${serial}`;
  server.createIndex({ name: indexName, dimension, metric: pineconeMetricOf(metric) });
  const store = createPineconeStore({
    apiKey,
    controllerHostUrl: server.url,
    indexName,
    retry: fastRetry,
    timeoutMs: 5_000,
    ...(embedder ? { embedder } : {}),
    ...settings,
  });
  return { store, indexName };
}

/** As `loopbackStore`, opened: the driver has described its index and taken its metric (no other request). */
export async function connectedLoopbackStore(
  server: LoopbackPinecone,
  options: Parameters<typeof loopbackStore>[1],
): Promise<{ store: PineconeStore; indexName: string }> {
  const { store, indexName } = loopbackStore(server, options);
  await store.driver.open();
  return { store, indexName };
}
