import { type DistanceMetric, type Embedder, InvalidArgumentError } from '@zerda/core';
import {
  checkPositiveIntegers,
  type ResolvedRetrySettings,
  type RetrySettings,
  readEnv,
  resolveRetrySettings,
} from '@zerda/core/backend';
import { ChromaClient } from 'chromadb';

export interface ChromaStoreSettings {
  /**
   * An existing client, shared with the rest of the application (then `url`, `headers`, `tenant`
   * and `database` are not used: the client has its own).
   */
  client?: ChromaClient;
  /** The server. Default: `CHROMA_URL` from the environment, else `http://localhost:8000`. */
  url?: string;
  /**
   * HTTP headers sent with every request, for example for authentication. Default: when
   * `CHROMA_API_KEY` is set, `{ 'x-chroma-token': CHROMA_API_KEY }` (read at the first request).
   */
  headers?: Record<string, string>;
  /** Default: `CHROMA_TENANT`, else Chroma's `default_tenant` (read at the first request). */
  tenant?: string;
  /** Default: `CHROMA_DATABASE`, else Chroma's `default_database` (read at the first request). */
  database?: string;
  /** The collection, created when missing (default `CHROMA_COLLECTION`, else 'zerda'). */
  collection?: string;
  /**
   * Similarity, and the collection's space: 'cosine' (default; space 'cosine'), 'l2' (space 'l2')
   * or 'dot' (space 'ip'). An existing collection of another space is refused.
   */
  metric?: DistanceMetric;
  /** Embeds chunk texts on `add` (when no `embeddings` are given) and query texts on `search`. */
  embedder?: Embedder;
  /** Vector dimension. Default: the embedder's, else the collection's, else the first vectors added. */
  dimension?: number;
  /** Most records per write request. Default and upper bound: the server's limit (5461 locally), asked once. */
  maxBatchSize?: number;
  /** Longest wait for one call to the server, retries included, in ms (default 30,000). */
  timeoutMs?: number;
  /** Retries of connection, server and rate-limit errors (default: 5, backoff from 250 ms), within `timeoutMs`. */
  retry?: RetrySettings;
  /** Refuse any `filter` Chroma cannot evaluate whole (FilterError) instead of evaluating the rest here. */
  strictFilters?: boolean;
  /** The metadata key holding each chunk's document id, which filters on `docId` read (default 'docId'). */
  docIdKey?: string;
}

/** The driver's settings: the store's, checked, with their defaults. */
export interface ChromaDriverSettings {
  /** The client, made at the first request (credentials are read then). */
  readonly client: () => ChromaClient;
  /** The server's URL, as errors name it ('an injected client' when only a client was given). */
  readonly url: string;
  readonly collectionName: string;
  readonly metric: DistanceMetric;
  readonly docIdKey: string;
  readonly maxBatchSize: number | undefined;
  readonly timeoutMs: number;
  readonly retry: ResolvedRetrySettings;
}

/** Checks the settings (InvalidArgumentError naming the first bad one) and fills in the defaults. */
export function resolveChromaSettings(settings: ChromaStoreSettings): ChromaDriverSettings {
  const { metric = 'cosine', maxBatchSize, timeoutMs = 30_000, docIdKey = 'docId' } = settings;
  if (metric !== 'cosine' && metric !== 'dot' && metric !== 'l2') {
    throw invalid('metric', metric, "expected 'cosine', 'dot' or 'l2'");
  }
  checkPositiveIntegers({ maxBatchSize, timeoutMs });
  if (typeof docIdKey !== 'string' || docIdKey.length === 0 || docIdKey.startsWith('$')) {
    throw invalid('docIdKey', docIdKey, "expected a non-empty metadata key not starting with '$'");
  }
  const collectionName = settings.collection ?? readEnv('CHROMA_COLLECTION') ?? 'zerda';
  if (typeof collectionName !== 'string' || collectionName.length === 0) {
    throw invalid('collection', collectionName, 'expected a name');
  }
  const url =
    settings.url ??
    (settings.client ? 'an injected client' : (readEnv('CHROMA_URL') ?? 'http://localhost:8000'));
  if (settings.client === undefined) parseServerUrl(url);
  let client = settings.client;
  const retry = resolveRetrySettings(settings.retry);
  const lazyClient = () => (client ??= newClient(settings, url));
  return { client: lazyClient, url, collectionName, metric, docIdKey, maxBatchSize, timeoutMs, retry };
}

/** The client for `url`, with the credentials, tenant and database of the settings or the environment. */
function newClient(settings: ChromaStoreSettings, url: string): ChromaClient {
  const apiKey = readEnv('CHROMA_API_KEY');
  const headers = settings.headers ?? (apiKey ? { 'x-chroma-token': apiKey } : undefined);
  const tenant = settings.tenant ?? readEnv('CHROMA_TENANT');
  const database = settings.database ?? readEnv('CHROMA_DATABASE');
  return new ChromaClient({
    ...parseServerUrl(url),
    ...(headers === undefined ? {} : { headers }),
    ...(tenant === undefined ? {} : { tenant }),
    ...(database === undefined ? {} : { database }),
  });
}

/** The client takes a host, a port and ssl: an http(s) URL without a path. */
function parseServerUrl(url: string): { host: string; port: number; ssl: boolean } {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (
    !(parsed?.protocol === 'http:' || parsed?.protocol === 'https:') ||
    !['/', ''].includes(parsed.pathname)
  ) {
    const message = 'expected an http:// or https:// URL of a host and port (the client takes no path)';
    throw invalid('url', url, message);
  }
  const ssl = parsed.protocol === 'https:';
  // URL keeps IPv6 hosts in brackets, as the client's base URL needs them.
  return { host: parsed.hostname, port: parsed.port === '' ? (ssl ? 443 : 80) : Number(parsed.port), ssl };
}

function invalid(argument: string, value: unknown, message: string): InvalidArgumentError {
  return new InvalidArgumentError({ argument, value, message });
}
