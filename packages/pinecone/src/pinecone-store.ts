import type { VectorStoreOf } from '@zerda/core';
import { createVectorStore } from '@zerda/core/backend';
import { PineconeDriver } from './pinecone-driver.js';
import type { PineconeStoreSettings } from './pinecone-settings.js';

export type { PineconeLogger, PineconeMetric, PineconeStoreSettings } from './pinecone-settings.js';

/**
 * The Pinecone store: a contract-v2 `VectorDatabase` with `delete` and `list` (and, with the
 * `sparse` setting, `searchSparse` and `searchHybrid`). `store.driver` has the `namespace`, and
 * `open()` to find and check the index before the first operation.
 */
export type PineconeStore = VectorStoreOf<PineconeDriver> & { readonly driver: PineconeDriver };

/**
 * Zerda's Pinecone backend over the official client. Chunks are records: id, vector, and metadata
 * holding the chunk's metadata fields, its text (under `textKey`, unless a `textStore` keeps
 * texts) and its document id (under `docIdKey`); with `sparse`, a sparse vector too. Writes go in
 * requests within Pinecone's limits, each retried with backoff; filters in Zerda's language are
 * pushed down as Pinecone filters. Connects lazily, at the first operation. Pinecone is eventually
 * consistent: a write can take a moment to show in queries and counts.
 */
export function createPineconeStore(settings: PineconeStoreSettings = {}): PineconeStore {
  const { embedder, dimension, strictFilters } = settings;
  return createVectorStore(new PineconeDriver(settings), {
    embedder,
    dimension,
    strictFilters,
  }) as PineconeStore;
}
