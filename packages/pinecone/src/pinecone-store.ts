import type { Index, Pinecone } from '@pinecone-database/pinecone';
import type { DistanceMetric, Embedder, VectorStoreOf } from '@zerda/core';
import { createVectorStore, type RetryEvent, type RetrySettings } from '@zerda/core/backend';
import { PineconeDriver } from './pinecone-driver.js';
import type { TextStore } from './text-store.js';

/** Pinecone's metric names, accepted as well as Zerda's. */
export type PineconeMetric = 'cosine' | 'dotproduct' | 'euclidean';

/** Where retries are reported; nothing is logged without one. Never given a secret. */
export interface PineconeLogger {
  warn?(message: string): void;
  debug?(message: string): void;
}

export interface PineconeStoreSettings {
  /** API key. Default: `PINECONE_API_KEY`, read at the first request. Not needed with `client` or `index`. Never logged. */
  apiKey?: string;
  /** An existing client to share (its own settings, retries included, then apply). */
  client?: Pinecone;
  /** An existing index handle (`pc.index({ name, host, namespace })`): no control-plane call; set `metric` (default 'cosine'). */
  index?: Index;
  /** The index name. Default: `PINECONE_INDEX` when neither `host` nor `index` is given. */
  indexName?: string;
  /** The index's data-plane host. With a host and a `metric`, no control-plane call is made. */
  host?: string;
  /** Control-plane URL for the client the store builds. Default: `PINECONE_CONTROLLER_HOST`, else Pinecone's. */
  controllerHostUrl?: string;
  /** The namespace read and written (default: the index handle's, else '', the default namespace). */
  namespace?: string;
  /** Embeds chunk texts on `add` (when no `embeddings` are given) and query texts on `search`. */
  embedder?: Embedder;
  /** The index's metric, in Zerda's words or Pinecone's. Default: the index description's; checked against it. */
  metric?: DistanceMetric | PineconeMetric;
  /** Vector dimension. Default: the embedder's, else the index's. Checked against the index. */
  dimension?: number;
  /** Metadata key of the chunk text (default 'text', as LangChain's Pinecone store uses). */
  textKey?: string;
  /** Metadata key of the document id, which the filter convention reads for `docId` (default 'docId'). */
  docIdKey?: string;
  /** Keep chunk texts here instead of in Pinecone's metadata (at most 40 KB per record, text included). */
  textStore?: TextStore;
  /** Records per upsert request (default 100, at most 1,000). */
  maxBatchSize?: number;
  /** Bytes per upsert request body (default and most: 2,000,000); a batch is split to fit. */
  maxRequestBytes?: number;
  /** Bytes of metadata per record (default and most: 40,960). */
  maxMetadataBytes?: number;
  /** Upsert requests in flight at once during `add` (default 4). */
  maxConcurrentWrites?: number;
  /** Retries on 429, 5xx, connection failures and timeouts (core's `withRetry`). */
  retry?: RetrySettings;
  /** How long one request may take before it is abandoned and retried (default 30,000 ms). */
  timeoutMs?: number;
  /** Refuse any `filter` Pinecone cannot evaluate whole (FilterError) instead of evaluating the rest client-side. */
  strictFilters?: boolean;
  /** Where retries are reported (default: nowhere). */
  logger?: PineconeLogger;
  /** Called before each retry (for metrics, tests). */
  onRetry?: (event: RetryEvent) => void;
}

/**
 * The Pinecone store: a contract-v2 `VectorDatabase` with `delete` and `list`. `store.driver` has
 * the `namespace`, and `open()` to find and check the index before the first operation.
 */
export type PineconeStore = VectorStoreOf<PineconeDriver> & { readonly driver: PineconeDriver };

/**
 * Zerda's Pinecone backend over the official client. Chunks are records: id, vector, and metadata
 * holding the chunk's metadata fields, its text (under `textKey`, unless a `textStore` keeps
 * texts) and its document id (under `docIdKey`). Writes go in requests within Pinecone's limits,
 * each retried with backoff; filters in Zerda's language are pushed down as Pinecone filters.
 * Connects lazily, at the first operation. Pinecone is eventually consistent: a write can take a
 * moment to show in queries and counts.
 */
export function createPineconeStore(settings: PineconeStoreSettings = {}): PineconeStore {
  const { embedder, dimension, strictFilters } = settings;
  return createVectorStore(new PineconeDriver(settings), {
    embedder,
    dimension,
    strictFilters,
  }) as PineconeStore;
}
