import { BackendError, type Chunk, type DistanceMetric, InvalidArgumentError } from '@zerda/core';
import {
  abortable,
  type DriverCallOptions,
  type DriverCapabilities,
  type DriverListOptions,
  type DriverListPage,
  type DriverMatch,
  type DriverQueryOptions,
  type RecordProblem,
  type ScoreConversion,
  type VectorDriver,
  type VectorRecord,
} from '@zerda/core/backend';
import type { Metadata as ChromaMetadata, Collection, Where } from 'chromadb';
import { type ChromaWhere, createChromaFilterConvention } from './chroma-filter.js';
import { fromChromaRecords, toChromaMetadata, toChromaMetadatas } from './chroma-metadata.js';
import { chromaRequest } from './chroma-requests.js';
import type { ChromaDriverSettings } from './chroma-settings.js';

/** Chroma's name for each metric's space. */
const spaces = { cosine: 'cosine', l2: 'l2', dot: 'ip' } as const satisfies Record<DistanceMetric, string>;

/** What Chroma returns per space: the cosine distance `1 - cos`, the squared Euclidean distance, `1 - q·x`. */
const scoreConversions: Record<DistanceMetric, ScoreConversion> = {
  cosine: 'one-minus-distance',
  l2: 'squared-euclidean-distance',
  dot: 'one-minus-distance',
};

/**
 * The Chroma driver (contract v2). Records go to one collection whole (the vector, the text as
 * the document, the metadata with the document id under `docIdKey`), so queries return whole
 * chunks. Each request is retried while that may help (connection, server and rate-limit
 * errors) and bounded, retries included, by `timeoutMs`; failures are BackendErrors naming the
 * server. The collection is opened (or created) at the first call.
 */
export class ChromaDriver implements VectorDriver<ChromaWhere> {
  readonly specificationVersion = 'v2' as const;
  readonly name = 'chroma';
  readonly filterConvention;
  /** The vector dimension of the collection, once it has been opened and holds vectors. */
  dimension: number | undefined;
  #collection: Promise<Collection> | undefined;
  #serverBatchSize: number | undefined;

  constructor(readonly settings: ChromaDriverSettings) {
    this.filterConvention = createChromaFilterConvention({ docIdKey: settings.docIdKey });
  }

  /** `maxBatchSize`: the setting until the server has been asked, then the smaller of the two. */
  get capabilities(): DriverCapabilities {
    const { metric, maxBatchSize = Number.POSITIVE_INFINITY } = this.settings;
    const limit = Math.min(maxBatchSize, this.#serverBatchSize ?? Number.POSITIVE_INFINITY);
    return {
      metric,
      scoreConversion: scoreConversions[metric],
      persistent: true,
      ...(Number.isFinite(limit) ? { maxBatchSize: limit } : {}),
    };
  }

  async open({ signal }: DriverCallOptions): Promise<void> {
    await this.#ready(signal);
  }

  checkRecords(records: readonly VectorRecord[]): RecordProblem[] {
    return records.flatMap((record, index) => {
      const encoded = toChromaMetadata(record, this.settings.docIdKey);
      return 'problem' in encoded ? [{ index, reason: encoded.problem }] : [];
    });
  }

  /**
   * Chroma's upsert merges metadata into a stored record's, so a replaced record whose new
   * metadata lacks one of its old keys is deleted first.
   */
  async upsert(records: readonly VectorRecord[], { signal }: DriverCallOptions): Promise<void> {
    const ids = records.map((record) => record.id);
    // Chroma takes null for "no metadata" (it refuses an empty object).
    const metadatas = toChromaMetadatas(records, this.settings.docIdKey);
    const existing = await this.#call('add', signal, (collection) =>
      collection.get({ ids, include: ['metadatas'] }),
    );
    const incoming = new Map(ids.map((id, index) => [id, metadatas[index] ?? {}]));
    const stale = existing.ids.filter((id, index) =>
      Object.keys(existing.metadatas[index] ?? {}).some((key) => !Object.hasOwn(incoming.get(id) ?? {}, key)),
    );
    if (stale.length > 0) await this.#call('add', signal, (collection) => collection.delete({ ids: stale }));
    await this.#call('add', signal, (collection) =>
      collection.upsert({
        ids,
        embeddings: records.map((record) => Array.from(record.vector)),
        documents: records.map((record) => record.text),
        metadatas: metadatas as ChromaMetadata[],
      }),
    );
    this.dimension ??= records[0]?.vector.length;
  }

  async query(
    vector: Float32Array,
    { topK, filter, signal }: DriverQueryOptions<ChromaWhere>,
  ): Promise<DriverMatch[]> {
    const result = await this.#call('search', signal, (collection) =>
      collection.query({
        queryEmbeddings: [Array.from(vector)],
        nResults: topK,
        // Chroma refuses an empty where; it means no filter.
        ...(filter !== undefined && Object.keys(filter).length > 0 ? { where: filter as Where } : {}),
        include: ['documents', 'metadatas', 'distances'],
      }),
    );
    const distances = result.distances[0] ?? [];
    const chunks = this.#toChunks(result.ids[0] ?? [], result.documents[0] ?? [], result.metadatas[0] ?? []);
    return chunks.map((chunk, index) => ({ id: chunk.id, score: distances[index] ?? Number.NaN, chunk }));
  }

  async get(ids: readonly string[], { signal }: DriverCallOptions): Promise<Chunk[]> {
    const found = await this.#call('get', signal, (collection) =>
      collection.get({ ids: [...ids], include: ['documents', 'metadatas'] }),
    );
    return this.#toChunks(found.ids, found.documents, found.metadatas);
  }

  count({ signal }: DriverCallOptions): Promise<number> {
    return this.#call('count', signal, (collection) => collection.count());
  }

  async delete(ids: readonly string[], { signal }: DriverCallOptions): Promise<number> {
    // Chroma's delete does not say how many records it removed: ask first.
    const found = await this.#call('delete', signal, (collection) =>
      collection.get({ ids: [...ids], include: [] }),
    );
    if (found.ids.length === 0) return 0;
    await this.#call('delete', signal, (collection) => collection.delete({ ids: found.ids }));
    return found.ids.length;
  }

  /** Pages through the collection by offset (the cursor), with the stored vectors when asked. */
  async list({ cursor, limit, includeVectors, signal }: DriverListOptions): Promise<DriverListPage> {
    const offset = cursor === undefined ? 0 : Number(cursor);
    const page = await this.#call('list', signal, (collection) =>
      collection.get({
        limit,
        offset,
        include: ['documents', 'metadatas', ...(includeVectors ? (['embeddings'] as const) : [])],
      }),
    );
    return {
      chunks: this.#toChunks(page.ids, page.documents, page.metadatas),
      vectors: includeVectors ? page.embeddings.map((vector) => Float32Array.from(vector)) : undefined,
      nextCursor: page.ids.length < limit ? undefined : String(offset + page.ids.length),
    };
  }

  /** Deletes the whole collection (a missing one is fine); the next call creates it again. */
  async deleteCollection({ signal }: DriverCallOptions = {}): Promise<void> {
    try {
      const { client, collectionName } = this.settings;
      await this.#request('deleteCollection', signal, () =>
        client().deleteCollection({ name: collectionName }),
      );
    } catch (error) {
      const cause = BackendError.isInstance(error) ? (error.cause as Error | undefined) : undefined;
      if (cause?.name !== 'ChromaNotFoundError') throw error;
    } finally {
      this.#collection = undefined;
      this.dimension = undefined;
    }
  }

  #toChunks(ids: string[], documents: (string | null)[], metadatas: (ChromaMetadata | null)[]): Chunk[] {
    return fromChromaRecords(ids, documents, metadatas, this.settings.docIdKey);
  }

  /** The collection, opened (or created) once; a failed attempt is retried by the next call. */
  #ready(signal: AbortSignal | undefined): Promise<Collection> {
    this.#collection ??= this.#open().catch((error: unknown) => {
      this.#collection = undefined;
      throw error;
    });
    return abortable(this.#collection, signal);
  }

  async #open(): Promise<Collection> {
    const { client, collectionName, metric } = this.settings;
    const space = spaces[metric];
    const collection = await this.#request('open collection', undefined, () =>
      client().getOrCreateCollection({
        name: collectionName,
        embeddingFunction: null,
        configuration: { hnsw: { space } },
      }),
    );
    const actual = collection.configuration?.hnsw?.space ?? collection.configuration?.spann?.space;
    if (actual !== undefined && actual !== null && actual !== space) {
      const existing = Object.entries(spaces).find(([, value]) => value === actual)?.[0] ?? actual;
      throw new InvalidArgumentError({
        argument: 'metric',
        value: metric,
        message: `the Chroma collection '${collectionName}' exists with space '${actual}' (metric '${existing}'); use that metric or another collection`,
      });
    }
    this.#serverBatchSize ??= await this.#request('open collection', undefined, () =>
      client().getMaxBatchSize(),
    );
    const peek = await this.#request('open collection', undefined, () =>
      collection.get({ limit: 1, include: ['embeddings'] }),
    );
    const stored = peek.embeddings?.[0];
    if (Array.isArray(stored) && stored.length > 0) this.dimension = stored.length;
    return collection;
  }

  /** One request on the collection. */
  async #call<T>(
    operation: string,
    signal: AbortSignal | undefined,
    request: (collection: Collection) => Promise<T>,
  ): Promise<T> {
    const collection = await this.#ready(signal);
    return this.#request(operation, signal, () => request(collection));
  }

  #request<T>(operation: string, signal: AbortSignal | undefined, request: () => Promise<T>): Promise<T> {
    return chromaRequest(this.settings, operation, signal, request);
  }
}
