import { IndexFormatError, InvalidArgumentError, throwIfAborted } from '../errors/index.js';
import { compileFilter, type FilterInput, parseFilter } from '../filter/index.js';
import { BM25SparseEncoder } from '../keyword/sparse-encoder.js';
import { DatabaseHybridRetriever, SparseKeywordRetriever } from '../keyword/sparse-retrievers.js';
import { type Chunk, normalizeChunks, type SearchResult, type Warning } from '../model/index.js';
import { type BaseRetriever, HybridRetriever } from '../retriever/index.js';
import type { SparseVector } from '../vector/driver.js';
import { VectorRetriever } from '../vector/vector-retriever.js';
import type {
  CollectionAddOptions,
  CollectionOpenReport,
  CollectionRetrieveOptions,
  CollectionSettings,
  RetrievalMode,
} from './collection.js';
import { CollectionBase, type SavedStore } from './collection-base.js';

/** What a collection with its keyword side in the database reports when it opens. */
export interface DatabaseCollectionOpenReport extends CollectionOpenReport {
  /** Chunks read back from the database to recount the keyword statistics (0 when the local ones were current). */
  rebuilt: number;
}

/** How far the statistics moved since the stored sparse vectors were encoded (see `reencode`). */
export interface KeywordDrift {
  /** The average chunk length now, in analysed terms. */
  averageLength: number;
  /** The smallest and largest average length any stored chunk was encoded with since the last `reencode`. */
  encodedWith: [number, number];
  /** The largest relative difference between those and now (0: exact BM25). */
  drift: number;
}

export const DATABASE_STATE_FORMAT = 'zerda.collection.database';
const STATE_VERSION = 1;

interface DatabaseCollectionState {
  format: typeof DATABASE_STATE_FORMAT;
  version: typeof STATE_VERSION;
  store: SavedStore;
  analyzer: string;
  /** Range of average lengths the stored sparse vectors were encoded with since the last re-encode. */
  encodedWith: [number, number] | null;
}

/** One log record: an intent before a write, then the statistics' change once its outcome is known. */
type DatabaseLogRecord =
  | { t: 'intent'; seq: number; ids: string[] }
  | { t: 'stats'; seq: number; added: string[]; removed: string[]; encodedWith?: number };

/** Relative drift above which results say the keyword scores have moved from exact BM25. */
const DRIFT_WARNING = 0.1;

/**
 * A collection whose keyword side lives in the database (`openCollection({ keyword: 'database' })`):
 * each chunk is written once, its dense vector and its BM25 sparse vector in one record, and
 * keyword and hybrid retrieval run as database queries (`searchSparse`, and `searchHybrid` where
 * the database fuses), with the filter pushed down as for dense search. Nothing per chunk is kept
 * in the process, so every replica sees every write and the corpus can outgrow one machine.
 *
 * Local state: only the BM25 statistics (document count, per-term document frequencies, total
 * length), which encode queries and new chunks. They are derived data: a snapshot plus a log of
 * changes in the storage, and recounted from the database (listing its records) when they cannot
 * be trusted: no local state, a write whose outcome was lost in a crash, or a database that another
 * writer changed. A chunk's sparse vector is encoded with the average length of its time; as the
 * corpus grows the scores drift from exact BM25 (`drift`), and `reencode` restores exactness
 * without re-embedding.
 */
export class DatabaseCollection extends CollectionBase {
  report: DatabaseCollectionOpenReport = { restored: 0, reconciled: 0, rebuilt: 0, warnings: [] };

  #encoder: BM25SparseEncoder;
  #retrievers: Record<RetrievalMode, BaseRetriever>;
  #seq = 0;
  #logSize = 0;
  #encodedWith: [number, number] | null = null;
  /** A write failed with an outcome nobody could learn: statistics are recounted at the next open. */
  #unsettled = false;

  constructor(settings: CollectionSettings) {
    super(settings);
    if (typeof this.store.searchSparse !== 'function') {
      throw new InvalidArgumentError({
        argument: 'keyword',
        value: 'database',
        message: `the '${this.store.name}' store keeps no sparse vectors: create it with sparse vectors enabled (Postgres, Pinecone), or keep the keyword side in-process (keyword: 'memory')`,
      });
    }
    const { analyzer, k1, b } = settings;
    this.#encoder = new BM25SparseEncoder({
      ...(analyzer ? { analyzer } : {}),
      ...(k1 !== undefined ? { k1 } : {}),
      ...(b !== undefined ? { b } : {}),
    });
    this.#retrievers = this.#makeRetrievers(this.#encoder);
  }

  /** The BM25 statistics: encode queries and new chunks (replaced when they are counted again). */
  get encoder(): BM25SparseEncoder {
    return this.#encoder;
  }

  /** Chunks counted in the keyword statistics. */
  get size(): number {
    return this.encoder.stats.documentCount;
  }

  /** How far the stored sparse vectors' average length is from today's (see the class comment). */
  get drift(): KeywordDrift {
    const { averageLength } = this.encoder.stats;
    const encodedWith = this.#encodedWith ?? [averageLength, averageLength];
    const drift =
      averageLength === 0
        ? 0
        : Math.max(...encodedWith.map((length) => Math.abs(length - averageLength) / averageLength));
    return { averageLength, encodedWith: [...encodedWith], drift };
  }

  /**
   * Adds chunks (replacing those with the same ids): each written with its dense and its sparse
   * vector in one record, so both sides hold it or neither does. The whole batch is checked, the
   * sparse vectors against the database's limits, before anything is written.
   */
  add(input: readonly unknown[], options: CollectionAddOptions = {}): Promise<{ ids: string[] }> {
    return this.serialised(async () => {
      const { signal, onProgress } = options;
      throwIfAborted(signal);
      const chunks = normalizeChunks(input);
      if (chunks.length === 0) return { ids: [] };
      const vectors = options.embeddings ?? (await this.embed(chunks, signal));
      const ids = chunks.map((chunk) => chunk.id);
      // Replaced chunks leave the statistics as the new ones enter them.
      const before = await this.store.get(ids, signal ? { signal } : {});
      const seq = ++this.#seq;
      await this.#append({ t: 'intent', seq, ids });
      const removed = before.map((chunk) => chunk.text);
      const added = chunks.map((chunk) => chunk.text);
      await this.#uncount(removed, signal);
      // Each chunk is encoded with statistics that include its whole batch.
      const sparseVectors: SparseVector[] = this.encoder.addAndEncode(added);
      const encodedWith = this.encoder.stats.averageLength;
      try {
        await this.store.add(chunks, {
          embeddings: vectors,
          sparseVectors,
          ...(signal ? { signal } : {}),
          ...(onProgress ? { onProgress } : {}),
        });
      } catch (error) {
        await this.#settle(seq, ids, added, removed);
        throw error;
      }
      await this.#append({ t: 'stats', seq, added, removed, encodedWith });
      this.#noteEncoded(encodedWith);
      await this.#maybeCheckpoint();
      return { ids };
    });
  }

  /** Removes chunks by id; returns how many existed. */
  delete(ids: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number> {
    return this.serialised(async () => {
      const remove = this.store.delete;
      if (remove === undefined) {
        throw new InvalidArgumentError({
          argument: 'ids',
          message: `the '${this.store.name}' backend cannot delete records`,
        });
      }
      const existing = await this.store.get(ids, options);
      if (existing.length === 0) return 0;
      const gone = existing.map((chunk) => chunk.id);
      const removed = existing.map((chunk) => chunk.text);
      const seq = ++this.#seq;
      await this.#append({ t: 'intent', seq, ids: gone });
      await this.#uncount(removed, options.signal);
      try {
        await remove.call(this.store, gone, options);
      } catch (error) {
        await this.#settle(seq, gone, [], removed);
        throw error;
      }
      await this.#append({ t: 'stats', seq, added: [], removed });
      await this.#maybeCheckpoint();
      return gone.length;
    });
  }

  /** Removes every chunk that matches a filter (the database's records listed and matched here). */
  async deleteWhere(filter: FilterInput, options: { signal?: AbortSignal } = {}): Promise<number> {
    const matches = compileFilter(parseFilter(filter));
    const ids: string[] = [];
    for await (const page of this.#listing(options.signal)) {
      for (const chunk of page) if (matches(chunk)) ids.push(chunk.id);
    }
    return ids.length === 0 ? 0 : this.delete(ids, options);
  }

  /** The chunks among `ids`, as the database holds them, in the order asked. */
  get(ids: readonly string[]): Promise<Chunk[]> {
    return this.store.get(ids);
  }

  count(): Promise<number> {
    return this.store.count();
  }

  /** Every chunk the database holds, a page at a time. */
  list(options: { pageSize?: number } = {}): AsyncIterable<Chunk[]> {
    return this.#listing(undefined, options.pageSize);
  }

  /**
   * Retrieval runs in the database; a warning is added where the keyword scores are not exact
   * BM25 (drift, or an unsettled write).
   */
  protected async retrieveWith(
    retriever: BaseRetriever,
    mode: RetrievalMode,
    query: string,
    options: Omit<CollectionRetrieveOptions, 'mode'>,
  ): Promise<SearchResult> {
    const result = await retriever.retrieve(query, options);
    const warning = mode === 'vector' ? undefined : this.#keywordWarning();
    return warning === undefined ? result : { ...result, warnings: [...result.warnings, warning] };
  }

  protected retrievers(): Record<RetrievalMode, BaseRetriever> {
    return this.#retrievers;
  }

  /** Unchanged since its snapshot (nothing logged, nothing to upgrade): nothing to write. */
  protected snapshotsOnClose(): boolean {
    return !this.#unsettled && (this.#logSize > 0 || this.storage.outdated === true);
  }

  /**
   * Writes every chunk's sparse vector again with today's statistics, keeping its dense vector
   * (read back from the database; embedded again only where the database cannot return vectors,
   * with a warning): afterwards keyword scores are exact BM25 again. Also the way to move a
   * collection's keyword side into the database: open it with `keyword: 'database'` on a new
   * storage (the statistics are counted from the database), then `reencode()`.
   */
  reencode(
    options: { signal?: AbortSignal; onProgress?: (progress: { done: number; total: number }) => void } = {},
  ): Promise<{ reencoded: number; warnings: Warning[] }> {
    return this.serialised(async () => {
      const { signal, onProgress } = options;
      const listRecords = this.store.listRecords;
      if (listRecords === undefined) {
        throw new InvalidArgumentError({
          argument: 'reencode',
          message: `the '${this.store.name}' backend cannot list its records, so they cannot be re-encoded`,
        });
      }
      const total = await this.store.count(signal ? { signal } : {});
      const warnings: Warning[] = [];
      const averageLength = this.encoder.stats.averageLength;
      let done = 0;
      for await (const page of listRecords.call(this.store, {
        pageSize: 500,
        ...(signal ? { signal } : {}),
      })) {
        const sparseVectors = this.encoder.encodeDocuments(page.chunks.map((chunk) => chunk.text));
        let embeddings = page.vectors;
        if (embeddings === undefined) {
          embeddings = (await this.embed(page.chunks, signal)) as Float32Array[];
          if (warnings.length === 0) {
            warnings.push({
              type: 'compatibility',
              source: 'collection',
              message: `the '${this.store.name}' backend does not return stored vectors, so the re-encoded chunks were embedded again`,
            });
          }
        }
        await this.store.add(page.chunks, { embeddings, sparseVectors, ...(signal ? { signal } : {}) });
        done += page.chunks.length;
        onProgress?.({ done, total });
      }
      this.#encodedWith = [averageLength, averageLength];
      await this.writeSnapshot();
      return { reencoded: done, warnings };
    });
  }

  // --- writing -------------------------------------------------------------------------------

  async #append(record: DatabaseLogRecord): Promise<void> {
    await this.storage.appendLog(new TextEncoder().encode(JSON.stringify(record)));
    this.#logSize++;
  }

  /**
   * After a failed write the statistics assumed done: made to match what the database now holds
   * for `ids` (`added` counted, `removed` taken out, before the write). When the database cannot
   * say, the intent stays open and the statistics are recounted at the next open.
   */
  async #settle(seq: number, ids: readonly string[], added: string[], removed: string[]): Promise<void> {
    let now: Chunk[];
    try {
      now = await this.store.get(ids);
    } catch {
      this.#unsettled = true;
      return;
    }
    // The write's texts out, the database's present texts for those ids in (`removed` already went out).
    const present = now.map((chunk) => chunk.text);
    this.encoder.remove(added);
    this.encoder.add(present);
    await this.#append({ t: 'stats', seq, added: present, removed });
  }

  /**
   * Takes texts the database holds out of the statistics. Texts they never counted (another writer
   * added them since this collection last counted) mean the statistics are behind the database:
   * they are counted again from it first.
   */
  async #uncount(texts: string[], signal: AbortSignal | undefined): Promise<void> {
    try {
      this.encoder.remove(texts);
    } catch (error) {
      if (!InvalidArgumentError.isInstance(error)) throw error;
      await this.#recount(await this.store.count(signal ? { signal } : {}), signal);
      this.encoder.remove(texts);
    }
  }

  #noteEncoded(averageLength: number): void {
    const [low, high] = this.#encodedWith ?? [averageLength, averageLength];
    this.#encodedWith = [Math.min(low, averageLength), Math.max(high, averageLength)];
  }

  async #maybeCheckpoint(): Promise<void> {
    if (this.#logSize >= this.checkpointEvery && !this.#unsettled) await this.writeSnapshot();
  }

  protected async writeSnapshot(): Promise<void> {
    const state: DatabaseCollectionState = {
      format: DATABASE_STATE_FORMAT,
      version: STATE_VERSION,
      store: this.savedStore(),
      analyzer: this.encoder.analyzer.name,
      encodedWith: this.#encodedWith,
    };
    await this.storage.commitSnapshot(
      new Map([
        ['state', new TextEncoder().encode(JSON.stringify(state))],
        ['keyword-statistics', this.encoder.save()],
      ]),
    );
    this.#logSize = 0;
  }

  // --- opening -------------------------------------------------------------------------------

  protected async restore(signal: AbortSignal | undefined): Promise<void> {
    const stored = await this.store.count(signal ? { signal } : {});
    const snapshot = await this.storage.readSnapshot();
    const warnings: Warning[] = [];
    let trusted = snapshot !== undefined;
    if (snapshot !== undefined) this.#loadSnapshot(snapshot);
    const open = new Set<number>();
    for (const bytes of await this.storage.readLog()) {
      const record = this.#decode(bytes);
      this.#seq = Math.max(this.#seq, record.seq);
      this.#logSize++;
      if (record.t === 'intent') open.add(record.seq);
      else {
        open.delete(record.seq);
        this.encoder.remove(record.removed);
        this.encoder.add(record.added);
        if (record.encodedWith !== undefined) this.#noteEncoded(record.encodedWith);
      }
    }
    // A write the process did not see through: what it changed is known only to the database.
    if (open.size > 0) trusted = false;
    let rebuilt = 0;
    if (!trusted || stored !== this.encoder.stats.documentCount) {
      if (snapshot !== undefined) {
        warnings.push({
          type: 'compatibility',
          source: 'collection',
          message:
            open.size > 0
              ? 'a write was interrupted: the keyword statistics were counted again from the database'
              : `the database holds ${stored} records and the keyword statistics count ${this.encoder.stats.documentCount} (another writer changed it): they were counted again from the database`,
        });
      }
      rebuilt = await this.#recount(stored, signal);
    }
    this.report = {
      restored: snapshot === undefined ? 0 : this.encoder.stats.documentCount,
      reconciled: open.size,
      rebuilt,
      warnings,
    };
    if (snapshot === undefined || rebuilt > 0) await this.writeSnapshot();
  }

  /** The statistics counted from every record the database holds. */
  async #recount(total: number, signal: AbortSignal | undefined): Promise<number> {
    const encoder = new BM25SparseEncoder({
      analyzer: this.encoder.analyzer,
      k1: this.encoder.k1,
      b: this.encoder.b,
    });
    let done = 0;
    for await (const page of this.#listing(signal)) {
      encoder.add(page.map((chunk) => chunk.text));
      done += page.length;
      this.settings.onProgress?.({ phase: 'rebuild', done, total });
    }
    this.#replaceEncoder(encoder);
    return done;
  }

  #replaceEncoder(encoder: BM25SparseEncoder): void {
    this.#encoder = encoder;
    this.#retrievers = this.#makeRetrievers(encoder);
  }

  #loadSnapshot(snapshot: Map<string, Uint8Array>): void {
    const location = this.storage.location;
    const state = this.readState(snapshot) as DatabaseCollectionState;
    if (state?.format !== DATABASE_STATE_FORMAT) {
      throw new IndexFormatError({
        message:
          (state as { format?: unknown })?.format === 'zerda.collection'
            ? `This storage holds a collection whose keyword side is in-process: open it with keyword 'memory', or move it into the database by opening a new storage with keyword 'database' and calling reencode()`
            : 'Not a Zerda collection',
        path: location,
      });
    }
    if (state.version !== STATE_VERSION) {
      throw new IndexFormatError({
        message: `Not a Zerda collection of version ${STATE_VERSION}`,
        path: location,
      });
    }
    this.checkSavedStore(state.store);
    const statistics = snapshot.get('keyword-statistics');
    if (statistics === undefined) {
      throw new IndexFormatError({
        message: "The collection snapshot has no 'keyword-statistics'",
        path: location,
      });
    }
    // A different analyser or term-id scheme is a typed error from the encoder, naming both.
    this.#replaceEncoder(
      BM25SparseEncoder.load(statistics, { analyzer: this.encoder.analyzer, path: location }),
    );
    this.#encodedWith = state.encodedWith;
  }

  #decode(bytes: Uint8Array): DatabaseLogRecord {
    let record: Partial<DatabaseLogRecord> & { t?: unknown };
    try {
      record = JSON.parse(new TextDecoder().decode(bytes));
    } catch (error) {
      throw new IndexFormatError({
        message: 'A collection log record is not valid JSON',
        path: this.storage.location,
        cause: error,
      });
    }
    const strings = (value: unknown) =>
      Array.isArray(value) && value.every((item) => typeof item === 'string');
    const valid =
      typeof record?.seq === 'number' &&
      ((record.t === 'intent' && strings((record as { ids?: unknown }).ids)) ||
        (record.t === 'stats' &&
          strings((record as { added?: unknown }).added) &&
          strings((record as { removed?: unknown }).removed)));
    if (!valid)
      throw new IndexFormatError({
        message: 'A collection log record is damaged',
        path: this.storage.location,
      });
    return record as DatabaseLogRecord;
  }

  // --- parts ---------------------------------------------------------------------------------

  async *#listing(signal: AbortSignal | undefined, pageSize = 1000): AsyncGenerator<Chunk[]> {
    const list = this.store.list;
    if (list === undefined) {
      throw new InvalidArgumentError({
        argument: 'store',
        message: `the '${this.store.name}' backend cannot list its records`,
      });
    }
    yield* list.call(this.store, { pageSize, ...(signal ? { signal } : {}) });
  }

  #keywordWarning(): Warning | undefined {
    const { drift } = this.drift;
    if (this.#unsettled) {
      return {
        type: 'partial-failure',
        source: 'collection',
        message:
          'a write failed with an unknown outcome: keyword statistics may be off until the collection is opened again',
      };
    }
    if (drift <= DRIFT_WARNING) return undefined;
    return {
      type: 'other',
      source: 'collection',
      message: `the average chunk length moved ${(drift * 100).toFixed(0)}% since some stored sparse vectors were encoded: keyword scores are approximate BM25; reencode() makes them exact`,
    };
  }

  #makeRetrievers(encoder: BM25SparseEncoder): Record<RetrievalMode, BaseRetriever> {
    const { reranker, strictFilters, fusion, embedder, alpha } = this.settings;
    const common = { store: this.store, ...(strictFilters !== undefined ? { strictFilters } : {}) };
    const keyword = new SparseKeywordRetriever({ ...common, encoder });
    const vector = new VectorRetriever({ ...common, ...(embedder ? { embedder } : {}) });
    const hybrid =
      fusion === 'database'
        ? new DatabaseHybridRetriever({
            ...common,
            encoder,
            ...(embedder ? { embedder } : {}),
            ...(alpha !== undefined ? { alpha } : {}),
            ...(reranker ? { reranker } : {}),
          })
        : new HybridRetriever({
            keyword,
            vector,
            ...(fusion ? { fusion } : {}),
            ...(reranker ? { reranker } : {}),
          });
    return this.modes(keyword, vector, hybrid);
  }
}
