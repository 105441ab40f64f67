import { type Index, Pinecone } from '@pinecone-database/pinecone';
import {
  AbortedError,
  type AddOptions,
  type AddResult,
  BackendError,
  BatchWriteError,
  type Chunk,
  type ChunkProblem,
  ChunkValidationError,
  checkVectorSearchOptions,
  createPineconeFilterConvention,
  type DistanceMetric,
  type Embedder,
  embedChunksForStore,
  embedQueryForStore,
  type FilterConvention,
  InvalidArgumentError,
  type MetadataValue,
  normalizeChunks,
  type PineconeFilter,
  throwIfAborted,
  type VectorDatabase,
  type VectorDatabaseCapabilities,
  type VectorHit,
  type VectorSearchOptions,
  type VectorSearchResult,
  type Warning,
} from '@zerda/core';
import {
  fromPineconeMetadata,
  type PineconeWireRecord,
  packIdBatches,
  packUpsertBatches,
  pineconeLimits,
  type RecordLayout,
  recordBytes,
  toPineconeMetadata,
  upsertEnvelopeBytes,
} from './pinecone-records.js';
import { observingFetch } from './request-context.js';
import {
  type PineconeLogger,
  type ResolvedRetry,
  type RetryEvent,
  type RetryRun,
  type RetrySettings,
  resolveRetry,
  withRetry,
} from './retry.js';
import type { TextStore } from './text-store.js';

/** Pinecone's metric names, accepted as well as Zerda's. */
export type PineconeMetric = 'cosine' | 'dotproduct' | 'euclidean';

export interface PineconeStoreSettings {
  /**
   * Pinecone API key. Default: the `PINECONE_API_KEY` environment variable, read when the store
   * first needs it (not at construction). Not needed with `client` or `index`. Never logged,
   * never put in an error message.
   */
  apiKey?: string;
  /** An existing client to share (its own settings, retries included, then apply). */
  client?: Pinecone;
  /**
   * An existing index handle (`pc.index({ name, host })`). The store then makes no control-plane
   * call; set `metric` (default 'cosine') and, unless an embedder gives it, `dimension` (else it
   * is read from the index stats).
   */
  index?: Index;
  /** The index name. Default: the `PINECONE_INDEX` environment variable when neither `host` nor `index` is given. */
  indexName?: string;
  /**
   * The index's data-plane host (from `describeIndex`, or the console). With a host and a
   * `metric` the store makes no control-plane call; without `metric` it describes `indexName`.
   */
  host?: string;
  /** Control-plane URL for the client the store builds. Default: `PINECONE_CONTROLLER_HOST`, else Pinecone's. */
  controllerHostUrl?: string;
  /** The namespace to read and write (default '': the index's default namespace). */
  namespace?: string;
  /** Embeds chunk texts on `add` (when no `embeddings` are given) and query texts on `search`. */
  embedder?: Embedder;
  /**
   * The index's metric, in Zerda's words ('cosine', 'dot', 'l2') or Pinecone's ('cosine',
   * 'dotproduct', 'euclidean'). Default: read from the index description; when given, it is
   * checked against it.
   */
  metric?: DistanceMetric | PineconeMetric;
  /** Vector dimension. Default: the embedder's, else the index's. Checked against the index. */
  dimension?: number;
  /** Metadata key of the chunk text (default 'text', as LangChain's Pinecone store uses). */
  textKey?: string;
  /** Metadata key of the document id, which the filter convention reads for `docId` (default 'docId'). */
  docIdKey?: string;
  /**
   * Keep chunk texts here instead of in Pinecone's metadata (which holds at most 40 KB per
   * record, text included). See `TextStore`.
   */
  textStore?: TextStore;
  /** Records per upsert request (default 100, at most 1,000). */
  batchSize?: number;
  /** Bytes per upsert request body (default and most: 2,000,000). Requests are split to fit. */
  maxRequestBytes?: number;
  /** Bytes of metadata per record (default and most: 40 KB, 40,960). */
  maxMetadataBytes?: number;
  /** Requests in flight at once during `add` and `delete` (default 4). */
  concurrency?: number;
  /** Retries on 429, 5xx, connection failures and timeouts. */
  retry?: RetrySettings;
  /** How long one request may take before it is abandoned and retried (default 30,000 ms). */
  requestTimeoutMs?: number;
  /** Where retries are reported (default: nowhere). */
  logger?: PineconeLogger;
  /** Called before each retry (for metrics, tests). */
  onRetry?: (event: RetryEvent) => void;
}

/** The Pinecone store's native filter option: a Pinecone metadata filter (from `resolveFilter`). */
export interface PineconeFilterOptions {
  filter: PineconeFilter;
}

export type PineconeSearchOptions = VectorSearchOptions & Partial<PineconeFilterOptions>;

interface Connection {
  index: Index;
  metric: DistanceMetric;
  dimension: number;
}

const BACKEND = 'pinecone';

/** Query strings of fetch requests are kept under this many bytes of ids. */
const MAX_FETCH_QUERY_BYTES = 6000;

const scoreConversions: Record<DistanceMetric, string> = {
  cosine: "Pinecone's cosine similarity as returned (cos θ, in [-1, 1])",
  dot: "Pinecone's dot product as returned (raw inner product)",
  l2: '1 / (1 + √s), where s is the squared Euclidean distance Pinecone returns',
};

/**
 * Zerda's Pinecone backend (`VectorDatabase` v1, `name: 'pinecone'`) over the official client.
 *
 * - Chunks are records: id, vector, and metadata holding the chunk's metadata fields, its text
 *   (under `textKey`, unless a `textStore` keeps texts) and its document id (under `docIdKey`).
 * - `add` checks the whole batch before the first request (vectors, ids, the 40 KB metadata
 *   limit, request sizes), then upserts in requests within Pinecone's limits (1,000 records,
 *   2 MB), `concurrency` at a time, each retried with backoff. A write that fails part-way
 *   throws a `BatchWriteError` listing the ids written and the ids not written.
 * - `search` takes the native `filter` of Pinecone's convention (`createPineconeFilterConvention`
 *   with this store's `docIdKey`); scores are similarities, see `capabilities.scoreConversion`.
 * - `delete` removes by id; `count` reads the namespace's record count from the index stats.
 *
 * Pinecone is eventually consistent: a write can take a moment to show in queries and counts.
 */
export class PineconeStore implements VectorDatabase<PineconeFilterOptions> {
  readonly specificationVersion = 'v1' as const;
  readonly name = BACKEND;
  readonly filterConvention: FilterConvention;
  /** The namespace read and written. */
  readonly namespace: string;

  // ES private fields: util.inspect and JSON.stringify of a store never show the key or the client.
  readonly #settings: PineconeStoreSettings;
  private readonly embedder: Embedder | undefined;
  private readonly layout: RecordLayout;
  private readonly textStore: TextStore | undefined;
  private readonly batchSize: number;
  private readonly maxRequestBytes: number;
  private readonly maxMetadataBytes: number;
  private readonly concurrency: number;
  private readonly retry: ResolvedRetry;
  private readonly requestTimeoutMs: number;
  private readonly indexName: string | undefined;
  private metric: DistanceMetric;
  private metricKnown: boolean;
  private knownDimension: number | undefined;
  #connection: Promise<Connection> | undefined;
  private capabilitiesCache: VectorDatabaseCapabilities | undefined;
  /** Secrets to strip from anything the store says. */
  readonly #secrets = new Set<string>();

  constructor(settings: PineconeStoreSettings) {
    if (settings === null || typeof settings !== 'object') {
      throw new InvalidArgumentError({ argument: 'settings', message: 'expected an object' });
    }
    this.#settings = settings;
    if (settings.apiKey !== undefined) this.#secrets.add(settings.apiKey);
    this.indexName =
      settings.indexName ??
      (settings.host === undefined && settings.index === undefined ? readEnv('PINECONE_INDEX') : undefined);
    if (this.indexName === undefined && settings.host === undefined && settings.index === undefined) {
      throw new InvalidArgumentError({
        argument: 'indexName',
        message: 'give indexName, host or an index handle (or set PINECONE_INDEX)',
      });
    }
    this.namespace = settings.namespace ?? namespaceOfHandle(settings.index) ?? '';
    if (typeof this.namespace !== 'string') {
      throw new InvalidArgumentError({
        argument: 'namespace',
        value: this.namespace,
        message: 'expected a string',
      });
    }
    this.embedder = settings.embedder;
    const dimension = settings.dimension ?? settings.embedder?.dimension;
    if (
      dimension !== undefined &&
      !(isPositiveInteger(dimension) && dimension <= pineconeLimits.maxDimension)
    ) {
      throw new InvalidArgumentError({
        argument: 'dimension',
        value: dimension,
        message: `expected an integer from 1 to ${pineconeLimits.maxDimension}`,
      });
    }
    if (
      settings.embedder &&
      settings.dimension !== undefined &&
      settings.embedder.dimension !== settings.dimension
    ) {
      throw new InvalidArgumentError({
        argument: 'dimension',
        value: settings.dimension,
        message: `the embedder produces ${settings.embedder.dimension} dimensions`,
      });
    }
    this.knownDimension = dimension;
    this.metricKnown = settings.metric !== undefined;
    this.metric = settings.metric === undefined ? 'cosine' : toZerdaMetric(settings.metric, 'metric');

    const textKey = settings.textKey ?? 'text';
    const docIdKey = settings.docIdKey ?? 'docId';
    for (const [argument, value] of [
      ['textKey', textKey],
      ['docIdKey', docIdKey],
    ] as const) {
      if (typeof value !== 'string' || value.length === 0) {
        throw new InvalidArgumentError({ argument, value, message: 'expected a non-empty string' });
      }
    }
    this.textStore = settings.textStore;
    if (!this.textStore && textKey === docIdKey) {
      throw new InvalidArgumentError({
        argument: 'docIdKey',
        value: docIdKey,
        message: 'must differ from textKey',
      });
    }
    this.layout = { textKey: this.textStore ? undefined : textKey, docIdKey };
    this.filterConvention = createPineconeFilterConvention({ docIdKey });

    this.batchSize = limitedInteger(settings.batchSize, 100, pineconeLimits.maxRecordsPerUpsert, 'batchSize');
    this.maxRequestBytes = limitedInteger(
      settings.maxRequestBytes,
      pineconeLimits.maxRequestBytes,
      pineconeLimits.maxRequestBytes,
      'maxRequestBytes',
    );
    this.maxMetadataBytes = limitedInteger(
      settings.maxMetadataBytes,
      pineconeLimits.maxMetadataBytes,
      pineconeLimits.maxMetadataBytes,
      'maxMetadataBytes',
    );
    this.concurrency = limitedInteger(settings.concurrency, 4, 64, 'concurrency');
    this.retry = resolveRetry(settings.retry);
    this.requestTimeoutMs = settings.requestTimeoutMs ?? 30_000;
    if (!(this.requestTimeoutMs > 0) || !Number.isFinite(this.requestTimeoutMs)) {
      throw new InvalidArgumentError({
        argument: 'requestTimeoutMs',
        value: this.requestTimeoutMs,
        message: 'expected a positive number of milliseconds',
      });
    }
  }

  /** Metric, persistence, deletion, batch size and score conversion; the metric is the index's once connected. */
  get capabilities(): VectorDatabaseCapabilities {
    if (this.capabilitiesCache?.metric !== this.metric) {
      this.capabilitiesCache = Object.freeze({
        metric: this.metric,
        persistent: true,
        deletion: true,
        maxBatchSize: this.batchSize,
        scoreConversion: scoreConversions[this.metric],
      });
    }
    return this.capabilitiesCache;
  }

  /** Vector dimension, once known (settings, embedder, or the index once connected). */
  get dimension(): number | undefined {
    return this.knownDimension;
  }

  /**
   * Finds the index (describing it where the settings leave its host, metric or dimension
   * open) and checks it against the settings. Done by the first operation anyway; call it to
   * fail early or to learn the metric before the first search.
   */
  async connect(options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.ready(options.signal);
  }

  /**
   * Upserts chunks (inserts, or replaces by id). The whole batch is checked before the first
   * request: a ChunkValidationError lists every chunk that cannot be stored, and nothing is
   * written. Then the records go in requests within Pinecone's limits, `concurrency` at a time,
   * each retried on 429, 5xx, connection failures and timeouts. If a request still fails, no
   * further requests start and a BatchWriteError lists the ids written and those not written
   * (an AbortedError instead when the signal fired before anything was written).
   */
  async add(input: readonly Chunk[], options: AddOptions = {}): Promise<AddResult> {
    const { embeddings, signal, onProgress } = options;
    throwIfAborted(signal);
    const chunks = normalizeChunks(input);
    if (embeddings !== undefined && (!Array.isArray(embeddings) || embeddings.length !== chunks.length)) {
      throw new InvalidArgumentError({
        argument: 'embeddings',
        value: Array.isArray(embeddings) ? `${embeddings.length} vectors` : typeof embeddings,
        message: `expected one vector per chunk (${chunks.length})`,
      });
    }
    if (chunks.length === 0) return { ids: [] };
    const vectors: ReadonlyArray<unknown> =
      embeddings ?? (await embedChunksForStore(this.embedder, chunks, signal));
    const connection = await this.ready(signal);
    const records = this.toRecords(chunks, vectors, connection.dimension);
    const batches = packUpsertBatches(
      records.map(({ bytes }) => bytes),
      {
        maxRecords: this.batchSize,
        maxBytes: this.maxRequestBytes,
        envelopeBytes: upsertEnvelopeBytes(this.namespace),
      },
    );

    if (this.textStore) {
      await this.textStore.setTexts(
        chunks.map(({ id, text }) => ({ id, text })),
        signal ? { signal } : {},
      );
    }

    const written = new Uint8Array(chunks.length);
    let writtenCount = 0;
    let batchesWritten = 0;
    const failure = await runPool(batches.length, this.concurrency, signal, async (batchIndex) => {
      const { start, end } = batches[batchIndex]!;
      const batch = records.slice(start, end).map(({ record }) => record);
      await withRetry(this.run('upsert', signal), () =>
        connection.index.upsert({ records: batch, namespace: this.namespace }),
      );
      written.fill(1, start, end);
      writtenCount += end - start;
      batchesWritten++;
      onProgress?.({ written: writtenCount, total: chunks.length });
    });

    if (failure !== undefined) {
      if (AbortedError.isInstance(failure) && writtenCount === 0) throw failure;
      const writtenIds: string[] = [];
      const failedIds: string[] = [];
      chunks.forEach((chunk, index) => {
        (written[index] ? writtenIds : failedIds).push(chunk.id);
      });
      const reason = failure instanceof Error ? failure.message : String(failure);
      throw new BatchWriteError({
        backend: BACKEND,
        operation: 'add',
        message: this.redact(
          `${failedIds.length} of ${chunks.length} chunks not written (${batchesWritten} of ${batches.length} requests succeeded); ${reason}; not written: ${listIds(failedIds)}`,
        ),
        cause: failure,
        retryable: BackendError.isInstance(failure) ? failure.retryable : false,
        writtenIds,
        failedIds,
      });
    }
    return { ids: chunks.map((chunk) => chunk.id) };
  }

  /**
   * The `topK` records nearest to the query (a text, embedded by the store's embedder, or a
   * vector), best first, among those matching `filter` (a Pinecone filter, as
   * `resolveFilter(store, filter).native` gives it). `topK` above Pinecone's 10,000 is lowered,
   * with a warning.
   */
  async search(
    query: string | Float32Array | readonly number[],
    options: PineconeSearchOptions,
  ): Promise<VectorSearchResult> {
    checkVectorSearchOptions(options);
    const { topK, scoreThreshold, signal, filter } = options;
    if (filter !== undefined && (filter === null || typeof filter !== 'object' || Array.isArray(filter))) {
      throw new InvalidArgumentError({
        argument: 'filter',
        value: filter,
        message: 'expected a Pinecone filter object (see resolveFilter)',
      });
    }
    throwIfAborted(signal);
    const warnings: Warning[] = [];
    const vector = typeof query === 'string' ? await embedQueryForStore(this.embedder, query, signal) : query;
    const connection = await this.ready(signal);
    const values = checkQueryVector(vector, connection.dimension, connection.metric);
    if (typeof values === 'string') {
      throw new InvalidArgumentError({
        argument: typeof query === 'string' ? 'embedder' : 'query',
        value: typeof query === 'string' ? query : undefined,
        message: typeof query === 'string' ? `the query embedding is unusable: ${values}` : values,
      });
    }
    let limit = topK;
    if (limit > pineconeLimits.maxTopK) {
      limit = pineconeLimits.maxTopK;
      warnings.push({
        type: 'unsupported',
        source: BACKEND,
        message: `Pinecone returns at most ${pineconeLimits.maxTopK} matches per query; topK ${topK} was lowered`,
      });
    }
    const response = await withRetry(this.run('search', signal), () =>
      connection.index.query({
        vector: values,
        topK: limit,
        includeMetadata: true,
        includeValues: false,
        namespace: this.namespace,
        ...(filter !== undefined && Object.keys(filter).length > 0 ? { filter } : {}),
      }),
    );

    const matches = (response.matches ?? []).map((match) => ({
      match,
      score: toSimilarity(connection.metric, match.score ?? Number.NaN),
    }));
    matches.sort((a, b) => b.score - a.score);
    const kept = matches.filter(({ score }) => scoreThreshold === undefined || score >= scoreThreshold);
    const texts = this.textStore
      ? await this.textStore.getTexts(
          kept.map(({ match }) => match.id),
          signal ? { signal } : {},
        )
      : undefined;
    let missingText = 0;
    const hits: VectorHit[] = kept.map(({ match, score }) => {
      const { chunk, text } = fromPineconeMetadata(match.id, match.metadata, this.layout);
      const found = texts ? texts.get(match.id) : text;
      if (found === undefined) missingText++;
      return { chunk: { ...chunk, text: found ?? '' }, score };
    });
    if (missingText > 0) {
      warnings.push({
        type: 'compatibility',
        source: BACKEND,
        message: this.textStore
          ? `${missingText} hit(s) have no text in the text store; their text is ''`
          : `${missingText} hit(s) have no text under metadata key '${this.layout.textKey}'; their text is ''`,
      });
    }
    return warnings.length > 0 ? { hits, warnings } : { hits };
  }

  /**
   * Removes records by id (unknown ids are ignored) and returns how many existed: the ids are
   * fetched first (up to 1,000 a request), then deleted (the same), with retries.
   */
  async delete(ids: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number> {
    const { signal } = options;
    throwIfAborted(signal);
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
      throw new InvalidArgumentError({
        argument: 'ids',
        value: ids,
        message: 'expected an array of strings',
      });
    }
    const unique = [...new Set(ids)].filter((id) => id.length > 0);
    if (unique.length === 0) return 0;
    const connection = await this.ready(signal);

    let existing = 0;
    const fetchBatches = packIdBatches(unique, pineconeLimits.maxIdsPerRequest, MAX_FETCH_QUERY_BYTES);
    const fetchFailure = await runPool(fetchBatches.length, this.concurrency, signal, async (batchIndex) => {
      const batch = fetchBatches[batchIndex]!;
      const response = await withRetry(this.run('delete', signal), () =>
        connection.index.fetch({ ids: batch, namespace: this.namespace }),
      );
      existing += Object.keys(response.records ?? {}).length;
    });
    if (fetchFailure !== undefined) throw fetchFailure;

    const deleteBatches = packIdBatches(unique, pineconeLimits.maxIdsPerRequest);
    const deleteFailure = await runPool(
      deleteBatches.length,
      this.concurrency,
      signal,
      async (batchIndex) => {
        const batch = deleteBatches[batchIndex]!;
        await withRetry(this.run('delete', signal), () =>
          connection.index.deleteMany({ ids: batch, namespace: this.namespace }),
        );
      },
    );
    if (deleteFailure !== undefined) throw deleteFailure;
    if (this.textStore) await this.textStore.deleteTexts(unique, signal ? { signal } : {});
    return existing;
  }

  /** Records in the namespace, from the index stats (eventually consistent). */
  async count(options: { signal?: AbortSignal } = {}): Promise<number> {
    const { signal } = options;
    throwIfAborted(signal);
    const connection = await this.ready(signal);
    const stats = await withRetry(this.run('count', signal), () => connection.index.describeIndexStats());
    return namespaceCount(stats.namespaces, this.namespace);
  }

  // -------------------------------------------------------------------------------------------

  private run(operation: string, signal: AbortSignal | undefined): RetryRun {
    return {
      backend: BACKEND,
      operation,
      retry: this.retry,
      timeoutMs: this.requestTimeoutMs,
      signal,
      logger: this.#settings.logger,
      onRetry: this.#settings.onRetry,
      redact: (text) => this.redact(text),
    };
  }

  private redact(text: string): string {
    let result = text;
    for (const secret of this.#secrets) {
      if (secret.length >= 4) result = result.split(secret).join('[redacted]');
    }
    return result;
  }

  private async ready(signal: AbortSignal | undefined): Promise<Connection> {
    this.#connection ??= this.open().catch((error: unknown) => {
      this.#connection = undefined;
      throw error;
    });
    return abortable(this.#connection, signal);
  }

  private async open(): Promise<Connection> {
    const settings = this.#settings;
    let index = settings.index;
    let describedDimension: number | undefined;
    if (index === undefined) {
      const client = settings.client ?? this.createClient();
      if (settings.client) {
        const key = safeApiKeyOf(settings.client);
        if (key !== undefined) this.#secrets.add(key);
      }
      let host = settings.host;
      if (this.indexName !== undefined && (host === undefined || !this.metricKnown)) {
        const name = this.indexName;
        const description = await withRetry(this.run('connect', undefined), () => client.describeIndex(name));
        if ((description as { vectorType?: string }).vectorType === 'sparse') {
          throw new InvalidArgumentError({
            argument: 'indexName',
            value: name,
            message: 'the index is sparse; the Zerda store needs a dense index',
          });
        }
        const metric = toZerdaMetric(description.metric, 'index metric');
        if (this.metricKnown && metric !== this.metric) {
          throw new InvalidArgumentError({
            argument: 'metric',
            value: this.#settings.metric,
            message: `index '${name}' uses the ${description.metric} metric; set metric: '${metric}' (or leave it out)`,
          });
        }
        this.metric = metric;
        this.metricKnown = true;
        describedDimension = description.dimension;
        host ??= description.host;
        if (!host) {
          throw new BackendError({
            backend: BACKEND,
            operation: 'connect',
            message: `index '${name}' has no host yet; is it ready?`,
          });
        }
      }
      index = client.index({
        ...(this.indexName === undefined ? {} : { name: this.indexName }),
        ...(host === undefined ? {} : { host }),
      });
    }
    if (describedDimension === undefined && this.knownDimension === undefined) {
      const handle = index;
      const stats = await withRetry(this.run('connect', undefined), () => handle.describeIndexStats());
      describedDimension = stats.dimension;
    }
    if (
      describedDimension !== undefined &&
      this.knownDimension !== undefined &&
      describedDimension !== this.knownDimension
    ) {
      throw new InvalidArgumentError({
        argument: this.#settings.dimension !== undefined ? 'dimension' : 'embedder',
        value: this.knownDimension,
        message: `the index has dimension ${describedDimension}, the store's ${this.#settings.dimension !== undefined ? 'settings say' : 'embedder produces'} ${this.knownDimension}`,
      });
    }
    const dimension = this.knownDimension ?? describedDimension;
    if (dimension === undefined) {
      throw new BackendError({
        backend: BACKEND,
        operation: 'connect',
        message: 'the index did not report its dimension; set dimension in the settings',
      });
    }
    this.knownDimension = dimension;
    return { index, metric: this.metric, dimension };
  }

  private createClient(): Pinecone {
    const apiKey = this.#settings.apiKey ?? readEnv('PINECONE_API_KEY');
    if (apiKey === undefined || apiKey.length === 0) {
      throw new InvalidArgumentError({
        argument: 'apiKey',
        message: 'no Pinecone API key: set PINECONE_API_KEY, or pass apiKey, client or index in the settings',
      });
    }
    this.#secrets.add(apiKey);
    const controllerHostUrl = this.#settings.controllerHostUrl ?? readEnv('PINECONE_CONTROLLER_HOST');
    return new Pinecone({
      apiKey,
      ...(controllerHostUrl ? { controllerHostUrl } : {}),
      // The store retries (with Retry-After and timeouts); the client's own retries would multiply them.
      maxRetries: 0,
      fetchApi: observingFetch(),
    });
  }

  /** Checks every chunk and builds its record; throws one ChunkValidationError listing every problem. */
  private toRecords(
    chunks: readonly Chunk[],
    vectors: ReadonlyArray<unknown>,
    dimension: number,
  ): Array<{ record: PineconeWireRecord; bytes: number }> {
    const problems: ChunkProblem[] = [];
    const records: Array<{ record: PineconeWireRecord; bytes: number }> = [];
    const envelope = upsertEnvelopeBytes(this.namespace);
    chunks.forEach((chunk, index) => {
      const problem = (reason: string) => problems.push({ index, id: chunk.id, reason });
      if (chunk.id.length > pineconeLimits.maxIdLength) {
        problem(`the id has ${chunk.id.length} characters; Pinecone allows ${pineconeLimits.maxIdLength}`);
        return;
      }
      const values = checkStoredVector(vectors[index], dimension);
      if (typeof values === 'string') {
        problem(values);
        return;
      }
      const metadata = toPineconeMetadata(chunk, this.layout);
      if (typeof metadata === 'string') {
        problem(metadata);
        return;
      }
      const metadataBytes = Buffer.byteLength(JSON.stringify(metadata));
      if (metadataBytes > this.maxMetadataBytes) {
        const textBytes = this.layout.textKey === undefined ? 0 : Buffer.byteLength(chunk.text);
        problem(
          `its Pinecone metadata would be ${metadataBytes} bytes (the text ${textBytes} of them); Pinecone allows ${this.maxMetadataBytes} per record: shorten the text or metadata, or keep texts elsewhere with the textStore setting`,
        );
        return;
      }
      const record: PineconeWireRecord = { id: chunk.id, values };
      if (Object.keys(metadata).length > 0) record.metadata = metadata as Record<string, MetadataValue>;
      const bytes = recordBytes(record);
      if (envelope + bytes > this.maxRequestBytes) {
        problem(`the record is ${bytes} bytes, more than one request may carry (${this.maxRequestBytes})`);
        return;
      }
      records.push({ record, bytes });
    });
    if (problems.length > 0) throw new ChunkValidationError({ problems });
    return records;
  }
}

/** `new PineconeStore(settings)`: connects lazily, on the first operation. */
export function createPineconeStore(settings: PineconeStoreSettings): PineconeStore {
  return new PineconeStore(settings);
}

/** A store that has already found and checked its index (so `capabilities.metric` is the index's). */
export async function connectPineconeStore(
  settings: PineconeStoreSettings,
  options: { signal?: AbortSignal } = {},
): Promise<PineconeStore> {
  const store = new PineconeStore(settings);
  await store.connect(options);
  return store;
}

// ---------------------------------------------------------------------------------------------

/**
 * Runs `task(0 .. count-1)` with at most `concurrency` in flight, in order of index. After the
 * first failure (or an abort) no new task starts; the tasks in flight finish. Returns the first
 * failure, or undefined.
 */
async function runPool(
  count: number,
  concurrency: number,
  signal: AbortSignal | undefined,
  task: (index: number) => Promise<void>,
): Promise<unknown> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (failure === undefined && next < count) {
      if (signal?.aborted) {
        failure ??= new AbortedError({ cause: signal.reason });
        return;
      }
      const index = next++;
      try {
        await task(index);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return failure;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(new AbortedError({ cause: signal.reason }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError({ cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function toSimilarity(metric: DistanceMetric, score: number): number {
  if (metric === 'cosine') return Math.min(1, Math.max(-1, score));
  if (metric === 'dot') return score;
  return 1 / (1 + Math.sqrt(Math.max(0, score)));
}

function toZerdaMetric(metric: string, argument: string): DistanceMetric {
  switch (metric) {
    case 'cosine':
      return 'cosine';
    case 'dot':
    case 'dotproduct':
      return 'dot';
    case 'l2':
    case 'euclidean':
      return 'l2';
    default:
      throw new InvalidArgumentError({
        argument,
        value: metric,
        message: "expected 'cosine', 'dot' ('dotproduct') or 'l2' ('euclidean')",
      });
  }
}

/** A dense vector Pinecone accepts, as plain numbers, or what is wrong with it. */
function checkStoredVector(input: unknown, dimension: number): number[] | string {
  if (!isNumberArray(input)) return `the vector must be an array of numbers or a Float32Array`;
  if (input.length !== dimension)
    return `the vector has ${input.length} dimensions, the index has ${dimension}`;
  const values = new Array<number>(dimension);
  let nonZero = false;
  for (let position = 0; position < dimension; position++) {
    const value = input[position];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return `the vector holds ${String(value)} at position ${position}; every value must be a finite number`;
    }
    if (!Number.isFinite(Math.fround(value)))
      return `the value ${value} at position ${position} does not fit in float32`;
    if (value !== 0) nonZero = true;
    values[position] = value;
  }
  if (!nonZero) return 'the vector is all zeros; Pinecone refuses dense vectors without a non-zero value';
  return values;
}

function checkQueryVector(input: unknown, dimension: number, metric: DistanceMetric): number[] | string {
  if (!isNumberArray(input)) return 'the query must be an array of numbers or a Float32Array';
  if (input.length !== dimension)
    return `the query has ${input.length} dimensions, the index has ${dimension}`;
  const values = new Array<number>(dimension);
  let nonZero = false;
  for (let position = 0; position < dimension; position++) {
    const value = input[position];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return `the query holds ${String(value)} at position ${position}; every value must be a finite number`;
    }
    if (value !== 0) nonZero = true;
    values[position] = value;
  }
  if (!nonZero && metric === 'cosine')
    return 'a zero vector has no direction, so it has no cosine similarity';
  return values;
}

function isNumberArray(input: unknown): input is ArrayLike<unknown> {
  if (Array.isArray(input)) return true;
  return (
    ArrayBuffer.isView(input) &&
    !(input instanceof DataView) &&
    !(input instanceof BigInt64Array) &&
    !(input instanceof BigUint64Array)
  );
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function limitedInteger(
  value: number | undefined,
  fallback: number,
  maximum: number,
  argument: string,
): number {
  if (value === undefined) return fallback;
  if (!isPositiveInteger(value) || value > maximum) {
    throw new InvalidArgumentError({ argument, value, message: `expected an integer from 1 to ${maximum}` });
  }
  return value;
}

function namespaceCount(
  namespaces: Record<string, { recordCount?: number }> | undefined,
  namespace: string,
): number {
  if (namespaces === undefined) return 0;
  const entry = namespaces[namespace] ?? (namespace === '' ? namespaces.__default__ : undefined);
  return entry?.recordCount ?? 0;
}

/** The namespace an injected index handle targets (the client keeps it in `target`). */
function namespaceOfHandle(index: Index | undefined): string | undefined {
  const target = (index as unknown as { target?: { namespace?: unknown } } | undefined)?.target;
  return typeof target?.namespace === 'string' ? target.namespace : undefined;
}

function safeApiKeyOf(client: Pinecone): string | undefined {
  try {
    const key = client.getConfig().apiKey;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

function readEnv(name: string): string | undefined {
  const value = typeof process === 'undefined' ? undefined : process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

function listIds(ids: readonly string[], shown = 10): string {
  const head = ids.slice(0, shown).map((id) => JSON.stringify(id));
  return ids.length > shown ? `${head.join(', ')} and ${ids.length - shown} more` : head.join(', ');
}
