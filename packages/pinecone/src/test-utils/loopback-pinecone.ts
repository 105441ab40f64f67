import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { evaluatePineconeFilter, type PineconeFilterSemantics } from './pinecone-filter-evaluator.js';

/*
 * A loopback Pinecone: a node:http server on 127.0.0.1 that speaks the parts of Pinecone's HTTP
 * API that the official client calls for dense indexes, with Pinecone's documented semantics, so
 * that the real `@pinecone-database/pinecone` client (and so the Zerda store) can be tested
 * without the service.
 *
 * Control plane (at the server's root, `controllerHostUrl`): `GET /indexes/{name}`, `GET /indexes`.
 * Data plane (one host per index, `http://127.0.0.1:PORT/hosts/{name}`):
 * `POST /vectors/upsert`, `POST /query`, `GET /vectors/fetch`, `GET /vectors/list`,
 * `POST /vectors/update` (by id), `POST /vectors/delete` (ids, filter, deleteAll),
 * `POST /describe_index_stats`.
 *
 * Semantics, from Pinecone's documentation:
 * - Metrics: `cosine` scores cos θ, `dotproduct` the inner product (both best-first, descending),
 *   `euclidean` the SQUARED Euclidean distance (ascending: the nearest first). Values are kept
 *   as float32, as Pinecone keeps them.
 * - Limits: 2 MB per upsert request and 1,000 records; 40 KB of metadata per record (the JSON
 *   size); ids of 1 to 512 characters; dense vectors of the index's dimension with at least one
 *   non-zero value; top_k from 1 to 10,000; 1,000 ids per fetch or delete.
 * - Metadata: string, number, boolean or list of strings values; null is refused.
 * - Sparse-dense (hybrid) records, as Pinecone documents them for a dense index
 *   (https://docs.pinecone.io/guides/data/upsert-sparse-dense-vectors,
 *   https://docs.pinecone.io/guides/data/query-sparse-dense-vectors,
 *   https://docs.pinecone.io/guides/data/understanding-hybrid-search,
 *   https://docs.pinecone.io/reference/known-limitations, and for update
 *   https://docs.pinecone.io/guides/manage-data/update-data):
 *   - a record may carry `sparseValues` `{ indices, values }` beside its dense `values` (which a
 *     dense index still requires): indices uint32, values float32, arrays of one length, at most
 *     1,000 non-zero entries; duplicate indices are refused (the loopback's reading: a sparse
 *     vector names each dimension once). Upsert, update and fetch of sparse values succeed on any
 *     metric; fetch (and a query with `includeValues`) returns them;
 *   - a query may add `sparseVector` to its dense `vector`: the index then scores each record by
 *     the dot product of the two sparse-dense vectors, `vector·values + sparseVector·sparseValues`
 *     ("Pinecone views your sparse-dense vector as a single vector"); a record without sparse
 *     values contributes 0 on the sparse side. Only the dotproduct metric allows this: elsewhere
 *     the query is a 400, `Index configuration does not support sparse values` (Pinecone's body,
 *     as quoted in langchain-ai/langchain#2451). A dense index needs the dense `vector` (or an
 *     `id`): a query with only `sparseVector` is a 400. Pinecone's way to rank by the sparse part
 *     alone (alpha 0 in its `hybrid_score_norm`) is a zero dense vector, which the dotproduct
 *     metric accepts (cosine refuses a zero query vector).
 *   Pinecone's wording of the validation messages is not documented; the loopback's are its own.
 *   Exhaustive scoring: on serverless indexes Pinecone may pick candidates by the dense part
 *   first; the loopback ranks every record exactly.
 * - Filters: `evaluatePineconeFilter` (./pinecone-filter-evaluator.ts), so the server and the
 *   convention's tests agree; a malformed filter is a 400.
 * - List: the ids of a namespace that start with `prefix`, in sorted order (bitwise "C"
 *   collation: by UTF-8 bytes), `limit` a page (default 100); while more remain, the page has
 *   `pagination.next`, an opaque token to pass back as `paginationToken`.
 * - Namespaces: created on first upsert, gone when emptied; `''` and `'__default__'` name the
 *   default namespace, which `describe_index_stats` reports as `'__default__'`.
 * - Errors: data plane `{ code, message, details }` (gRPC codes: 3 invalid argument, 5 not
 *   found, 8 resource exhausted, 13 internal, 14 unavailable, 16 unauthenticated); control plane
 *   `{ error: { code, message }, status }`. A wrong `Api-Key` header is a 401.
 *
 * Faults are injected per request by rules (see `FaultRule`): an error status (429 with
 * Retry-After, 500, 503, ...), a slow response, a dropped connection, optionally after the
 * request took effect (a lost response).
 */

export type LoopbackMetric = 'cosine' | 'dotproduct' | 'euclidean';

export type LoopbackOperation =
  | 'describe_index'
  | 'list_indexes'
  | 'upsert'
  | 'query'
  | 'fetch'
  | 'list'
  | 'update'
  | 'delete'
  | 'describe_index_stats';

export interface LoopbackIndexOptions {
  name: string;
  dimension: number;
  metric?: LoopbackMetric;
}

export type Fault =
  /** Answers with this status and a Pinecone-shaped error body; `retryAfter` sets the header (seconds or a date). */
  | { type: 'status'; status: number; retryAfter?: number | string; afterApplying?: boolean }
  /** Waits, then answers normally. */
  | { type: 'delay'; ms: number }
  /** Destroys the connection without an answer (before the request takes effect, or after). */
  | { type: 'drop'; afterApplying?: boolean };

export interface FaultRule {
  /** The operations it applies to (default: all). */
  operations?: readonly LoopbackOperation[];
  /** The indexes it applies to (default: all). */
  indexes?: readonly string[];
  /** Applies to each matching request with this probability (default 1). */
  probability?: number;
  /** Applies to the next `count` matching requests that it hits, then retires (default: no limit). */
  count?: number;
  /** Lets this many matching requests through before it applies (default 0). */
  skip?: number;
  fault: Fault;
}

export interface LoopbackRequestRecord {
  method: string;
  /** The index addressed, if any. */
  index: string | undefined;
  path: string;
  operation: LoopbackOperation | 'unknown';
  /** Bytes of the request body. */
  bytes: number;
  /** Records in an upsert request. */
  records?: number;
  /** The status answered, or 'dropped'. */
  status: number | 'dropped';
  /** The fault injected, if any. */
  fault?: Fault['type'];
  /** The `X-Pinecone-Api-Version` header. */
  apiVersion: string | undefined;
  /** The request's `Api-Key` header was the server's key. */
  authorized: boolean;
}

export interface LoopbackPineconeOptions {
  /** The API key requests must carry in `Api-Key` (default: any key is accepted). */
  apiKey?: string;
  indexes?: readonly LoopbackIndexOptions[];
  /** Seed of the fault dice, for reproducible runs (default 1). */
  seed?: number;
  /** Pinecone's filter semantics variant (see `evaluatePineconeFilter`). */
  filterSemantics?: PineconeFilterSemantics;
  /** Largest upsert request body accepted, in bytes (default 2,000,000: Pinecone's 2 MB). */
  maxRequestBytes?: number;
}

/** Sparse values as stored: ascending indices (float32 values), so dot products merge in one pass. */
interface StoredSparse {
  indices: number[];
  values: number[];
}

interface StoredRecord {
  values: number[];
  sparse?: StoredSparse | undefined;
  metadata: Record<string, unknown> | undefined;
}

interface LoopbackIndex {
  name: string;
  dimension: number;
  metric: LoopbackMetric;
  namespaces: Map<string, Map<string, StoredRecord>>;
}

export interface LoopbackPinecone {
  /** `http://127.0.0.1:PORT`: the control plane, for `new Pinecone({ controllerHostUrl })`. */
  readonly url: string;
  /** The data-plane host of an index, as `describeIndex` reports it. */
  hostOf(indexName: string): string;
  createIndex(options: LoopbackIndexOptions): void;
  deleteIndex(name: string): void;
  /** The records of a namespace (a copy), for assertions. */
  records(
    indexName: string,
    namespace?: string,
  ): Map<string, { values: number[]; sparseValues?: StoredSparse; metadata?: Record<string, unknown> }>;
  /** Every request received, in order. */
  readonly requests: LoopbackRequestRecord[];
  addFault(rule: FaultRule): void;
  clearFaults(): void;
  close(): Promise<void>;
}

const DEFAULT_NAMESPACE = '__default__';
const MAX_METADATA_BYTES = 40 * 1024;
const MAX_UPSERT_RECORDS = 1000;
const MAX_IDS = 1000;
const MAX_TOP_K = 10_000;
const MAX_ID_LENGTH = 512;
/** Non-zero entries of one sparse vector in a sparse-dense (hybrid) index. */
const MAX_SPARSE_NON_ZERO = 1000;
const DEFAULT_LIST_LIMIT = 100;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly grpcCode: number,
    message: string,
  ) {
    super(message);
  }
}

const invalid = (message: string) => new HttpError(400, 3, message);

/** Starts a loopback Pinecone on 127.0.0.1 (a free port). */
export async function startLoopbackPinecone(
  options: LoopbackPineconeOptions = {},
): Promise<LoopbackPinecone> {
  const indexes = new Map<string, LoopbackIndex>();
  const requests: LoopbackRequestRecord[] = [];
  let rules: Array<FaultRule & { remaining: number; skipped: number }> = [];
  const random = mulberry32(options.seed ?? 1);
  const maxRequestBytes = options.maxRequestBytes ?? 2_000_000;
  const sockets = new Set<Socket>();
  const timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let baseUrl = '';
  /** A delay that `close` cuts short. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          timers.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      timers.add(entry);
    });

  const createIndex = ({ name, dimension, metric = 'cosine' }: LoopbackIndexOptions) => {
    if (indexes.has(name)) throw new Error(`index ${name} exists`);
    if (!Number.isSafeInteger(dimension) || dimension < 1 || dimension > 20_000) {
      throw new Error(`bad dimension ${dimension}`);
    }
    indexes.set(name, { name, dimension, metric, namespaces: new Map() });
  };
  for (const index of options.indexes ?? []) createIndex(index);

  const pickFault = (
    operation: LoopbackOperation | 'unknown',
    index: string | undefined,
  ): Fault | undefined => {
    for (const rule of rules) {
      if (rule.remaining <= 0) continue;
      if (rule.operations && (operation === 'unknown' || !rule.operations.includes(operation))) continue;
      if (rule.indexes && (index === undefined || !rule.indexes.includes(index))) continue;
      if (rule.skipped < (rule.skip ?? 0)) {
        rule.skipped++;
        continue;
      }
      if (random() >= (rule.probability ?? 1)) continue;
      rule.remaining--;
      return rule.fault;
    }
    return undefined;
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      sendJson(response, 500, { code: 13, message: `loopback failure: ${String(error)}`, details: [] });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const body = await readBody(request);
    const route = routeOf(request.method ?? 'GET', url.pathname);
    const apiKeyHeader = request.headers['api-key'];
    const record: LoopbackRequestRecord = {
      method: request.method ?? 'GET',
      index: route?.index,
      path: url.pathname,
      operation: route?.operation ?? 'unknown',
      bytes: body.length,
      status: 200,
      apiVersion: header(request.headers['x-pinecone-api-version']),
      authorized: options.apiKey === undefined || apiKeyHeader === options.apiKey,
    };
    requests.push(record);

    const fault = pickFault(record.operation, route?.index);
    if (fault !== undefined) record.fault = fault.type;
    if (fault?.type === 'delay') await pause(fault.ms);
    if (fault?.type === 'drop' && !fault.afterApplying) {
      record.status = 'dropped';
      request.socket.destroy();
      return;
    }
    if (fault?.type === 'status' && !fault.afterApplying) {
      record.status = fault.status;
      sendFault(response, fault);
      return;
    }

    let status = 200;
    let payload: unknown;
    try {
      if (!record.authorized) throw new HttpError(401, 16, 'Invalid API Key');
      if (route === undefined) throw new HttpError(404, 5, `Not found: ${request.method} ${url.pathname}`);
      const index =
        route.index === undefined
          ? undefined
          : (indexes.get(route.index) ?? notFound(route.index, route.plane));
      payload = operate(route.operation, index, body, url, record);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      status = error.status;
      payload =
        route?.plane === 'control' || status === 401
          ? { error: { code: controlCode(status), message: error.message }, status }
          : { code: error.grpcCode, message: error.message, details: [] };
    }

    if (fault?.type === 'drop') {
      record.status = 'dropped';
      request.socket.destroy();
      return;
    }
    if (fault?.type === 'status') {
      record.status = fault.status;
      sendFault(response, fault);
      return;
    }
    record.status = status;
    sendJson(response, status, payload);
  }

  function operate(
    operation: LoopbackOperation,
    index: LoopbackIndex | undefined,
    body: Buffer,
    url: URL,
    record: LoopbackRequestRecord,
  ): unknown {
    switch (operation) {
      case 'list_indexes':
        return { indexes: [...indexes.values()].map(describe) };
      case 'describe_index':
        return describe(index!);
      case 'upsert': {
        if (body.length > maxRequestBytes) {
          throw invalid(
            `Request size ${body.length} bytes exceeds the maximum supported size of ${maxRequestBytes} bytes`,
          );
        }
        const request = parseJson(body);
        const vectors = request.vectors;
        if (!Array.isArray(vectors) || vectors.length === 0)
          throw invalid('vectors: at least one record required');
        record.records = vectors.length;
        if (vectors.length > MAX_UPSERT_RECORDS) {
          throw invalid(`Exceeded max batch size of ${MAX_UPSERT_RECORDS} records: got ${vectors.length}`);
        }
        const checked = vectors.map((vector) => checkRecord(vector, index!));
        const namespace = namespaceOf(index!, request.namespace, true)!;
        for (const { id, stored } of checked) namespace.set(id, stored);
        return { upsertedCount: checked.length };
      }
      case 'query': {
        const request = parseJson(body);
        const topK = request.topK;
        if (!Number.isSafeInteger(topK) || (topK as number) < 1 || (topK as number) > MAX_TOP_K) {
          throw invalid(`topK must be an integer from 1 to ${MAX_TOP_K}, got ${JSON.stringify(topK)}`);
        }
        const namespace = namespaceOf(index!, request.namespace, false);
        const sparseQuery =
          request.sparseVector === undefined || request.sparseVector === null
            ? undefined
            : checkSparse(request.sparseVector, 'sparse query vector');
        if (sparseQuery !== undefined && index!.metric !== 'dotproduct') {
          throw invalid('Index configuration does not support sparse values');
        }
        let query: number[];
        if (request.vector !== undefined) {
          query = checkValues(request.vector, index!, 'query vector');
        } else if (typeof request.id === 'string') {
          const found = namespace?.get(request.id);
          if (found === undefined)
            return { matches: [], namespace: nameOf(request.namespace), usage: { readUnits: 1 } };
          query = found.values;
        } else if (sparseQuery !== undefined) {
          throw invalid(
            'A dense index needs a dense query vector: give vector (a zero vector ranks by the sparse values alone)',
          );
        } else {
          throw invalid('Exactly one of vector, sparse vector or id must be provided');
        }
        if (index!.metric === 'cosine' && query.every((value) => value === 0)) {
          throw invalid('Query vector must contain at least one non-zero value for the cosine metric');
        }
        const filter = request.filter;
        if (filter !== undefined && filter !== null && !isObject(filter))
          throw invalid('filter must be an object');
        const matches: Array<{ id: string; score: number; order: number; stored: StoredRecord }> = [];
        let order = 0;
        for (const [id, stored] of namespace ?? []) {
          order++;
          if (isObject(filter) && Object.keys(filter).length > 0 && !matchesFilter(filter, stored.metadata))
            continue;
          const dense = score(index!.metric, query, stored.values);
          const sparse = sparseQuery === undefined ? 0 : sparseDot(sparseQuery, stored.sparse);
          matches.push({ id, score: dense + sparse, order, stored });
        }
        const ascending = index!.metric === 'euclidean';
        matches.sort((a, b) => (ascending ? a.score - b.score : b.score - a.score) || a.order - b.order);
        return {
          matches: matches.slice(0, topK as number).map(({ id, score, stored }) => ({
            id,
            score,
            values: request.includeValues === true ? stored.values : [],
            ...(request.includeValues === true && stored.sparse ? { sparseValues: stored.sparse } : {}),
            ...(request.includeMetadata === true && stored.metadata !== undefined
              ? { metadata: stored.metadata }
              : {}),
          })),
          namespace: nameOf(request.namespace),
          usage: { readUnits: 5 },
        };
      }
      case 'fetch': {
        const ids = url.searchParams.getAll('ids');
        if (ids.length === 0) throw invalid('ids: at least one id required');
        if (ids.length > MAX_IDS) throw invalid(`Cannot fetch more than ${MAX_IDS} ids, got ${ids.length}`);
        const namespaceName = url.searchParams.get('namespace') ?? '';
        const namespace = namespaceOf(index!, namespaceName, false);
        const vectors: Record<string, unknown> = {};
        for (const id of ids) {
          const stored = namespace?.get(id);
          if (stored !== undefined) {
            vectors[id] = {
              id,
              values: stored.values,
              ...(stored.sparse === undefined ? {} : { sparseValues: stored.sparse }),
              ...(stored.metadata === undefined ? {} : { metadata: stored.metadata }),
            };
          }
        }
        return { vectors, namespace: nameOf(namespaceName), usage: { readUnits: 1 } };
      }
      case 'list': {
        const namespaceName = url.searchParams.get('namespace') ?? '';
        const prefix = url.searchParams.get('prefix') ?? '';
        const limitText = url.searchParams.get('limit');
        const limit = limitText === null ? DEFAULT_LIST_LIMIT : Number(limitText);
        if (!Number.isSafeInteger(limit) || limit < 1)
          throw invalid(`limit must be a positive integer, got ${limitText}`);
        const token = url.searchParams.get('paginationToken');
        const after = token === null ? undefined : readListToken(token, prefix);
        const ids = [...(namespaceOf(index!, namespaceName, false)?.keys() ?? [])]
          .filter((id) => id.startsWith(prefix) && (after === undefined || byteOrder(id, after) > 0))
          .sort(byteOrder);
        const page = ids.slice(0, limit);
        return {
          vectors: page.map((id) => ({ id })),
          ...(ids.length > limit
            ? {
                pagination: {
                  next: Buffer.from(JSON.stringify({ skip_past: page.at(-1), prefix })).toString('base64'),
                },
              }
            : {}),
          namespace: nameOf(namespaceName),
          usage: { readUnits: 1 },
        };
      }
      case 'update': {
        // By id: values and sparseValues replace the stored ones, setMetadata adds or changes
        // fields; an unknown id changes nothing and is still a 200 (Pinecone's update docs).
        const request = parseJson(body);
        if (typeof request.id !== 'string' || request.id.length === 0)
          throw invalid('id: a record id is required');
        const values =
          request.values === undefined
            ? undefined
            : checkValues(request.values, index!, `vector ${request.id}`);
        const sparse =
          request.sparseValues === undefined
            ? undefined
            : checkSparse(request.sparseValues, `vector ${request.id}`);
        const setMetadata =
          request.setMetadata === undefined ? undefined : checkMetadata(request.setMetadata, request.id);
        const stored = namespaceOf(index!, request.namespace, false)?.get(request.id);
        if (stored === undefined) return { matchedRecords: 0 };
        if (values !== undefined) stored.values = values;
        if (sparse !== undefined) stored.sparse = sparse;
        if (setMetadata !== undefined) {
          const merged = { ...stored.metadata, ...setMetadata };
          checkMetadata(merged, request.id);
          stored.metadata = merged;
        }
        return { matchedRecords: 1 };
      }
      case 'delete': {
        const request = parseJson(body);
        const namespaceName = request.namespace;
        const namespace = namespaceOf(index!, namespaceName, false);
        if (request.deleteAll === true) {
          index!.namespaces.delete(keyOf(namespaceName));
          return {};
        }
        if (request.ids !== undefined) {
          if (!Array.isArray(request.ids) || !request.ids.every((id) => typeof id === 'string')) {
            throw invalid('ids must be a list of strings');
          }
          if (request.ids.length > MAX_IDS)
            throw invalid(`Cannot delete more than ${MAX_IDS} ids, got ${request.ids.length}`);
          for (const id of request.ids) namespace?.delete(id);
        } else if (isObject(request.filter)) {
          const filter = request.filter;
          for (const [id, stored] of namespace ?? []) {
            if (matchesFilter(filter, stored.metadata)) namespace!.delete(id);
          }
        } else {
          throw invalid('One of ids, filter or deleteAll must be provided');
        }
        if (namespace !== undefined && namespace.size === 0) index!.namespaces.delete(keyOf(namespaceName));
        return {};
      }
      case 'describe_index_stats': {
        const request = body.length === 0 ? {} : parseJson(body);
        const filter = isObject(request.filter) ? request.filter : undefined;
        const namespaces: Record<string, { vectorCount: number }> = {};
        let total = 0;
        for (const [name, records] of index!.namespaces) {
          let count = 0;
          for (const stored of records.values()) {
            if (filter === undefined || matchesFilter(filter, stored.metadata)) count++;
          }
          if (count === 0) continue;
          namespaces[name] = { vectorCount: count };
          total += count;
        }
        return {
          namespaces,
          dimension: index!.dimension,
          indexFullness: 0,
          totalVectorCount: total,
          metric: index!.metric,
          vectorType: 'dense',
        };
      }
    }
  }

  const matchesFilter = (filter: Record<string, unknown>, metadata: Record<string, unknown> | undefined) => {
    try {
      return evaluatePineconeFilter(filter, metadata, options.filterSemantics);
    } catch (error) {
      throw invalid(`Invalid filter: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  const describe = (index: LoopbackIndex) => ({
    name: index.name,
    dimension: index.dimension,
    metric: index.metric,
    host: `${baseUrl}/hosts/${encodeURIComponent(index.name)}`,
    deletion_protection: 'disabled',
    tags: null,
    spec: { serverless: { cloud: 'aws', region: 'us-east-1' } },
    status: { ready: true, state: 'Ready' },
    vector_type: 'dense',
  });

  const namespaceOf = (index: LoopbackIndex, name: unknown, create: boolean) => {
    const key = keyOf(name);
    let namespace = index.namespaces.get(key);
    if (namespace === undefined && create) {
      namespace = new Map();
      index.namespaces.set(key, namespace);
    }
    return namespace;
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    hostOf: (name) => `${baseUrl}/hosts/${encodeURIComponent(name)}`,
    createIndex,
    deleteIndex: (name) => {
      indexes.delete(name);
    },
    records(indexName, namespace = '') {
      const index = indexes.get(indexName);
      const copy = new Map<
        string,
        { values: number[]; sparseValues?: StoredSparse; metadata?: Record<string, unknown> }
      >();
      for (const [id, stored] of index?.namespaces.get(keyOf(namespace)) ?? []) {
        copy.set(id, {
          values: [...stored.values],
          ...(stored.sparse ? { sparseValues: structuredClone(stored.sparse) } : {}),
          ...(stored.metadata ? { metadata: { ...stored.metadata } } : {}),
        });
      }
      return copy;
    },
    requests,
    addFault: (rule) => {
      rules.push({ ...rule, remaining: rule.count ?? Number.POSITIVE_INFINITY, skipped: 0 });
    },
    clearFaults: () => {
      rules = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        for (const entry of timers) {
          clearTimeout(entry.timer);
          entry.resolve();
        }
        timers.clear();
      }),
  };
}

interface Route {
  plane: 'control' | 'data';
  operation: LoopbackOperation;
  index: string | undefined;
}

function routeOf(method: string, path: string): Route | undefined {
  if (method === 'GET' && path === '/indexes')
    return { plane: 'control', operation: 'list_indexes', index: undefined };
  const control = /^\/indexes\/([^/]+)$/.exec(path);
  if (control && method === 'GET') {
    return { plane: 'control', operation: 'describe_index', index: decodeURIComponent(control[1]!) };
  }
  const data = /^\/hosts\/([^/]+)(\/.*)$/.exec(path);
  if (!data) return undefined;
  const index = decodeURIComponent(data[1]!);
  const operation = (
    {
      'POST /vectors/upsert': 'upsert',
      'POST /query': 'query',
      'GET /vectors/fetch': 'fetch',
      'GET /vectors/list': 'list',
      'POST /vectors/update': 'update',
      'POST /vectors/delete': 'delete',
      'POST /describe_index_stats': 'describe_index_stats',
      'GET /describe_index_stats': 'describe_index_stats',
    } as Record<string, LoopbackOperation>
  )[`${method} ${data[2]}`];
  return operation === undefined ? undefined : { plane: 'data', operation, index };
}

function notFound(name: string, plane: 'control' | 'data'): never {
  throw new HttpError(404, 5, plane === 'control' ? `Resource ${name} not found` : `Index ${name} not found`);
}

function checkRecord(input: unknown, index: LoopbackIndex): { id: string; stored: StoredRecord } {
  if (!isObject(input)) throw invalid('each vector must be an object');
  const id = input.id;
  if (typeof id !== 'string' || id.length === 0) throw invalid('Vector ID must be a non-empty string');
  if (id.length > MAX_ID_LENGTH)
    throw invalid(`Vector ID ${id.slice(0, 20)}... exceeds ${MAX_ID_LENGTH} characters`);
  const sparse =
    input.sparseValues === undefined || input.sparseValues === null
      ? undefined
      : checkSparse(input.sparseValues, `vector ${id}`);
  const values = checkValues(input.values, index, `vector ${id}`);
  if (values.every((value) => value === 0)) {
    throw invalid(
      `Dense vectors must contain at least one non-zero value. Vector ID '${id}' contains only zeros`,
    );
  }
  const metadata =
    input.metadata === undefined || input.metadata === null ? undefined : checkMetadata(input.metadata, id);
  return { id, stored: { values, sparse, metadata } };
}

/** Metadata Pinecone stores: flat string, number, boolean or string-list values, at most 40 KB of JSON. */
function checkMetadata(input: unknown, id: string): Record<string, unknown> {
  if (!isObject(input)) throw invalid(`Metadata of vector ${id} must be an object`);
  for (const [key, value] of Object.entries(input)) {
    const ok =
      typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value)) ||
      (Array.isArray(value) && value.every((item) => typeof item === 'string'));
    if (!ok) {
      throw invalid(
        `Metadata value must be a string, number, boolean or list of strings, got '${JSON.stringify(value)}' for field '${key}' (vector ${id})`,
      );
    }
  }
  const size = Buffer.byteLength(JSON.stringify(input));
  if (size > MAX_METADATA_BYTES) {
    throw invalid(
      `Metadata size is ${size} bytes, which exceeds the limit of ${MAX_METADATA_BYTES} bytes per vector (vector ${id})`,
    );
  }
  return structuredClone(input);
}

/** Sparse values: `{ indices, values }` of one length, uint32 indices named once, float32 values, at most 1,000. */
function checkSparse(input: unknown, what: string): StoredSparse {
  if (!isObject(input) || !Array.isArray(input.indices) || !Array.isArray(input.values)) {
    throw invalid(`${what}: sparse values must be an object with indices and values lists`);
  }
  const { indices, values } = input as { indices: unknown[]; values: unknown[] };
  if (indices.length !== values.length) {
    throw invalid(`${what}: sparse values have ${indices.length} indices but ${values.length} values`);
  }
  if (indices.length > MAX_SPARSE_NON_ZERO) {
    throw invalid(
      `${what}: sparse vector has ${indices.length} non-zero values, more than the limit of ${MAX_SPARSE_NON_ZERO}`,
    );
  }
  const entries = indices.map((index, position) => {
    if (!Number.isSafeInteger(index) || (index as number) < 0 || (index as number) > 0xffffffff) {
      throw invalid(`${what}: sparse index ${JSON.stringify(index)} is not a uint32`);
    }
    const value = values[position];
    if (typeof value !== 'number' || !Number.isFinite(Math.fround(value))) {
      throw invalid(`${what}: sparse value ${JSON.stringify(value)} is not a finite float32`);
    }
    return [index as number, Math.fround(value)] as const;
  });
  entries.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < entries.length; i++) {
    if (entries[i]![0] === entries[i - 1]![0])
      throw invalid(`${what}: sparse index ${entries[i]![0]} appears twice`);
  }
  return { indices: entries.map(([index]) => index), values: entries.map(([, value]) => value) };
}

/** The dot product of two sparse vectors with ascending indices (0 when the record has none). */
function sparseDot(query: StoredSparse, stored: StoredSparse | undefined): number {
  if (stored === undefined) return 0;
  let dot = 0;
  for (let q = 0, s = 0; q < query.indices.length && s < stored.indices.length; ) {
    const difference = query.indices[q]! - stored.indices[s]!;
    if (difference === 0) dot += query.values[q++]! * stored.values[s++]!;
    else if (difference < 0) q++;
    else s++;
  }
  return dot;
}

function checkValues(input: unknown, index: LoopbackIndex, what: string): number[] {
  if (!Array.isArray(input)) throw invalid(`${what}: values must be a list of numbers`);
  if (input.length !== index.dimension) {
    throw invalid(
      `Vector dimension ${input.length} does not match the dimension of the index ${index.dimension}`,
    );
  }
  return input.map((value) => {
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw invalid(`${what}: values must be finite numbers`);
    const stored = Math.fround(value);
    if (!Number.isFinite(stored)) throw invalid(`${what}: ${value} does not fit in float32`);
    return stored;
  });
}

function score(metric: LoopbackMetric, query: readonly number[], stored: readonly number[]): number {
  let dot = 0;
  let queryNorm = 0;
  let storedNorm = 0;
  let squared = 0;
  for (let index = 0; index < query.length; index++) {
    const q = query[index]!;
    const s = stored[index]!;
    dot += q * s;
    queryNorm += q * q;
    storedNorm += s * s;
    squared += (q - s) * (q - s);
  }
  if (metric === 'dotproduct') return dot;
  if (metric === 'euclidean') return squared;
  const denominator = Math.sqrt(queryNorm) * Math.sqrt(storedNorm);
  return denominator === 0 ? 0 : Math.max(-1, Math.min(1, dot / denominator));
}

/** Bitwise "C" collation: by the ids' UTF-8 bytes. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The id a list page token says to skip past; a token that is not one of ours (or for another prefix) is a 400. */
function readListToken(token: string, prefix: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as {
      skip_past?: unknown;
      prefix?: unknown;
    };
    if (typeof parsed.skip_past === 'string' && parsed.prefix === prefix) return parsed.skip_past;
  } catch {
    // not JSON: refused below
  }
  throw invalid('Invalid pagination token');
}

function keyOf(namespace: unknown): string {
  return typeof namespace === 'string' && namespace !== '' ? namespace : DEFAULT_NAMESPACE;
}

function nameOf(namespace: unknown): string {
  return typeof namespace === 'string' ? namespace : '';
}

function controlCode(status: number): string {
  return (
    (
      {
        400: 'INVALID_ARGUMENT',
        401: 'UNAUTHENTICATED',
        404: 'NOT_FOUND',
        429: 'RESOURCE_EXHAUSTED',
      } as Record<number, string>
    )[status] ?? 'UNKNOWN'
  );
}

function sendFault(response: ServerResponse, fault: Extract<Fault, { type: 'status' }>): void {
  const headers: Record<string, string> = {};
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  const code = fault.status === 429 ? 8 : fault.status === 503 ? 14 : fault.status >= 500 ? 13 : 3;
  const message =
    fault.status === 429
      ? 'Request rate limit exceeded, please retry later'
      : fault.status === 503
        ? 'Service unavailable'
        : fault.status >= 500
          ? 'Internal error'
          : 'Bad request';
  sendJson(response, fault.status, { code, message, details: [] }, headers);
}

function sendJson(
  response: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
) {
  if (response.destroyed || response.writableEnded) return;
  const text = JSON.stringify(payload);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

function parseJson(body: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalid('The request body is not valid JSON');
  }
  if (!isObject(value)) throw invalid('The request body must be a JSON object');
  return value;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => resolve(Buffer.concat(parts)));
    request.on('error', reject);
  });
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A small seeded generator, so fault runs are reproducible. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A port on 127.0.0.1 where nothing listens (it was just free), for "server unreachable" tests. */
export async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
