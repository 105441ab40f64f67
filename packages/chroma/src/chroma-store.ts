import {
  type AddOptions,
  type AddResult,
  BackendError,
  BatchWriteError,
  type ChromaWhere,
  type Chunk,
  type ChunkProblem,
  ChunkValidationError,
  checkVectorSearchOptions,
  createChromaFilterConvention,
  type DistanceMetric,
  type Embedder,
  embedChunksForStore,
  embedQueryForStore,
  type FilterConvention,
  InvalidArgumentError,
  prepareAddBatch,
  throwIfAborted,
  type VectorDatabase,
  type VectorDatabaseCapabilities,
  type VectorHit,
  type VectorSearchOptions,
  type VectorSearchResult,
} from '@zerda/core';
import { ChromaClient, type Metadata as ChromaMetadata, type Collection, type Where } from 'chromadb';
import { abortable, boundedRequest } from './chroma-errors.js';
import { type ChromaRecordMetadata, fromChromaRecord, toChromaMetadata } from './chroma-metadata.js';
import { isNumberArray, isZeroVector, toNumberArray, vectorProblem } from './vector-checks.js';

/** Chroma's name for each metric's space. */
export type ChromaSpace = 'cosine' | 'l2' | 'ip';

export const DEFAULT_CHROMA_URL = 'http://localhost:8000';
export const DEFAULT_CHROMA_COLLECTION = 'zerda';
export const DEFAULT_CHROMA_TIMEOUT_MS = 30_000;

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
  /** Default: `CHROMA_TENANT`, else Chroma's `default_tenant`. */
  tenant?: string;
  /** Default: `CHROMA_DATABASE`, else Chroma's `default_database`. */
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
  /**
   * Most records per write request. Default and upper bound: the server's maximum batch size
   * (5461 for a local server), asked once.
   */
  maxBatchSize?: number;
  /** Longest wait for one request to the server, in ms (default 30,000). */
  timeoutMs?: number;
  /** The metadata key holding each chunk's document id, which filters on `docId` read (default 'docId'). */
  docIdKey?: string;
}

/** Chroma's native filter option: a Chroma `where` (core's `chromaFilterConvention` writes one). */
export interface ChromaFilterOptions {
  where: ChromaWhere;
}

export type ChromaSearchOptions = VectorSearchOptions & Partial<ChromaFilterOptions>;

const spaces: Record<DistanceMetric, ChromaSpace> = { cosine: 'cosine', l2: 'l2', dot: 'ip' };
const metricsBySpace: Record<ChromaSpace, DistanceMetric> = { cosine: 'cosine', l2: 'l2', ip: 'dot' };

const scoreConversions: Record<DistanceMetric, string> = {
  cosine: "cosine similarity: 1 - d for Chroma's cosine distance d (space 'cosine')",
  l2: "1 / (1 + sqrt(d)) for Chroma's squared Euclidean distance d (space 'l2'), that is 1 / (1 + Euclidean distance)",
  dot: "the inner product: 1 - d for Chroma's inner-product distance d = 1 - q·x (space 'ip')",
};

interface PreparedRecord {
  id: string;
  embedding: number[];
  document: string;
  metadata: ChromaRecordMetadata | null;
}

/**
 * A Zerda VectorDatabase (v1) over a Chroma server, through the official `chromadb` client.
 * Chunks are stored whole: the vector, the text as the document, the metadata (with the
 * document id under `docIdKey`), so a search returns whole chunks. Filters go to Chroma as a
 * native `where` (filter convention 'chroma', option `where`); what Chroma cannot evaluate
 * (`$exists`, the `id` pseudo-field, `$not` around a range) is left to the caller's residual
 * (`VectorRetriever` does it). Every request is bounded by `timeoutMs`, and Chroma's errors
 * become BackendErrors that keep the original as `cause`.
 *
 * The connection is made lazily, at the first call; `connect()` makes it now.
 */
export class ChromaStore implements VectorDatabase<ChromaFilterOptions> {
  readonly specificationVersion = 'v1' as const;
  readonly name = 'chroma';
  readonly filterConvention: FilterConvention;
  /** The collection's name. */
  readonly collectionName: string;
  readonly metric: DistanceMetric;
  /** The server's URL, as said in errors ('an injected client' when one was given without `url`). */
  readonly url: string;
  readonly timeoutMs: number;
  readonly docIdKey: string;

  readonly #settings: ChromaStoreSettings;
  readonly #embedder: Embedder | undefined;
  readonly #batchSizeSetting: number | undefined;
  #client: ChromaClient | undefined;
  #collection: Promise<Collection> | undefined;
  #dimension: number | undefined;
  #serverBatchSize: number | undefined;
  #capabilities: VectorDatabaseCapabilities;

  constructor(settings: ChromaStoreSettings = {}) {
    const {
      metric = 'cosine',
      embedder,
      dimension,
      maxBatchSize,
      timeoutMs = DEFAULT_CHROMA_TIMEOUT_MS,
    } = settings;
    if (!Object.hasOwn(spaces, metric)) {
      throw new InvalidArgumentError({
        argument: 'metric',
        value: metric,
        message: "expected 'cosine', 'dot' or 'l2'",
      });
    }
    for (const [argument, value] of [
      ['dimension', dimension],
      ['maxBatchSize', maxBatchSize],
      ['timeoutMs', timeoutMs],
    ] as const) {
      if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
        throw new InvalidArgumentError({ argument, value, message: 'expected a positive integer' });
      }
    }
    if (embedder !== undefined && dimension !== undefined && embedder.dimension !== dimension) {
      throw new InvalidArgumentError({
        argument: 'dimension',
        value: dimension,
        message: `the embedder produces ${embedder.dimension} dimensions`,
      });
    }
    const docIdKey = settings.docIdKey ?? 'docId';
    if (typeof docIdKey !== 'string' || docIdKey.length === 0 || docIdKey.startsWith('$')) {
      throw new InvalidArgumentError({
        argument: 'docIdKey',
        value: docIdKey,
        message: "expected a non-empty metadata key not starting with '$'",
      });
    }
    const collection = settings.collection ?? process.env.CHROMA_COLLECTION ?? DEFAULT_CHROMA_COLLECTION;
    if (typeof collection !== 'string' || collection.length === 0) {
      throw new InvalidArgumentError({
        argument: 'collection',
        value: collection,
        message: 'expected a name',
      });
    }
    this.#settings = settings;
    this.#client = settings.client;
    this.url =
      settings.url ??
      (settings.client ? 'an injected client' : (process.env.CHROMA_URL ?? DEFAULT_CHROMA_URL));
    if (settings.client === undefined) parseServerUrl(this.url);
    this.collectionName = collection;
    this.metric = metric;
    this.timeoutMs = timeoutMs;
    this.docIdKey = docIdKey;
    this.#embedder = embedder;
    this.#dimension = dimension ?? embedder?.dimension;
    this.#batchSizeSetting = maxBatchSize;
    this.filterConvention = createChromaFilterConvention({ docIdKey });
    this.#capabilities = this.#describeCapabilities();
  }

  /**
   * What the store can do. `maxBatchSize` is the `maxBatchSize` setting until the server has
   * been asked, then the smaller of the setting and the server's limit.
   */
  get capabilities(): VectorDatabaseCapabilities {
    return this.#capabilities;
  }

  /** Vector dimension, once known (settings, embedder, the collection, or the first add). */
  get dimension(): number | undefined {
    return this.#dimension;
  }

  /** Connects now (opening or creating the collection) rather than at the first call. */
  async connect(options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.#ready(options.signal);
  }

  /**
   * Inserts chunks, or replaces those whose id is stored. The whole batch is checked first
   * (chunks, one vector per chunk, dimension, finite values, metadata Chroma can store): any
   * problem throws before anything is written. Then it is written in requests of at most
   * `capabilities.maxBatchSize` records; if one of several requests fails, the earlier ones
   * stay written (the error says how many chunks were), and adding the batch again is safe.
   */
  async add(input: readonly Chunk[], options: AddOptions = {}): Promise<AddResult> {
    const { embeddings, signal, onProgress } = options;
    throwIfAborted(signal);
    const chunks = prepareAddBatch(input, embeddings);
    if (chunks.length === 0) return { ids: [] };
    const vectors: ReadonlyArray<unknown> =
      embeddings ?? (await embedChunksForStore(this.#embedder, chunks, signal));
    const first = vectors[0];
    const batchDimension = this.#dimension ?? (isNumberArray(first) ? first.length : undefined);
    const records = this.#prepare(chunks, vectors, batchDimension);
    throwIfAborted(signal);

    const collection = await this.#ready(signal);
    // A collection opened only now may have told a dimension the batch does not have.
    const dimension = this.#dimension;
    if (dimension !== undefined && records[0]!.embedding.length !== dimension) {
      throw new ChunkValidationError({
        problems: records.map((record, index) => ({
          index,
          id: record.id,
          reason: `the vector has ${record.embedding.length} dimensions, the collection has ${dimension}`,
        })),
      });
    }

    const batchSize = this.#batchSize();
    let written = 0;
    try {
      for (let start = 0; start < records.length; start += batchSize) {
        await this.#writeBatch(collection, records.slice(start, start + batchSize), signal);
        written = Math.min(start + batchSize, records.length);
        this.#dimension ??= records[0]!.embedding.length;
        onProgress?.({ written, total: records.length });
      }
    } catch (error) {
      if (written > 0 && BackendError.isInstance(error)) {
        // Requests go one after another, so exactly the records before `written` are stored.
        throw new BatchWriteError({
          backend: 'chroma',
          operation: 'add',
          message: `${written} of ${records.length} chunks were written before this failure (adding them again is safe): ${error.message}`,
          cause: error,
          retryable: error.retryable,
          writtenIds: records.slice(0, written).map((record) => record.id),
          failedIds: records.slice(written).map((record) => record.id),
        });
      }
      throw error;
    }
    return { ids: chunks.map((chunk) => chunk.id) };
  }

  /**
   * The `topK` chunks most similar to the query (a text, embedded by the store's embedder, or a
   * vector), best first, among those matching `where` (Chroma's native filter). Scores: see
   * `capabilities.scoreConversion`.
   */
  async search(
    query: string | Float32Array | readonly number[],
    options: ChromaSearchOptions,
  ): Promise<VectorSearchResult> {
    const { topK, scoreThreshold, signal, where } = checkSearchOptions(options);
    throwIfAborted(signal);
    const vector: unknown =
      typeof query === 'string' ? await embedQueryForStore(this.#embedder, query, signal) : query;
    this.#checkQuery(vector, query);
    const collection = await this.#ready(signal);
    // The collection may have told its dimension only now.
    this.#checkQuery(vector, query);
    const result = await this.#request('search', signal, () =>
      collection.query({
        queryEmbeddings: [toNumberArray(vector as ArrayLike<number>)],
        nResults: topK,
        ...(where !== undefined && Object.keys(where).length > 0 ? { where: where as Where } : {}),
        include: ['documents', 'metadatas', 'distances'],
      }),
    );
    const ids = result.ids[0] ?? [];
    const documents = result.documents[0] ?? [];
    const metadatas = result.metadatas[0] ?? [];
    const distances = result.distances[0] ?? [];
    const hits: VectorHit[] = [];
    ids.forEach((id, index) => {
      const distance = distances[index];
      if (typeof distance !== 'number' || Number.isNaN(distance)) {
        throw new BackendError({
          backend: 'chroma',
          operation: 'search',
          message: `the Chroma server at ${this.url} returned no distance for '${id}'`,
        });
      }
      const score = this.#toSimilarity(distance);
      if (scoreThreshold !== undefined && score < scoreThreshold) return;
      hits.push({ chunk: fromChromaRecord(id, documents[index], metadatas[index], this.docIdKey), score });
    });
    // Chroma returns nearest first; a stable sort keeps its order where conversions tie.
    hits.sort((a, b) => b.score - a.score);
    return { hits };
  }

  /** Removes chunks by id (unknown ids are ignored); returns how many existed. */
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
    const unique = [...new Set(ids)];
    if (unique.length === 0) return 0;
    const collection = await this.#ready(signal);
    const batchSize = this.#batchSize();
    let removed = 0;
    for (let start = 0; start < unique.length; start += batchSize) {
      const batch = unique.slice(start, start + batchSize);
      // Chroma's delete does not say how many records it removed: ask first.
      const found = await this.#request('delete', signal, () => collection.get({ ids: batch, include: [] }));
      if (found.ids.length === 0) continue;
      await this.#request('delete', signal, () => collection.delete({ ids: found.ids }));
      removed += found.ids.length;
    }
    return removed;
  }

  async count(options: { signal?: AbortSignal } = {}): Promise<number> {
    throwIfAborted(options.signal);
    const collection = await this.#ready(options.signal);
    return this.#request('count', options.signal, () => collection.count());
  }

  /** Deletes the whole collection from the server (a missing one is fine); the next call creates it again. */
  async deleteCollection(options: { signal?: AbortSignal } = {}): Promise<void> {
    const client = this.#getClient();
    try {
      await this.#request('deleteCollection', options.signal, () =>
        client.deleteCollection({ name: this.collectionName }),
      );
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (
        !(BackendError.isInstance(error) && cause instanceof Error && cause.name === 'ChromaNotFoundError')
      ) {
        throw error;
      }
    } finally {
      this.#collection = undefined;
      if (this.#settings.dimension === undefined && this.#embedder === undefined) this.#dimension = undefined;
    }
  }

  #describeCapabilities(): VectorDatabaseCapabilities {
    const maxBatchSize =
      this.#serverBatchSize === undefined
        ? this.#batchSizeSetting
        : Math.min(this.#batchSizeSetting ?? Number.POSITIVE_INFINITY, this.#serverBatchSize);
    return Object.freeze({
      metric: this.metric,
      persistent: true,
      deletion: true,
      ...(maxBatchSize === undefined ? {} : { maxBatchSize }),
      scoreConversion: scoreConversions[this.metric],
    });
  }

  #batchSize(): number {
    return this.#capabilities.maxBatchSize ?? this.#batchSizeSetting ?? 1000;
  }

  #toSimilarity(distance: number): number {
    switch (this.metric) {
      case 'cosine':
        return Math.min(1, Math.max(-1, 1 - distance));
      case 'l2':
        return 1 / (1 + Math.sqrt(Math.max(0, distance)));
      case 'dot':
        return 1 - distance;
    }
  }

  #request<T>(operation: string, signal: AbortSignal | undefined, request: () => Promise<T>): Promise<T> {
    return boundedRequest(request, { operation, url: this.url, timeoutMs: this.timeoutMs, signal });
  }

  #getClient(): ChromaClient {
    if (this.#client) return this.#client;
    const { host, port, ssl } = parseServerUrl(this.url);
    const apiKey = process.env.CHROMA_API_KEY;
    const headers = this.#settings.headers ?? (apiKey ? { 'x-chroma-token': apiKey } : undefined);
    const tenant = this.#settings.tenant ?? process.env.CHROMA_TENANT;
    const database = this.#settings.database ?? process.env.CHROMA_DATABASE;
    this.#client = new ChromaClient({
      host,
      port,
      ssl,
      ...(headers === undefined ? {} : { headers }),
      ...(tenant === undefined ? {} : { tenant }),
      ...(database === undefined ? {} : { database }),
    });
    return this.#client;
  }

  /** The collection, opened (or created) once; a failed attempt is retried by the next call. */
  async #ready(signal: AbortSignal | undefined): Promise<Collection> {
    throwIfAborted(signal);
    this.#collection ??= this.#open().catch((error: unknown) => {
      this.#collection = undefined;
      throw error;
    });
    const collection = await abortable(this.#collection, signal);
    throwIfAborted(signal);
    return collection;
  }

  async #open(): Promise<Collection> {
    const client = this.#getClient();
    const space = spaces[this.metric];
    const collection = await this.#request('open collection', undefined, () =>
      client.getOrCreateCollection({
        name: this.collectionName,
        embeddingFunction: null,
        configuration: { hnsw: { space } },
      }),
    );
    const actual = collection.configuration?.hnsw?.space ?? collection.configuration?.spann?.space;
    if (actual !== undefined && actual !== null && actual !== space) {
      const metric = metricsBySpace[actual as ChromaSpace] ?? actual;
      throw new InvalidArgumentError({
        argument: 'metric',
        value: this.metric,
        message: `the Chroma collection '${this.collectionName}' exists with space '${actual}' (metric '${metric}'); use that metric or another collection`,
      });
    }
    if (this.#serverBatchSize === undefined) {
      this.#serverBatchSize = await this.#request('open collection', undefined, () =>
        client.getMaxBatchSize(),
      );
      this.#capabilities = this.#describeCapabilities();
    }
    const peek = await this.#request('open collection', undefined, () =>
      collection.get({ limit: 1, include: ['embeddings'] }),
    );
    const stored = peek.embeddings?.[0];
    if (Array.isArray(stored) && stored.length > 0) {
      if (this.#dimension !== undefined && stored.length !== this.#dimension) {
        throw new InvalidArgumentError({
          argument: 'dimension',
          value: this.#dimension,
          message: `the Chroma collection '${this.collectionName}' holds vectors of ${stored.length} dimensions`,
        });
      }
      this.#dimension = stored.length;
    }
    return collection;
  }

  /** Checks every chunk's metadata and vector; one ChunkValidationError lists every problem. */
  #prepare(
    chunks: Chunk[],
    vectors: ReadonlyArray<unknown>,
    dimension: number | undefined,
  ): PreparedRecord[] {
    const problems: ChunkProblem[] = [];
    const records: PreparedRecord[] = [];
    chunks.forEach((chunk, index) => {
      const encoded = toChromaMetadata(chunk, this.docIdKey);
      if ('problem' in encoded) problems.push({ index, id: chunk.id, reason: encoded.problem });
      const vector = vectors[index];
      const problem = vectorProblem(vector, dimension);
      if (problem !== undefined) problems.push({ index, id: chunk.id, reason: problem });
      if (problems.length === 0 && 'metadata' in encoded) {
        records.push({
          id: chunk.id,
          embedding: toNumberArray(vector as ArrayLike<number>),
          document: chunk.text,
          metadata: encoded.metadata,
        });
      }
    });
    if (problems.length > 0) throw new ChunkValidationError({ problems });
    return records;
  }

  /**
   * Writes one batch. Chroma's upsert merges metadata into a stored record's, so a replaced
   * record whose new metadata lacks one of its old keys is deleted first.
   */
  async #writeBatch(collection: Collection, batch: PreparedRecord[], signal: AbortSignal | undefined) {
    const ids = batch.map((record) => record.id);
    const existing = await this.#request('add', signal, () =>
      collection.get({ ids, include: ['metadatas'] }),
    );
    if (existing.ids.length > 0) {
      const incoming = new Map(batch.map((record) => [record.id, record.metadata]));
      const stale = existing.ids.filter((id, index) => {
        const old = existing.metadatas[index];
        if (old === null || old === undefined) return false;
        const replacement = incoming.get(id) ?? {};
        return Object.keys(old).some((key) => !Object.hasOwn(replacement, key));
      });
      if (stale.length > 0) await this.#request('add', signal, () => collection.delete({ ids: stale }));
    }
    await this.#request('add', signal, () =>
      collection.upsert({
        ids,
        embeddings: batch.map((record) => record.embedding),
        documents: batch.map((record) => record.document),
        // Chroma takes null for "no metadata" (it refuses an empty object).
        metadatas: batch.map((record) => record.metadata) as ChromaMetadata[],
      }),
    );
  }

  #checkQuery(vector: unknown, query: string | Float32Array | readonly number[]): void {
    const fromText = typeof query === 'string';
    const problem =
      vectorProblem(vector, this.#dimension) ??
      (this.metric === 'cosine' && isZeroVector(vector as ArrayLike<number>)
        ? 'a zero vector has no direction, so it has no cosine similarity'
        : undefined);
    if (problem !== undefined) {
      throw new InvalidArgumentError({
        argument: fromText ? 'embedder' : 'query',
        value: fromText ? query : undefined,
        message: fromText ? `the query embedding is unusable: ${problem}` : problem,
      });
    }
  }
}

/** `new ChromaStore(settings)`. */
export function createChromaStore(settings?: ChromaStoreSettings): ChromaStore {
  return new ChromaStore(settings);
}

function parseServerUrl(url: string): { host: string; port: number; ssl: boolean } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new InvalidArgumentError({ argument: 'url', value: url, message: 'not a URL', cause: error });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InvalidArgumentError({
      argument: 'url',
      value: url,
      message: 'expected an http:// or https:// URL',
    });
  }
  if (parsed.pathname !== '/' && parsed.pathname !== '') {
    throw new InvalidArgumentError({
      argument: 'url',
      value: url,
      message: 'the chromadb client takes a host and port only, not a path',
    });
  }
  const ssl = parsed.protocol === 'https:';
  const port = parsed.port === '' ? (ssl ? 443 : 80) : Number(parsed.port);
  // URL keeps IPv6 hosts in brackets, as the client's base URL needs them.
  return { host: parsed.hostname, port, ssl };
}

function checkSearchOptions(options: ChromaSearchOptions): ChromaSearchOptions {
  checkVectorSearchOptions(options);
  const { where } = options;
  if (where !== undefined && (where === null || typeof where !== 'object' || Array.isArray(where))) {
    throw new InvalidArgumentError({
      argument: 'where',
      value: where,
      message: 'expected a Chroma where object',
    });
  }
  return options;
}
