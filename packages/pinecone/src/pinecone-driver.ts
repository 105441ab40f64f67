import { type Index, Pinecone } from '@pinecone-database/pinecone';
import {
  BackendError,
  BatchWriteError,
  type Chunk,
  type DistanceMetric,
  type FilterConvention,
  InvalidArgumentError,
} from '@zerda/core';
import {
  type DriverCallOptions,
  type DriverCapabilities,
  type DriverListOptions,
  type DriverListPage,
  type DriverMatch,
  type DriverQueryOptions,
  lazySetting,
  type RecordProblem,
  readEnv,
  resolveRetrySettings,
  type VectorDriver,
  type VectorRecord,
  withRetry,
  withTimeout,
} from '@zerda/core/backend';
import { createPineconeFilterConvention, type PineconeFilter } from './pinecone-filter.js';
import {
  fromPineconeMetadata,
  pineconeLimits as limits,
  type PineconeWireRecord,
  packIdBatches,
  packUpsertBatches,
  type RecordLayout,
  recordBytes,
  toPineconeMetadata,
  upsertEnvelopeBytes,
} from './pinecone-records.js';
import {
  type AttemptState,
  attemptStorage,
  classifyPineconeError,
  observingFetch,
  redactor,
} from './pinecone-requests.js';
import type { PineconeStoreSettings } from './pinecone-store.js';

const BACKEND = 'pinecone';
/** Query strings of fetch requests are kept under this many bytes of ids. */
const MAX_FETCH_QUERY_BYTES = 6000;
type FetchedRecord = { id: string; values?: number[]; metadata?: Record<string, unknown> | undefined };

/** Pinecone's data plane as a contract-v2 driver (built by `createPineconeStore`). */
export class PineconeDriver implements VectorDriver<PineconeFilter> {
  readonly specificationVersion = 'v2' as const;
  readonly name = BACKEND;
  readonly filterConvention: FilterConvention<PineconeFilter>;
  /** The namespace read and written. */
  readonly namespace: string;
  // ES private fields: util.inspect and JSON.stringify never show the key, the client or the settings.
  readonly #settings: PineconeStoreSettings;
  readonly #secrets = new Set<string>();
  readonly #redact = redactor(this.#secrets);
  readonly #apiKey: () => string | undefined;
  readonly #layout: RecordLayout;
  readonly #retry: ReturnType<typeof resolveRetrySettings>;
  readonly #indexName: string | undefined;
  readonly #limits: {
    maxBatchSize: number;
    maxRequestBytes: number;
    maxMetadataBytes: number;
    writes: number;
  };
  #metric: DistanceMetric | undefined;
  #dimension: number | undefined;
  #index: Index | undefined;
  #opening: Promise<void> | undefined;
  #capabilities: DriverCapabilities | undefined;

  constructor(settings: PineconeStoreSettings) {
    this.#settings = settings;
    if (settings.apiKey !== undefined) this.#secrets.add(settings.apiKey);
    this.#apiKey = lazySetting({
      name: 'apiKey',
      value: settings.apiKey,
      env: 'PINECONE_API_KEY',
      required: true,
    });
    const { host, index, textStore, textKey = 'text', docIdKey = 'docId', timeoutMs = 30_000 } = settings;
    this.#indexName =
      settings.indexName ??
      (host === undefined && index === undefined ? readEnv('PINECONE_INDEX') : undefined);
    if (this.#indexName === undefined && host === undefined && index === undefined) {
      refuse('indexName', undefined, 'give indexName, host or an index handle (or set PINECONE_INDEX)');
    }
    this.namespace = settings.namespace ?? namespaceOfHandle(index) ?? '';
    if (typeof this.namespace !== 'string') {
      refuse('namespace', this.namespace, 'expected a string');
    }
    this.#dimension = settings.dimension ?? settings.embedder?.dimension;
    limitedInteger('dimension', this.#dimension, 1, limits.maxDimension);
    this.#metric = settings.metric === undefined ? undefined : toZerdaMetric(settings.metric, 'metric');
    for (const [argument, value] of Object.entries({ textKey, docIdKey })) {
      if (typeof value !== 'string' || value.length === 0) {
        refuse(argument, value, 'expected a non-empty string');
      }
    }
    if (!textStore && textKey === docIdKey) {
      refuse('docIdKey', docIdKey, 'must differ from textKey');
    }
    this.#layout = { textKey: textStore ? undefined : textKey, docIdKey };
    this.filterConvention = createPineconeFilterConvention({ docIdKey });
    this.#limits = {
      maxBatchSize: limitedInteger('maxBatchSize', settings.maxBatchSize, 100, limits.maxRecordsPerUpsert),
      maxRequestBytes: limitedInteger('maxRequestBytes', settings.maxRequestBytes, limits.maxRequestBytes),
      maxMetadataBytes: limitedInteger(
        'maxMetadataBytes',
        settings.maxMetadataBytes,
        limits.maxMetadataBytes,
      ),
      writes: limitedInteger('maxConcurrentWrites', settings.maxConcurrentWrites, 4, 64),
    };
    this.#retry = resolveRetrySettings(settings.retry);
    if (!(timeoutMs > 0 && Number.isFinite(timeoutMs))) {
      refuse('timeoutMs', timeoutMs, 'expected a positive number of milliseconds');
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
        maxBatchSize: this.#limits.maxBatchSize,
        maxIdsPerCall: limits.maxIdsPerRequest,
        maxConcurrentWrites: this.#limits.writes,
      });
    }
    return this.#capabilities;
  }

  get dimension(): number | undefined {
    return this.#dimension;
  }

  /** Finds the index (describing it where the settings leave its host or metric open) and checks it against the settings; once. */
  open(): Promise<void> {
    this.#opening ??= this.#connect().catch((error: unknown) => {
      this.#opening = undefined;
      throw error;
    });
    return this.#opening;
  }

  async #connect(): Promise<void> {
    const { client: given, host: hostSetting, index: handle, metric: metricSetting } = this.#settings;
    let index = handle;
    let described: number | undefined;
    if (index === undefined) {
      const client = given ?? this.#createClient();
      if (given) this.#addSecret(() => given.getConfig().apiKey);
      let host = hostSetting;
      const name = this.#indexName;
      if (name !== undefined && (host === undefined || metricSetting === undefined)) {
        const description = await this.#request('connect', undefined, () => client.describeIndex(name));
        if ((description as { vectorType?: string }).vectorType === 'sparse') {
          refuse('indexName', name, 'the index is sparse; the Zerda store needs a dense index');
        }
        const metric = toZerdaMetric(description.metric, 'index metric');
        if (metricSetting !== undefined && metric !== this.#metric) {
          refuse(
            'metric',
            metricSetting,
            `index '${name}' uses the ${description.metric} metric; set metric: '${metric}' (or leave it out)`,
          );
        }
        this.#metric = metric;
        described = description.dimension;
        host ??= description.host;
        if (!host)
          throw new BackendError({
            backend: BACKEND,
            operation: 'connect',
            message: `index '${name}' has no host yet; is it ready?`,
          });
      }
      index = client.index({
        ...(name === undefined ? {} : { name }),
        ...(host === undefined ? {} : { host }),
      });
    }
    if (described === undefined && this.#dimension === undefined) {
      const target = index;
      described = (await this.#request('connect', undefined, () => target.describeIndexStats())).dimension;
    }
    if (described !== undefined && this.#dimension !== undefined && described !== this.#dimension) {
      const fromSettings = this.#settings.dimension !== undefined;
      refuse(
        fromSettings ? 'dimension' : 'embedder',
        this.#dimension,
        `the index has dimension ${described}, the store's ${fromSettings ? 'settings say' : 'embedder produces'} ${this.#dimension}`,
      );
    }
    this.#dimension ??= described;
    this.#index = index;
  }

  /** Pinecone's limits: ids of at most 512 characters, a non-zero vector, 40 KB of metadata, one request per record. */
  checkRecords(records: readonly VectorRecord[]): RecordProblem[] {
    const envelope = upsertEnvelopeBytes(this.namespace);
    const problems: RecordProblem[] = [];
    records.forEach((record, index) => {
      const reason = this.#problemOf(record, envelope);
      if (reason !== undefined) problems.push({ index, reason });
    });
    return problems;
  }

  /** Upserts in requests of at most 2 MB (and `maxRequestBytes`); a failure after some of them is a BatchWriteError. */
  async upsert(records: readonly VectorRecord[], { signal }: DriverCallOptions): Promise<void> {
    const wire = records.map((record) => this.#toWire(record) as PineconeWireRecord);
    const { textStore } = this.#settings;
    if (textStore)
      await textStore.setTexts(
        records.map(({ id, text }) => ({ id, text })),
        { signal },
      );
    const envelopeBytes = upsertEnvelopeBytes(this.namespace);
    const { maxBatchSize: maxRecords, maxRequestBytes: maxBytes } = this.#limits;
    const writtenIds: string[] = [];
    for (const { start, end } of packUpsertBatches(wire.map(recordBytes), {
      maxRecords,
      maxBytes,
      envelopeBytes,
    })) {
      const batch = wire.slice(start, end);
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
          failedIds: wire.slice(start).map((record) => record.id),
        });
      }
      writtenIds.push(...batch.map((record) => record.id));
    }
  }

  /** Pinecone returns at most 10,000 matches: a larger topK is lowered, with a warning. */
  async query(
    vector: Float32Array,
    { topK, filter, signal, warn }: DriverQueryOptions<PineconeFilter>,
  ): Promise<DriverMatch[]> {
    if (topK > limits.maxTopK) {
      warn?.({
        type: 'unsupported',
        source: BACKEND,
        message: `Pinecone returns at most ${limits.maxTopK} matches per query; topK ${topK} was lowered`,
      });
    }
    const response = await this.#request('search', signal, () =>
      this.#target.query({
        vector: Array.from(vector),
        topK: Math.min(topK, limits.maxTopK),
        includeMetadata: true,
        includeValues: false,
        namespace: this.namespace,
        ...(filter !== undefined && Object.keys(filter).length > 0 ? { filter } : {}),
      }),
    );
    const matches = response.matches ?? [];
    const chunks = await this.#toChunks(matches, signal, (missing) =>
      warn?.({
        type: 'compatibility',
        source: BACKEND,
        message: this.#settings.textStore
          ? `${missing} hit(s) have no text in the text store; their text is ''`
          : `${missing} hit(s) have no text under metadata key '${this.#layout.textKey}'; their text is ''`,
      }),
    );
    return matches.map((match, i) => ({ id: match.id, score: match.score ?? Number.NaN, chunk: chunks[i]! }));
  }

  async get(ids: readonly string[], { signal }: DriverCallOptions): Promise<Chunk[]> {
    return this.#toChunks(await this.#fetch(ids, 'get', signal), signal);
  }

  /** Fetches the ids first, to say how many existed, then deletes them (and their texts). */
  async delete(ids: readonly string[], { signal }: DriverCallOptions): Promise<number> {
    const present = ids.filter((id) => id.length > 0);
    if (present.length === 0) return 0;
    const existing = (await this.#fetch(present, 'delete', signal)).length;
    await this.#request('delete', signal, () =>
      this.#target.deleteMany({ ids: present, namespace: this.namespace }),
    );
    await this.#settings.textStore?.deleteTexts(present, { signal });
    return existing;
  }

  /** Records in the namespace, from the index stats (eventually consistent). */
  async count({ signal }: DriverCallOptions): Promise<number> {
    const { namespaces = {} } = await this.#request('count', signal, () => this.#target.describeIndexStats());
    const entry = namespaces[this.namespace] ?? (this.namespace === '' ? namespaces.__default__ : undefined);
    return entry?.recordCount ?? 0;
  }

  /** A page of ids from Pinecone's `list` (serverless indexes; ids in byte order), then their records by fetch. */
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
    const chunks = await this.#toChunks(records, signal);
    const vectors = includeVectors
      ? records.map((record) => Float32Array.from(record.values ?? []))
      : undefined;
    return { chunks, vectors, nextCursor: page.pagination?.next || undefined };
  }

  get #target(): Index {
    if (this.#index === undefined)
      throw new BackendError({ backend: BACKEND, operation: 'connect', message: 'the driver is not open' });
    return this.#index;
  }

  /** One request, bounded by `timeoutMs` and retried per `retry`; retries reported to `onRetry` and the logger. */
  #request<T>(operation: string, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    const { onRetry, logger, timeoutMs = 30_000 } = this.#settings;
    let state: AttemptState | undefined;
    const attempt = (attemptSignal: AbortSignal) => {
      state = { signal: attemptSignal };
      return attemptStorage.run(state, call);
    };
    return withRetry(() => withTimeout(attempt, { timeoutMs, signal, backend: BACKEND, operation }), {
      backend: BACKEND,
      operation,
      retry: this.#retry,
      signal,
      classify: (error) => classifyPineconeError(error, state, this.#redact),
      onRetry: (event) => {
        onRetry?.(event);
        const { attempt: failed, attempts, reason, delayMs } = event;
        logger?.warn?.(
          this.#redact(
            `${BACKEND} ${operation}: attempt ${failed} of ${attempts} failed (${reason}); retrying in ${delayMs} ms`,
          ),
        );
      },
    });
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

  /** The chunks of fetched or matched records, texts from the metadata or the text store; `onMissing` counts those without. */
  async #toChunks(
    records: readonly FetchedRecord[],
    signal: AbortSignal | undefined,
    onMissing?: (count: number) => void,
  ): Promise<Chunk[]> {
    const { textStore } = this.#settings;
    const texts =
      textStore && records.length > 0
        ? await textStore.getTexts(
            records.map(({ id }) => id),
            { signal },
          )
        : undefined;
    let missing = 0;
    const chunks = records.map(({ id, metadata }) => {
      const { chunk, text } = fromPineconeMetadata(id, metadata, this.#layout);
      const found = texts ? texts.get(id) : text;
      if (found === undefined) missing++;
      return { ...chunk, text: found ?? '' };
    });
    if (missing > 0) onMissing?.(missing);
    return chunks;
  }

  #toWire(record: VectorRecord): PineconeWireRecord | string {
    const metadata = toPineconeMetadata(record, this.#layout);
    if (typeof metadata === 'string') return metadata;
    const wire: PineconeWireRecord = { id: record.id, values: Array.from(record.vector) };
    if (Object.keys(metadata).length > 0) wire.metadata = metadata;
    return wire;
  }

  #problemOf(record: VectorRecord, envelopeBytes: number): string | undefined {
    if (record.id.length > limits.maxIdLength) {
      return `the id has ${record.id.length} characters; Pinecone allows ${limits.maxIdLength}`;
    }
    if (record.vector.every((value) => value === 0)) {
      return 'the vector is all zeros; Pinecone refuses dense vectors without a non-zero value';
    }
    const wire = this.#toWire(record);
    if (typeof wire === 'string') return wire;
    const metadataBytes = Buffer.byteLength(JSON.stringify(wire.metadata ?? {}));
    const { maxMetadataBytes, maxRequestBytes } = this.#limits;
    if (metadataBytes > maxMetadataBytes) {
      const textBytes = this.#layout.textKey === undefined ? 0 : Buffer.byteLength(record.text);
      return `its Pinecone metadata would be ${metadataBytes} bytes (the text ${textBytes} of them); Pinecone allows ${maxMetadataBytes} per record: shorten the text or metadata, or keep texts elsewhere with the textStore setting`;
    }
    const bytes = recordBytes(wire);
    if (envelopeBytes + bytes > maxRequestBytes)
      return `the record is ${bytes} bytes, more than one request may carry (${maxRequestBytes})`;
    return undefined;
  }

  #createClient(): Pinecone {
    const apiKey = this.#apiKey() as string;
    this.#secrets.add(apiKey);
    const controllerHostUrl = this.#settings.controllerHostUrl ?? readEnv('PINECONE_CONTROLLER_HOST');
    // The driver retries (with Retry-After and timeouts); the client's own retries would multiply them.
    return new Pinecone({
      apiKey,
      ...(controllerHostUrl ? { controllerHostUrl } : {}),
      maxRetries: 0,
      fetchApi: observingFetch(),
    });
  }

  #addSecret(read: () => unknown): void {
    try {
      const secret = read();
      if (typeof secret === 'string') this.#secrets.add(secret);
    } catch {
      // a client without a readable key has none to hide
    }
  }
}

function refuse(argument: string, value: unknown, message: string): never {
  throw new InvalidArgumentError({ argument, value, message });
}

function toZerdaMetric(metric: string, argument: string): DistanceMetric {
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
