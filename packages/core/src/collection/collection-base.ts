import { mapWithConcurrency } from '../backend/pool.js';
import { IndexFormatError, InvalidArgumentError } from '../errors/index.js';
import { parseFilter } from '../filter/index.js';
import type { Chunk, SearchResult } from '../model/index.js';
import type { BaseRetriever, BatchRetrieveOptions } from '../retriever/index.js';
import { embedChunksForStore } from '../vector/store-helpers.js';
import type { VectorDatabase } from '../vector/vector-database.js';
import { toVectorStore } from '../vector/vector-store.js';
import type { CollectionRetrieveOptions, CollectionSettings, RetrievalMode } from './collection.js';
import { RerankedRetriever } from './reranked-retriever.js';
import { type CollectionStorage, createMemoryStorage, type StorageLock } from './storage.js';

/** The store a collection's state was made over: reopening over another is refused. */
export interface SavedStore {
  name: string;
  metric: string;
  dimension: number | undefined;
}

/**
 * What both collections (keyword side in the process, or in the database) do alike: the store and
 * the storage, the storage's one-writer lock held from `open` to `close`, writes run one at a time,
 * a snapshot on demand and at close, and retrieval by mode. A subclass says how its state is
 * restored and snapshotted, whether closing should snapshot, and what it does around a retrieval.
 */
export abstract class CollectionBase {
  readonly store: VectorDatabase;
  readonly storage: CollectionStorage;
  protected readonly settings: CollectionSettings;
  /** Log records after which the state is snapshotted and the log emptied. */
  protected readonly checkpointEvery: number;
  #lock: StorageLock | undefined;
  #writes: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(settings: CollectionSettings) {
    this.store = toVectorStore(settings.store, 'store');
    this.storage = settings.storage ?? createMemoryStorage();
    this.settings = settings;
    this.checkpointEvery = settings.checkpointEvery ?? 1000;
    if (!(Number.isSafeInteger(this.checkpointEvery) && this.checkpointEvery > 0)) {
      throw new InvalidArgumentError({
        argument: 'checkpointEvery',
        value: settings.checkpointEvery,
        message: 'expected a positive integer',
      });
    }
  }

  /** Takes the storage's lock and restores the state (released again when restoring fails). */
  async open(signal?: AbortSignal): Promise<void> {
    this.#lock = await this.storage.lock();
    try {
      await this.restore(signal);
    } catch (error) {
      await this.#lock.release().catch(() => undefined);
      this.#lock = undefined;
      throw error;
    }
  }

  /** Snapshots the state now (also done every `checkpointEvery` log records and on close). */
  checkpoint(): Promise<void> {
    return this.serialised(() => this.writeSnapshot());
  }

  /** Waits for writes in flight, snapshots when something changed, releases the storage and the store. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#writes.catch(() => undefined);
    if (this.#lock !== undefined && this.snapshotsOnClose()) await this.writeSnapshot();
    this.#closed = true;
    await this.#lock?.release();
    this.#lock = undefined;
    await this.store.close();
  }

  /** Keyword, vector or hybrid retrieval (default hybrid), with the filter language and the reranker. */
  async retrieve(query: string, options: CollectionRetrieveOptions = {}): Promise<SearchResult> {
    const { mode = 'hybrid', ...rest } = options;
    const retriever = this.retrievers()[mode];
    if (retriever === undefined) {
      throw new InvalidArgumentError({
        argument: 'mode',
        value: mode,
        message: "expected 'keyword', 'vector' or 'hybrid'",
      });
    }
    // A bad filter is the caller's mistake, a FilterError before any side runs.
    if (rest.filter !== undefined) parseFilter(rest.filter);
    return this.retrieveWith(retriever, mode, query, rest);
  }

  /** Many queries with bounded concurrency, results in input order. */
  async batchRetrieve(
    queries: readonly string[],
    options: BatchRetrieveOptions & { mode?: RetrievalMode } = {},
  ): Promise<SearchResult[]> {
    const { concurrency = 4, mode, ...rest } = options;
    if (!Array.isArray(queries) || !queries.every((query) => typeof query === 'string')) {
      throw new InvalidArgumentError({
        argument: 'queries',
        value: queries,
        message: 'expected an array of strings',
      });
    }
    if (rest.filter !== undefined) parseFilter(rest.filter);
    return mapWithConcurrency(queries, concurrency, (query) =>
      this.retrieve(query, { ...rest, ...(mode ? { mode } : {}) }),
    );
  }

  /** Runs `work` after every write before it; refused once the collection is closed (or before it opened). */
  protected serialised<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed || this.#lock === undefined) {
      return Promise.reject(
        new InvalidArgumentError({
          argument: 'collection',
          message: 'the collection is closed (or not open)',
        }),
      );
    }
    const run = this.#writes.catch(() => undefined).then(work);
    this.#writes = run;
    return run;
  }

  /**
   * The retriever of each mode: the keyword and vector ones reranked here when a reranker is set
   * (the hybrid one reranks its fused result itself, once).
   */
  protected modes(keyword: BaseRetriever, vector: BaseRetriever, hybrid: BaseRetriever) {
    const { reranker } = this.settings;
    return {
      keyword: reranker ? new RerankedRetriever(keyword, reranker) : keyword,
      vector: reranker ? new RerankedRetriever(vector, reranker) : vector,
      hybrid,
    };
  }

  /** The chunks' vectors from the collection's embedder, else the store's (typed errors: none, or a wrong count). */
  protected async embed(
    chunks: readonly Chunk[],
    signal: AbortSignal | undefined,
  ): Promise<Array<Float32Array | readonly number[]>> {
    const embedder = this.settings.embedder ?? this.store.embedder;
    const vectors = await embedChunksForStore(
      embedder,
      chunks,
      signal,
      'neither the collection nor its store has',
    );
    return vectors as Array<Float32Array | readonly number[]>;
  }

  /** The store as the state records it. */
  protected savedStore(): SavedStore {
    return { name: this.store.name, metric: this.store.capabilities.metric, dimension: this.store.dimension };
  }

  /** The snapshot's 'state' blob as JSON; missing or unreadable, an IndexFormatError. */
  protected readState(snapshot: ReadonlyMap<string, Uint8Array>): unknown {
    const location = this.storage.location;
    const bytes = snapshot.get('state');
    if (bytes === undefined)
      throw new IndexFormatError({ message: "The collection snapshot has no 'state'", path: location });
    try {
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch (error) {
      throw new IndexFormatError({
        message: 'The collection state is not valid JSON',
        path: location,
        cause: error,
      });
    }
  }

  /**
   * Refuses to reopen a state over another backend, metric or dimension (the embedder's, else the
   * store's) than it was made with: an InvalidArgumentError naming both values.
   */
  protected checkSavedStore(saved: SavedStore): void {
    const given = this.savedStore();
    given.dimension = this.settings.embedder?.dimension ?? given.dimension;
    if (saved.name !== given.name) throw this.mismatch('backend', saved.name, given.name);
    if (saved.metric !== given.metric) throw this.mismatch('metric', saved.metric, given.metric);
    if (saved.dimension !== undefined && given.dimension !== undefined && saved.dimension !== given.dimension)
      throw this.mismatch('dimension', saved.dimension, given.dimension);
  }

  /** The error for a setting other than the one the collection was created with. */
  protected mismatch(what: string, saved: unknown, given: unknown): InvalidArgumentError {
    return new InvalidArgumentError({
      argument: what,
      value: given,
      message: `the collection at ${this.storage.location} was created with ${what} ${JSON.stringify(saved)}, it is opened with ${JSON.stringify(given)}`,
    });
  }

  /** Restores the state from the storage (and the database), under the lock. */
  protected abstract restore(signal: AbortSignal | undefined): Promise<void>;
  /** Commits a snapshot of the state and empties the log. */
  protected abstract writeSnapshot(): Promise<void>;
  /** Whether `close` commits a snapshot: something changed since the last, and nothing is unsettled. */
  protected abstract snapshotsOnClose(): boolean;
  /** The current retriever of each mode. */
  protected abstract retrievers(): Record<RetrievalMode, BaseRetriever>;
  /** One retrieval of a checked mode and filter, with what the collection adds around it. */
  protected abstract retrieveWith(
    retriever: BaseRetriever,
    mode: RetrievalMode,
    query: string,
    options: Omit<CollectionRetrieveOptions, 'mode'>,
  ): Promise<SearchResult>;
}
