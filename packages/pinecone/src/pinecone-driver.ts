import type { Index } from '@pinecone-database/pinecone';
import {
  BackendError,
  BatchWriteError,
  type Chunk,
  type DistanceMetric,
  type FilterConvention,
} from '@zerda/core';
import type {
  DriverCallOptions,
  DriverCapabilities,
  DriverListOptions,
  DriverListPage,
  DriverMatch,
  DriverQueryOptions,
  RecordProblem,
  SparseVector,
  VectorDriver,
  VectorRecord,
} from '@zerda/core/backend';
import { createPineconeFilterConvention, type PineconeFilter } from './pinecone-filter.js';
import { findIndex } from './pinecone-index.js';
import { pineconeLimits as limits, packIdBatches, pineconeSparseCapabilities } from './pinecone-records.js';
import { PineconeRequests } from './pinecone-requests.js';
import { type PineconeStoreSettings, type ResolvedSettings, resolveSettings } from './pinecone-settings.js';
import { type FetchedRecord, RecordCodec, sparseToWire } from './record-codec.js';

const BACKEND = 'pinecone';
/** Query strings of fetch requests are kept under this many bytes of ids. */
const MAX_FETCH_QUERY_BYTES = 6000;
type Options = DriverQueryOptions<PineconeFilter>;
type SparseQuery = (sparse: SparseVector, options: Options) => Promise<DriverMatch[]>;

/** Pinecone's data plane as a contract-v2 driver (built by `createPineconeStore`). */
export class PineconeDriver implements VectorDriver<PineconeFilter> {
  readonly specificationVersion = 'v2' as const;
  readonly name = BACKEND;
  readonly filterConvention: FilterConvention<PineconeFilter>;
  /** The namespace read and written. */
  readonly namespace: string;
  /**
   * With the `sparse` setting: ranks by the sparse dot product alone. A dense index needs a dense
   * query vector, so this sends a zero one beside the sparse vector: Pinecone scores
   * `0·values + sparse·sparseValues`, its documented sparse-dense score with the dense part
   * weighted 0 (alpha 0 in its `hybrid_score_norm`); records scoring 0 are left out. (Serverless
   * indexes may pick candidates by the dense part first: exact on the loopback, check live recall.)
   */
  readonly querySparse?: SparseQuery;
  /** With the `sparse` setting: Pinecone's sparse-dense query, scored `dense·values + sparse·sparseValues`. */
  readonly queryHybrid?: (dense: Float32Array, ...rest: Parameters<SparseQuery>) => Promise<DriverMatch[]>;
  // ES private fields: util.inspect and JSON.stringify never show the key, the client or the settings.
  readonly #settings: PineconeStoreSettings;
  readonly #resolved: ResolvedSettings;
  readonly #requests: PineconeRequests;
  readonly #records: RecordCodec;
  #metric: DistanceMetric | undefined;
  #dimension: number | undefined;
  #index: Index | undefined;
  #opening: Promise<void> | undefined;
  #capabilities: DriverCapabilities | undefined;
  #zeros: number[] | undefined;

  constructor(settings: PineconeStoreSettings) {
    this.#settings = settings;
    const resolved = resolveSettings(settings);
    const { retry, timeoutMs, layout } = resolved;
    this.#resolved = resolved;
    this.namespace = resolved.namespace;
    this.#dimension = resolved.dimension;
    // Sparse values are queried only on dotproduct indexes: `open` checks the index is one.
    this.#metric = resolved.metric ?? (settings.sparse ? 'dot' : undefined);
    const { onRetry, logger, textStore } = settings;
    this.#requests = new PineconeRequests({ retry, timeoutMs, onRetry, logger });
    this.#requests.addSecret(() => settings.apiKey);
    this.#records = new RecordCodec(layout, textStore, resolved.maxMetadataBytes, resolved.maxRequestBytes);
    this.filterConvention = createPineconeFilterConvention({ docIdKey: layout.docIdKey });
    if (settings.sparse) {
      this.querySparse = async (sparse, options) => {
        this.#zeros ??= new Array<number>(this.#dimension ?? 0).fill(0);
        const matches = await this.#query(
          { vector: this.#zeros, sparseVector: sparseToWire(sparse) },
          options,
        );
        return matches.filter((match) => match.score !== 0);
      };
      this.queryHybrid = (dense, sparse, options) =>
        this.#query({ vector: Array.from(dense), sparseVector: sparseToWire(sparse) }, options);
    }
  }

  /** The index's metric once known (settings or the index description; 'cosine', Pinecone's default, until then). */
  get capabilities(): DriverCapabilities {
    const metric = this.#metric ?? 'cosine';
    if (this.#capabilities?.metric !== metric) {
      this.#capabilities = Object.freeze({
        metric,
        scoreConversion: metric === 'l2' ? 'squared-euclidean-distance' : 'similarity',
        persistent: true,
        maxBatchSize: this.#resolved.maxBatchSize,
        maxIdsPerCall: limits.maxIdsPerRequest,
        maxConcurrentWrites: this.#resolved.maxConcurrentWrites,
        ...(this.#settings.sparse ? { sparse: pineconeSparseCapabilities } : {}),
      });
    }
    return this.#capabilities;
  }

  get dimension(): number | undefined {
    return this.#dimension;
  }

  /** Finds the index (describing it where the settings leave its host or metric open) and checks it against the settings; once. */
  open(): Promise<void> {
    this.#opening ??= findIndex(this.#settings, this.#resolved, this.#requests, this.#dimension).then(
      ({ index, metric, dimension }) => {
        this.#metric = metric ?? this.#metric;
        this.#dimension ??= dimension;
        this.#index = index;
      },
      (error: unknown) => {
        this.#opening = undefined;
        throw error;
      },
    );
    return this.#opening;
  }

  /** Pinecone's limits: ids of at most 512 characters, a non-zero vector, 40 KB of metadata, one request per record. */
  checkRecords(records: readonly VectorRecord[]): RecordProblem[] {
    return this.#records.problems(records, this.namespace);
  }

  /** Upserts in requests of at most 2 MB (and `maxRequestBytes`); a failure after some of them is a BatchWriteError. */
  async upsert(records: readonly VectorRecord[], { signal }: DriverCallOptions): Promise<void> {
    const requests = this.#records.upsertRequests(records, this.#resolved.maxBatchSize, this.namespace);
    await this.#records.saveTexts(records, signal);
    const writtenIds: string[] = [];
    for (const [n, batch] of requests.entries()) {
      try {
        await this.#request('upsert', signal, () =>
          this.#target.upsert({ records: batch, namespace: this.namespace }),
        );
      } catch (error) {
        if (writtenIds.length === 0 || !BackendError.isInstance(error)) throw error;
        throw new BatchWriteError({
          backend: BACKEND,
          operation: 'upsert',
          message: `${writtenIds.length} of ${records.length} records were written before this failure: ${error.message}`,
          cause: error,
          retryable: error.retryable,
          writtenIds,
          failedIds: requests.slice(n).flatMap((request) => request.map((record) => record.id)),
        });
      }
      writtenIds.push(...batch.map((record) => record.id));
    }
  }

  query(vector: Float32Array, options: Options): Promise<DriverMatch[]> {
    return this.#query({ vector: Array.from(vector) }, options);
  }

  /** Pinecone returns at most 10,000 matches: a larger topK is lowered, with a warning. */
  async #query(
    vectors: { vector: number[]; sparseVector?: { indices: number[]; values: number[] } },
    { topK, filter, signal, warn }: Options,
  ): Promise<DriverMatch[]> {
    if (topK > limits.maxTopK) {
      const message = `Pinecone returns at most ${limits.maxTopK} matches per query; topK ${topK} was lowered`;
      warn?.({ type: 'unsupported', source: BACKEND, message });
    }
    const response = await this.#request('search', signal, () =>
      this.#target.query({
        ...vectors,
        topK: Math.min(topK, limits.maxTopK),
        includeMetadata: true,
        includeValues: false,
        namespace: this.namespace,
        ...(filter !== undefined && Object.keys(filter).length > 0 ? { filter } : {}),
      }),
    );
    const matches = response.matches ?? [];
    const chunks = await this.#records.toChunks(matches, signal, warn);
    return matches.map((match, i) => ({ id: match.id, score: match.score ?? Number.NaN, chunk: chunks[i]! }));
  }

  async get(ids: readonly string[], { signal }: DriverCallOptions): Promise<Chunk[]> {
    return this.#records.toChunks(await this.#fetch(ids, 'get', signal), signal);
  }

  /** Fetches the ids first, to say how many existed, then deletes them (and their texts). */
  async delete(ids: readonly string[], { signal }: DriverCallOptions): Promise<number> {
    const present = ids.filter((id) => id.length > 0);
    if (present.length === 0) return 0;
    const existing = (await this.#fetch(present, 'delete', signal)).length;
    await this.#request('delete', signal, () =>
      this.#target.deleteMany({ ids: present, namespace: this.namespace }),
    );
    await this.#records.deleteTexts(present, signal);
    return existing;
  }

  /** Records in the namespace, from the index stats (eventually consistent). */
  async count({ signal }: DriverCallOptions): Promise<number> {
    const { namespaces = {} } = await this.#request('count', signal, () => this.#target.describeIndexStats());
    const entry = namespaces[this.namespace] ?? (this.namespace === '' ? namespaces.__default__ : undefined);
    return entry?.recordCount ?? 0;
  }

  /**
   * A page of ids from Pinecone's `list` (serverless indexes; ids in byte order), then their
   * records by fetch; with `includeVectors`, their dense vectors (to re-upsert with new sparse ones).
   */
  async list({ cursor, limit, signal, includeVectors }: DriverListOptions): Promise<DriverListPage> {
    const page = await this.#request('list', signal, () =>
      this.#target.listPaginated({
        namespace: this.namespace,
        limit: Math.min(limit, limits.maxIdsPerList),
        ...(cursor === undefined ? {} : { paginationToken: cursor }),
      }),
    );
    const ids = (page.vectors ?? []).flatMap((item) => (item.id ? [item.id] : []));
    const fetched = new Map((await this.#fetch(ids, 'list', signal)).map((record) => [record.id, record]));
    const records = ids.flatMap((id) => fetched.get(id) ?? []);
    const chunks = await this.#records.toChunks(records, signal);
    const vectors = includeVectors
      ? records.map((record) => Float32Array.from(record.values ?? []))
      : undefined;
    return { chunks, vectors, nextCursor: page.pagination?.next || undefined };
  }

  get #target(): Index {
    if (this.#index) return this.#index;
    throw new BackendError({ backend: BACKEND, operation: 'connect', message: 'the driver is not open' });
  }

  #request<T>(operation: string, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    return this.#requests.run(operation, signal, call);
  }

  async #fetch(
    ids: readonly string[],
    operation: string,
    signal: AbortSignal | undefined,
  ): Promise<FetchedRecord[]> {
    const found: FetchedRecord[] = [];
    for (const batch of packIdBatches(ids, limits.maxIdsPerRequest, MAX_FETCH_QUERY_BYTES)) {
      const response = await this.#request(operation, signal, () =>
        this.#target.fetch({ ids: batch, namespace: this.namespace }),
      );
      found.push(...Object.values(response.records ?? {}));
    }
    return found;
  }
}
