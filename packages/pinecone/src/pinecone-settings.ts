import type { Index, Pinecone } from '@pinecone-database/pinecone';
import { type DistanceMetric, type Embedder, InvalidArgumentError } from '@zerda/core';
import {
  lazySetting,
  type RetryEvent,
  type RetrySettings,
  readEnv,
  resolveRetrySettings,
} from '@zerda/core/backend';
import { pineconeLimits as limits } from './pinecone-records.js';
import type { RecordLayout } from './record-codec.js';
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
  /**
   * Keep a sparse (BM25) vector beside each dense one, as Pinecone's sparse-dense records (default
   * false): `add(chunks, { sparseVectors })`, `searchSparse` and `searchHybrid`. Needs an index
   * with the dotproduct metric, the only one Pinecone lets query sparse values.
   */
  sparse?: boolean;
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

/** The settings checked, with their defaults: what the driver works from. */
export interface ResolvedSettings {
  /** The API key, read (from the settings or PINECONE_API_KEY) when the first client is built. */
  apiKey: () => string | undefined;
  indexName: string | undefined;
  namespace: string;
  dimension: number | undefined;
  metric: DistanceMetric | undefined;
  layout: RecordLayout;
  maxBatchSize: number;
  maxRequestBytes: number;
  maxMetadataBytes: number;
  maxConcurrentWrites: number;
  retry: ReturnType<typeof resolveRetrySettings>;
  timeoutMs: number;
}

/** Checks every setting at construction (InvalidArgumentError naming the first wrong one); reads PINECONE_INDEX. */
export function resolveSettings(settings: PineconeStoreSettings): ResolvedSettings {
  const { host, index, textStore, textKey = 'text', docIdKey = 'docId', timeoutMs = 30_000 } = settings;
  const indexName =
    settings.indexName ?? (host === undefined && index === undefined ? readEnv('PINECONE_INDEX') : undefined);
  if (indexName === undefined && host === undefined && index === undefined) {
    refuse('indexName', undefined, 'give indexName, host or an index handle (or set PINECONE_INDEX)');
  }
  const namespace = settings.namespace ?? namespaceOfHandle(index) ?? '';
  if (typeof namespace !== 'string') refuse('namespace', namespace, 'expected a string');
  const dimension = settings.dimension ?? settings.embedder?.dimension;
  limitedInteger('dimension', dimension, 1, limits.maxDimension);
  const metric = settings.metric === undefined ? undefined : toZerdaMetric(settings.metric, 'metric');
  if (settings.sparse && metric !== undefined && metric !== 'dot') {
    refuse('metric', settings.metric, "sparse vectors need an index with the dotproduct metric ('dot')");
  }
  for (const [argument, value] of Object.entries({ textKey, docIdKey })) {
    if (typeof value !== 'string' || value.length === 0)
      refuse(argument, value, 'expected a non-empty string');
  }
  if (!textStore && textKey === docIdKey) refuse('docIdKey', docIdKey, 'must differ from textKey');
  if (!(timeoutMs > 0 && Number.isFinite(timeoutMs))) {
    refuse('timeoutMs', timeoutMs, 'expected a positive number of milliseconds');
  }
  return {
    apiKey: lazySetting({ name: 'apiKey', value: settings.apiKey, env: 'PINECONE_API_KEY', required: true }),
    indexName,
    namespace,
    dimension,
    metric,
    layout: { textKey: textStore ? undefined : textKey, docIdKey },
    maxBatchSize: limitedInteger('maxBatchSize', settings.maxBatchSize, 100, limits.maxRecordsPerUpsert),
    maxRequestBytes: limitedInteger('maxRequestBytes', settings.maxRequestBytes, limits.maxRequestBytes),
    maxMetadataBytes: limitedInteger('maxMetadataBytes', settings.maxMetadataBytes, limits.maxMetadataBytes),
    maxConcurrentWrites: limitedInteger('maxConcurrentWrites', settings.maxConcurrentWrites, 4, 64),
    retry: resolveRetrySettings(settings.retry),
    timeoutMs,
  };
}

export function refuse(argument: string, value: unknown, message: string): never {
  throw new InvalidArgumentError({ argument, value, message });
}

export function toZerdaMetric(metric: string, argument: string): DistanceMetric {
  const known: Record<string, DistanceMetric> = { cosine: 'cosine', dotproduct: 'dot', euclidean: 'l2' };
  const found = known[metric] ?? Object.values(known).find((zerda) => zerda === metric);
  return found ?? refuse(argument, metric, "expected 'cosine', 'dot' ('dotproduct') or 'l2' ('euclidean')");
}

/** The setting, or its default, checked to be an integer from 1 to `maximum`. */
function limitedInteger(
  argument: string,
  value: number | undefined,
  fallback: number,
  maximum = fallback,
): number {
  if (value === undefined) return fallback;
  if (!(Number.isSafeInteger(value) && value >= 1 && value <= maximum)) {
    refuse(argument, value, `expected an integer from 1 to ${maximum}`);
  }
  return value;
}

/** The namespace an injected index handle targets (the client keeps it in `target`). */
function namespaceOfHandle(index: Index | undefined): string | undefined {
  const target = (index as unknown as { target?: { namespace?: unknown } } | undefined)?.target;
  return typeof target?.namespace === 'string' ? target.namespace : undefined;
}
