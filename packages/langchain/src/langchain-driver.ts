import type { DocumentInterface } from '@langchain/core/documents';
import type { VectorStoreInterface } from '@langchain/core/vectorstores';
import { type Chunk, InvalidArgumentError, throwIfAborted } from '@zerda/core';
import {
  abortable,
  type DriverCallOptions,
  type DriverCapabilities,
  type DriverMatch,
  type DriverQueryOptions,
  type VectorDriver,
  type VectorRecord,
  withTimeout,
} from '@zerda/core/backend';
import { chunkToStoredDocument, storedDocumentToChunk } from './documents.js';
import { langChainConvention } from './langchain-filter.js';
import {
  declaredScoreKind,
  distanceConversions,
  readScoreOrder,
  type ScoreKind,
} from './langchain-scores.js';
import {
  type LangChainStoreSettings,
  resolveLangChainSettings,
  type UpsertMode,
} from './langchain-settings.js';

/**
 * Contract v2 over any LangChain `VectorStore`: writes through `addVectors` (after `delete` where
 * the store can delete), queries through `similaritySearchVectorWithScore` with the store's own
 * filter, reads and counts through the store's memory where it has one (MemoryVectorStore,
 * FakeVectorStore), else through a probe search of at most `maxFetch` results.
 */
export class LangChainDriver<Filter = unknown> implements VectorDriver<Filter> {
  readonly specificationVersion = 'v2' as const;
  readonly name: string;
  readonly filterConvention;
  declare delete?: (ids: readonly string[], options: DriverCallOptions) => Promise<number>;
  readonly #store: VectorStoreInterface;
  readonly #settings: LangChainStoreSettings;
  readonly #upsert: UpsertMode;
  readonly #keys;
  #kind: ScoreKind | undefined;
  #dimension: number | undefined;

  constructor(store: VectorStoreInterface, settings: LangChainStoreSettings) {
    const { storeType, deletion, upsert } = resolveLangChainSettings(store, settings);
    this.#upsert = upsert;
    this.#store = store;
    this.#settings = settings;
    this.#keys = { id: '_zerda_id', docId: '_zerda_doc_id', ...settings.metadataKeys };
    this.name = settings.name ?? `langchain:${storeType}`;
    this.filterConvention = langChainConvention<Filter>(settings.filterConvention, this.#keys);
    this.#kind = declaredScoreKind(settings.scoreConversion, storeType);
    this.#dimension = settings.dimension;
    if (deletion) this.delete = (ids, options) => this.#delete(ids, options);
  }

  get capabilities(): DriverCapabilities {
    const { metric = 'cosine', persistent = false, maxBatchSize, scoreConversion } = this.#settings;
    // Until the direction is known, scores are taken as similarities (with a warning).
    const learnt = this.#kind === 'distance' ? distanceConversions[metric] : 'similarity';
    return {
      metric,
      scoreConversion: scoreConversion ?? learnt,
      persistent,
      ...(maxBatchSize && { maxBatchSize }),
    };
  }

  /** Whether scores are similarities or distances, once declared, known for the store's type, or learnt. */
  get scoreKind(): ScoreKind | undefined {
    return this.#kind;
  }

  get dimension(): number | undefined {
    return this.#dimension;
  }

  async upsert(records: readonly VectorRecord[], options: DriverCallOptions): Promise<void> {
    const ids = records.map((record) => record.id);
    if (this.#upsert === 'delete-first') await this.#call(options, 'add', () => this.#store.delete({ ids }));
    const documents = records.map((record) => chunkToStoredDocument(record, this.#keys));
    const vectors = records.map((record) => Array.from(record.vector));
    await this.#call(options, 'add', () => this.#store.addVectors(vectors, documents, { ids }));
    this.#dimension ??= vectors[0]?.length;
    const twice = 'cannot delete, so ids already stored are stored twice (searches return one copy)';
    if (this.#upsert === 'append') this.#warn(options, 'unsupported', twice);
  }

  async query(vector: Float32Array, options: DriverQueryOptions<Filter>): Promise<readonly DriverMatch[]> {
    this.#dimension ??= vector.length;
    const { topK, filter } = options;
    const pairs = await this.#call(options, 'search', () =>
      this.#store.similaritySearchVectorWithScore(Array.from(vector), topK, filter as object | undefined),
    );
    const scores = pairs.map(([, score]) => score);
    this.#learn(scores, options);
    // A score the store could not compute (NaN: the cosine of a zero vector) reports as 0.
    const zero = this.capabilities.scoreConversion === 'one-minus-distance' ? 1 : 0;
    const matches = new Map<string, DriverMatch>();
    for (const [document, score] of pairs) {
      const chunk = storedDocumentToChunk(document, this.#keys);
      // An id stored twice ('append') comes back once: its best copy.
      if (matches.has(chunk.id)) continue;
      matches.set(chunk.id, { id: chunk.id, score: Number.isNaN(score) ? zero : score, chunk });
    }
    return [...matches.values()];
  }

  async get(ids: readonly string[], options: DriverCallOptions): Promise<readonly Chunk[]> {
    const stored = await this.#stored(options, 'get');
    return ids.flatMap((id) => stored.get(id) ?? []);
  }

  async count(options: DriverCallOptions): Promise<number> {
    const { count } = this.#settings;
    if (count) return this.#call(options, 'count', () => count({ signal: options.signal }));
    return (await this.#stored(options, 'count')).size;
  }

  /** Deletes through `delete({ ids })`; how many existed is the count before minus the count after. */
  async #delete(ids: readonly string[], options: DriverCallOptions): Promise<number> {
    const before = await this.count(options);
    await this.#call(options, 'delete', () => this.#store.delete({ ids: [...ids] }));
    return Math.max(0, before - (await this.count(options)));
  }

  /** Every stored chunk by id (the latest copy of an id stored twice): the store's memory, else a probe. */
  async #stored(options: DriverCallOptions, operation: string): Promise<Map<string, Chunk>> {
    type Entry = { content?: unknown; metadata?: Record<string, unknown>; id?: string };
    const memory = (this.#store as { memoryVectors?: Entry[] }).memoryVectors;
    const dimension = this.#dimension;
    const k = this.#settings.maxFetch ?? 10_000;
    let documents: DocumentInterface[];
    if (Array.isArray(memory)) {
      documents = memory.map(({ content, metadata = {}, id }) => ({
        pageContent: String(content ?? ''),
        metadata,
        id,
      }));
    } else if (dimension !== undefined || this.#store.embeddings) {
      const probe = dimension && [1, ...new Array<number>(dimension - 1).fill(0)];
      const pairs = await this.#call(options, operation, () =>
        probe
          ? this.#store.similaritySearchVectorWithScore(probe, k)
          : this.#store.similaritySearchWithScore('', k),
      );
      documents = pairs.map(([document]) => document);
    } else {
      const message = `${this.name} cannot be read before its dimension is known: give the \`dimension\` or \`count\` setting`;
      throw new InvalidArgumentError({ argument: operation, message });
    }
    const chunks = documents.map((document) => storedDocumentToChunk(document, this.#keys));
    return new Map(chunks.map((chunk) => [chunk.id, chunk]));
  }

  /** Learns the score direction from the order of a result's raw scores, or warns where they contradict it. */
  #learn(scores: readonly number[], options: DriverCallOptions): void {
    const declared = this.#settings.scoreConversion !== undefined;
    const { kind, warning } = readScoreOrder(scores, this.#kind, declared);
    this.#kind = kind;
    if (warning) this.#warn(options, 'compatibility', warning);
  }

  #warn({ warn }: DriverCallOptions, type: 'unsupported' | 'compatibility', message: string): void {
    warn?.({ type, source: this.name, message: `${this.name} ${message}` });
  }

  /**
   * One store call, bounded by `timeoutMs` and the signal. Its errors go to core as they are: core
   * makes them BackendErrors naming the operation, with the error as `cause`. (LangChain stores
   * retry on their own, and there is nothing more to say about a store known only by its interface.)
   */
  async #call<T>({ signal }: DriverCallOptions, operation: string, run: () => Promise<T>): Promise<T> {
    const { timeoutMs } = this.#settings;
    throwIfAborted(signal);
    if (timeoutMs === undefined) return abortable(Promise.resolve().then(run), signal);
    return withTimeout(run, { timeoutMs, signal, backend: this.name, operation });
  }
}
