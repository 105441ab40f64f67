import { BatchWriteError, IndexFormatError, InvalidArgumentError, throwIfAborted } from '../errors/index.js';
import { compileFilter, type FilterInput, parseFilter } from '../filter/index.js';
import { BM25Index, KeywordRetriever } from '../keyword/index.js';
import { type Chunk, normalizeChunks, type SearchResult, type Warning } from '../model/index.js';
import {
  type BaseRetriever,
  HybridRetriever,
  type HybridRetrieverOptions,
  type RerankHook,
} from '../retriever/index.js';
import type { Analyzer } from '../text/index.js';
import { arenaImageVectors, decodeArenaImage } from '../vector/arena-image.js';
import type { VectorDriver } from '../vector/driver.js';
import { InMemoryVectorStore } from '../vector/in-memory-vector-store.js';
import type { VectorDatabase } from '../vector/vector-database.js';
import { VectorRetriever } from '../vector/vector-retriever.js';
import { decodeChunkTable, encodeChunks } from './chunk-table.js';
import { CollectionBase, type SavedStore } from './collection-base.js';
import { DATABASE_STATE_FORMAT, DatabaseCollection } from './database-collection.js';
import { decodeRecord, encodeRecord, type LogRecord } from './log-records.js';
import { type BlobSource, bytesSource, type CollectionStorage } from './storage.js';
import { chunksInRowOrder, encodeRowOrder, storeRowOrder } from './vector-order.js';

export type RetrievalMode = 'keyword' | 'vector' | 'hybrid';

export interface CollectionSettings {
  /** The vector database (any store, `createChromaStore(...)`, ..., or a v2 driver). */
  store: VectorDatabase | VectorDriver;
  /** Where the local state lives (default: in memory, gone with the object). */
  storage?: CollectionStorage;
  /** Embeds chunks and queries (default: the store's embedder). */
  embedder?: VectorDatabase['embedder'];
  /** The keyword side's analyser and BM25 parameters (default: the default analyser, k1 1.2, b 0.75). */
  analyzer?: Analyzer;
  k1?: number;
  b?: number;
  /**
   * Where the keyword side (BM25) lives: 'memory' (default), an index in this process; 'database',
   * sparse vectors beside the dense ones in a store that has them (Postgres, Pinecone), so keyword
   * and hybrid retrieval run as database queries (see DatabaseCollection and the README's scale path).
   */
  keyword?: 'memory' | 'database';
  /**
   * Hybrid fusion: a method or a fusion setting (see HybridRetriever), or 'database' (keyword
   * 'database' only): the database fuses in one sparse-dense query (`searchHybrid`), weighted by `alpha`.
   */
  fusion?: HybridRetrieverOptions['fusion'] | 'database';
  /** With fusion 'database': the dense score's weight, the BM25 score getting `1 - alpha` (default 0.5). */
  alpha?: number;
  /** Re-scores candidates of every retrieval. */
  reranker?: RerankHook;
  /** Refuse filters the backend cannot evaluate whole. */
  strictFilters?: boolean;
  /** Log records after which the state is snapshotted and the log emptied (default 1,000). */
  checkpointEvery?: number;
  /** Reports rebuilding the keyword side from the database. */
  onProgress?: (progress: { phase: 'rebuild'; done: number; total: number }) => void;
  signal?: AbortSignal;
}

export interface CollectionAddOptions {
  /** Precomputed vectors, one per chunk in the same order. */
  embeddings?: ReadonlyArray<Float32Array | readonly number[]>;
  signal?: AbortSignal;
  onProgress?: (progress: { written: number; total: number }) => void;
}

export interface CollectionRetrieveOptions {
  /** 'hybrid' (default), 'keyword' or 'vector'. */
  mode?: RetrievalMode;
  k?: number;
  filter?: FilterInput;
  signal?: AbortSignal;
}

/** What the collection found when it opened. */
export interface CollectionOpenReport {
  /** Chunks restored from the local snapshot and log. */
  restored: number;
  /** Interrupted writes settled against the database (the keyword side made to match it). */
  reconciled: number;
  /** Chunks read back from the database to rebuild (or catch up) the keyword side. */
  rebuilt: number;
  warnings: Warning[];
}

const STATE_FORMAT = 'zerda.collection';
/**
 * Closing leaves the log for the next open to replay while it holds at most this many chunks (or
 * 1% of the collection, when more): replaying them costs less than rewriting the snapshot.
 */
const CLOSE_REPLAY_CHUNKS = 1000;

/** The chunks (or ids) a log record makes the next open replay. */
function loggedChunks(record: LogRecord): number {
  return record.t === 'add' ? record.chunks.length : record.t === 'delete' ? record.ids.length : 0;
}
/**
 * 5: the chunks' texts in a blob of their own ('chunk-texts'), each read when a chunk's text is
 * read (chunk table version 3).
 * 4: the chunk table without the ids (table version 2: they are the keyword index's, in its slot
 * order). 3: core's in-memory store's vectors as its memory holds them ('vector-arena', see
 * vector/arena-image.ts, with 'vector-order' when its rows are in another order than the chunks);
 * other stores' still as float32 rows ('vectors'). 2: the chunks as a binary table ('chunks', see
 * chunk-table.ts). 1: the chunks as JSON lines ('keyword-chunks'). 1 to 4 are still read; the
 * next snapshot writes version 5.
 */
const STATE_VERSION = 5;

interface CollectionState {
  format: typeof STATE_FORMAT;
  version: 1 | 2 | 3 | 4 | typeof STATE_VERSION;
  store: SavedStore;
  analyzer: string;
  count: number;
  /** The store keeps no data across restarts, so the snapshot holds the vectors too. */
  vectors: boolean;
}

/**
 * Opens (or creates) a collection: one object over a corpus in a vector database and a BM25 index,
 * kept consistent and durable. See `Collection`.
 */
export async function openCollection(
  settings: CollectionSettings & { keyword: 'database' },
): Promise<DatabaseCollection>;
export async function openCollection(settings: CollectionSettings): Promise<Collection>;
export async function openCollection(settings: CollectionSettings): Promise<Collection | DatabaseCollection> {
  const collection =
    settings?.keyword === 'database' ? new DatabaseCollection(settings) : new Collection(settings);
  await collection.open(settings.signal);
  return collection;
}

/**
 * A corpus over any vector database plus the BM25 index: add once, retrieve in keyword, vector or
 * hybrid mode. Rule: every chunk id is in both sides or in neither, after any failure or crash, and
 * every add or delete that returned is durable.
 *
 * How: writes are serialised. Each write first appends an intent (the ids) to the storage's log,
 * then writes the database, then appends what was done (the chunks written, or the ids deleted) and
 * applies it to the keyword side. An intent with no record of what was done (a crash, or a failure
 * whose outcome is unknown) is settled by asking the database which of its ids it holds, and the
 * keyword side is made to match. Opening replays the snapshot and the log, settles open intents,
 * and catches up with a database that others wrote to. While a write is in flight, its ids are
 * kept out of every result, so a reader sees each batch before or after, never on one side only.
 */
export class Collection extends CollectionBase {
  /** What opening found (restored, reconciled, rebuilt, warnings). */
  report: CollectionOpenReport = { restored: 0, reconciled: 0, rebuilt: 0, warnings: [] };

  readonly #keepsVectors: boolean;
  /** A volatile storage under a store that keeps nothing: no log (it would only repeat the store), a snapshot on close. */
  readonly #logless: boolean;
  #keyword: KeywordRetriever;
  #retrievers: Record<RetrievalMode, BaseRetriever>;
  #seq = 0;
  #logSize = 0;
  /** Chunks added and ids deleted by the log's records: what the next open would replay. */
  #logChunks = 0;
  /** The snapshot read at open is in an older format: it is written again on close, even unchanged. */
  #outdated = false;
  /** Whether anything was written since the last snapshot (closing an unchanged collection writes nothing). */
  #changed = false;
  /** Ids whose write is in flight or whose outcome is not yet known: kept out of results. */
  readonly #hidden = new Map<string, number>();
  /** Notes from restoring the snapshot, for the open report. */
  readonly #restoreWarnings: Warning[] = [];

  constructor(settings: CollectionSettings) {
    super(settings);
    if (settings.keyword !== undefined && settings.keyword !== 'memory') {
      throw new InvalidArgumentError({
        argument: 'keyword',
        value: settings.keyword,
        message:
          "a Collection keeps its keyword side in memory; openCollection({ keyword: 'database' }) makes a DatabaseCollection",
      });
    }
    if (settings.fusion === 'database') {
      throw new InvalidArgumentError({
        argument: 'fusion',
        value: settings.fusion,
        message:
          "fusion 'database' needs the keyword side in the database (keyword: 'database') and a store that fuses (searchHybrid)",
      });
    }
    this.#keepsVectors = !this.store.capabilities.persistent;
    this.#logless = this.storage.volatile === true && this.#keepsVectors;
    this.#keyword = this.#newKeyword();
    this.#retrievers = this.#makeRetrievers();
  }

  /** Chunks in the collection. */
  get size(): number {
    return this.#keyword.size;
  }

  /**
   * Adds chunks, replacing those with the same ids, in both sides. The whole batch is checked and
   * embedded before anything is written. A partial failure of the database is a BatchWriteError
   * whose `writtenIds` are exactly the chunks now in both sides.
   */
  add(input: readonly unknown[], options: CollectionAddOptions = {}): Promise<{ ids: string[] }> {
    return this.serialised(async () => {
      const { signal, onProgress } = options;
      throwIfAborted(signal);
      const chunks = normalizeChunks(input);
      if (chunks.length === 0) return { ids: [] };
      const vectors = options.embeddings ?? (await this.embed(chunks, signal));
      if (vectors.length !== chunks.length) {
        throw new InvalidArgumentError({
          argument: 'embeddings',
          message: `expected ${chunks.length} vectors, got ${vectors.length}`,
        });
      }
      const ids = chunks.map((chunk) => chunk.id);
      const seq = ++this.#seq;
      await this.#append({ t: 'intent', seq, ids });
      this.#hide(ids);
      let written: Set<string>;
      let failure: unknown;
      try {
        await this.store.add(chunks, {
          embeddings: vectors,
          ...(signal ? { signal } : {}),
          ...(onProgress ? { onProgress } : {}),
        });
        written = new Set(ids);
      } catch (error) {
        failure = error;
        const known = await this.#settle(ids, error);
        if (known === undefined) throw error; // outcome unknown: the ids stay hidden until settled
        written = known;
      }
      const done = chunks.filter((chunk) => written.has(chunk.id));
      const doneVectors =
        this.#keepsVectors && !this.#logless
          ? chunks.flatMap((chunk, i) => {
              if (!written.has(chunk.id)) return [];
              const vector = vectors[i];
              // encodeRecord copies the bytes out, so a float32 vector needs no copy of its own here.
              return [
                vector instanceof Float32Array ? vector : Float32Array.from(vector as ArrayLike<number>),
              ];
            })
          : undefined;
      await this.#append({ t: 'add', seq, chunks: done, ...(doneVectors ? { vectors: doneVectors } : {}) });
      this.#applyAdd(done, ids);
      await this.#maybeCheckpoint();
      if (failure !== undefined) throw failure;
      return { ids };
    });
  }

  /** Removes chunks by id from both sides; returns how many existed. */
  delete(ids: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number> {
    return this.serialised(async () => {
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
        throw new InvalidArgumentError({
          argument: 'ids',
          value: ids,
          message: 'expected an array of strings',
        });
      }
      const remove = this.store.delete;
      if (remove === undefined) {
        throw new InvalidArgumentError({
          argument: 'ids',
          message: `the '${this.store.name}' backend cannot delete records`,
        });
      }
      const unique = [...new Set(ids)].filter(
        (id) => this.#keyword.get(id) !== undefined || this.#hidden.has(id),
      );
      if (unique.length === 0) return 0;
      const seq = ++this.#seq;
      await this.#append({ t: 'intent', seq, ids: unique });
      this.#hide(unique);
      try {
        await remove.call(this.store, unique, options);
      } catch (error) {
        const kept = await this.#settle(unique, error);
        if (kept === undefined) throw error;
        const gone = unique.filter((id) => !kept.has(id));
        await this.#append({ t: 'delete', seq, ids: gone });
        this.#applyDelete(gone, unique);
        throw error;
      }
      await this.#append({ t: 'delete', seq, ids: unique });
      const removed = unique.filter((id) => this.#keyword.get(id) !== undefined).length;
      this.#applyDelete(unique, unique);
      await this.#maybeCheckpoint();
      return removed;
    });
  }

  /** Removes every chunk that matches a filter (evaluated on the collection's own copy of the metadata). */
  async deleteWhere(filter: FilterInput, options: { signal?: AbortSignal } = {}): Promise<number> {
    const matches = compileFilter(parseFilter(filter));
    const ids = [...this.#keyword.chunks()].filter((chunk) => matches(chunk)).map((chunk) => chunk.id);
    return ids.length === 0 ? 0 : this.delete(ids, options);
  }

  /** The chunks among `ids`, in the order asked (unknown ids left out). */
  async get(ids: readonly string[]): Promise<Chunk[]> {
    if (!Array.isArray(ids))
      throw new InvalidArgumentError({
        argument: 'ids',
        value: ids,
        message: 'expected an array of strings',
      });
    return ids.flatMap((id) => {
      const chunk = this.#hidden.has(id) ? undefined : this.#keyword.get(id);
      return chunk === undefined ? [] : [chunk];
    });
  }

  async count(): Promise<number> {
    return this.#keyword.size;
  }

  /** Every chunk of the collection (its own copy), a page at a time, in insertion order. */
  async *list(options: { pageSize?: number } = {}): AsyncGenerator<Chunk[]> {
    const { pageSize = 1000 } = options;
    let page: Chunk[] = [];
    for (const chunk of this.#keyword.chunks()) {
      if (this.#hidden.has(chunk.id)) continue;
      page.push(chunk);
      if (page.length >= pageSize) {
        yield page;
        page = [];
      }
    }
    if (page.length > 0) yield page;
  }

  /** Asks for as many more hits as writes in flight hide, and leaves those out. */
  protected async retrieveWith(
    retriever: BaseRetriever,
    _mode: RetrievalMode,
    query: string,
    options: Omit<CollectionRetrieveOptions, 'mode'>,
  ): Promise<SearchResult> {
    const k = options.k ?? 10;
    const hidden = this.#hidden.size;
    const result = await retriever.retrieve(query, { ...options, k: k + hidden });
    if (hidden === 0 && this.#hidden.size === 0) return result;
    const hits = result.hits.filter((hit) => !this.#hidden.has(hit.chunk.id)).slice(0, k);
    return { ...result, hits: hits.map((hit, index) => ({ ...hit, rank: index + 1 })) };
  }

  protected retrievers(): Record<RetrievalMode, BaseRetriever> {
    return this.#retrievers;
  }

  // Logless, the snapshot is the only record, taken even with writes unsettled: their ids are in
  // neither side of it (a store that keeps nothing loses them with the process anyway). With a log,
  // a short one is left for the next open to replay: that costs less than rewriting the whole
  // snapshot now (a few chunks added to a large collection would otherwise rewrite all of it).
  protected snapshotsOnClose(): boolean {
    if (!this.#changed) return false;
    if (this.#logless) return true;
    if (this.#hidden.size > 0) return false;
    return this.#outdated || this.#logChunks > Math.max(CLOSE_REPLAY_CHUNKS, this.size / 100);
  }

  // --- writing -------------------------------------------------------------------------------

  async #append(record: LogRecord): Promise<void> {
    this.#changed = true;
    if (this.#logless) return;
    // A store that keeps nothing loses an interrupted write with the process, so its intent is
    // never settled on open: not written (one flush less per write).
    if (record.t === 'intent' && this.#keepsVectors) return;
    await this.storage.appendLog(encodeRecord(record));
    this.#logSize++;
    this.#logChunks += loggedChunks(record);
  }

  #hide(ids: readonly string[]): void {
    for (const id of ids) this.#hidden.set(id, (this.#hidden.get(id) ?? 0) + 1);
  }

  #unhide(ids: readonly string[]): void {
    for (const id of ids) {
      const left = (this.#hidden.get(id) ?? 1) - 1;
      if (left <= 0) this.#hidden.delete(id);
      else this.#hidden.set(id, left);
    }
  }

  /** Applies a completed add to the keyword side and shows its ids again, in one synchronous step. */
  #applyAdd(done: Chunk[], intended: readonly string[]): void {
    if (done.length > 0) this.#keyword.add(done);
    this.#unhide(intended);
  }

  #applyDelete(gone: readonly string[], intended: readonly string[]): void {
    if (gone.length > 0) this.#keyword.remove(gone);
    this.#unhide(intended);
  }

  /**
   * After a failed write: which of `ids` the database now holds. A BatchWriteError says so for an
   * add; otherwise the database is asked. Undefined when that cannot be known now (the ids stay
   * hidden and the intent open in the log, settled at the next write or open).
   */
  async #settle(ids: readonly string[], error: unknown): Promise<Set<string> | undefined> {
    if (BatchWriteError.isInstance(error)) {
      // Ids the backend did not confirm may still have been written: ask about those.
      const confirmed = new Set(error.writtenIds);
      const unsure = ids.filter((id) => !confirmed.has(id));
      const held = await this.#held(unsure);
      if (held === undefined) return undefined;
      for (const id of held) confirmed.add(id);
      return confirmed;
    }
    return this.#held(ids);
  }

  async #held(ids: readonly string[]): Promise<Set<string> | undefined> {
    if (ids.length === 0) return new Set();
    try {
      return new Set((await this.store.get(ids)).map((chunk) => chunk.id));
    } catch {
      return undefined;
    }
  }

  async #maybeCheckpoint(): Promise<void> {
    if (this.#logSize >= this.checkpointEvery && this.#hidden.size === 0) await this.writeSnapshot();
  }

  protected async writeSnapshot(): Promise<void> {
    const chunks = [...this.#keyword.chunks()];
    const state: CollectionState = {
      format: STATE_FORMAT,
      version: STATE_VERSION,
      store: this.savedStore(),
      analyzer: this.#keyword.index.analyzer.name,
      count: chunks.length,
      vectors: this.#keepsVectors && typeof this.store.listRecords === 'function',
    };
    const encoder = new TextEncoder();
    const { table, texts } = encodeChunks(chunks);
    const blobs = new Map<string, Uint8Array>([
      ['keyword-index', this.#keyword.index.serialize()],
      ['chunks', table],
      ['chunk-texts', texts],
    ]);
    const vectors = state.vectors ? await this.#vectorBlobs(chunks) : undefined;
    // A store that lists chunks but not their vectors: the snapshot says so, and they are embedded
    // again from the texts when it is restored (never zeros in their place).
    if (vectors === undefined) state.vectors = false;
    else for (const [key, bytes] of vectors) blobs.set(key, bytes);
    blobs.set('state', encoder.encode(JSON.stringify(state)));
    await this.storage.commitSnapshot(blobs);
    this.#logSize = 0;
    this.#logChunks = 0;
    this.#outdated = false;
    this.#changed = false;
  }

  /**
   * The store's vectors as snapshot blobs, or undefined when the store does not return a vector for
   * every chunk. Core's in-memory store: its memory's regions as they are ('vector-arena', one copy
   * each, nothing converted), with its row order when that is not the order of `chunks`
   * ('vector-order'). Any other store: float32 rows in the order of `chunks` ('vectors').
   */
  async #vectorBlobs(chunks: Chunk[]): Promise<Map<string, Uint8Array> | undefined> {
    if (this.store instanceof InMemoryVectorStore) {
      const arena = this.store.snapshotArena();
      const order = arena === undefined ? undefined : storeRowOrder(arena.chunks, chunks);
      if (arena !== undefined && order !== undefined) {
        const blobs = new Map([['vector-arena', arena.bytes]]);
        if (order !== null) blobs.set('vector-order', encodeRowOrder(order));
        return blobs;
      }
    }
    // The store holds ids the collection does not (writes left unsettled at close): rows copied.
    const vectors = await this.#vectorsInOrder(chunks);
    return vectors === undefined ? undefined : new Map([['vectors', vectors]]);
  }

  /**
   * The store's vectors laid out in the order of `chunks` (float32, little-endian), or undefined
   * when the store does not return a vector for every chunk.
   */
  async #vectorsInOrder(chunks: Chunk[]): Promise<Uint8Array | undefined> {
    const dimension = this.store.dimension ?? 0;
    const slot = new Map(chunks.map((chunk, index) => [chunk.id, index]));
    const out = new Float32Array(chunks.length * dimension);
    let filled = 0;
    if (this.store instanceof InMemoryVectorStore) {
      // Core's own store hands over its vectors in one pass.
      const snapshot = this.store.snapshot();
      if (snapshot === undefined || snapshot.dimension !== dimension) return undefined;
      snapshot.chunks.forEach((chunk, row) => {
        const at = slot.get(chunk.id);
        if (at === undefined) return;
        out.set(snapshot.vectors.subarray(row * dimension, (row + 1) * dimension), at * dimension);
        filled++;
      });
      return filled === chunks.length ? new Uint8Array(out.buffer) : undefined;
    }
    const listRecords = this.store.listRecords as NonNullable<VectorDatabase['listRecords']>;
    for await (const page of listRecords.call(this.store, { pageSize: 10_000 })) {
      if (page.vectors === undefined) return undefined;
      page.chunks.forEach((chunk, index) => {
        const at = slot.get(chunk.id);
        const vector = page.vectors?.[index];
        if (at === undefined || vector === undefined || vector.length !== dimension) return;
        out.set(vector, at * dimension);
        filled++;
      });
    }
    return filled === chunks.length ? new Uint8Array(out.buffer) : undefined;
  }

  // --- opening -------------------------------------------------------------------------------

  /** Restores the local state, settles interrupted writes, catches up with the database. */
  protected async restore(signal: AbortSignal | undefined): Promise<void> {
    // Counting first opens the database and learns its dimension, which the snapshot is checked against.
    const stored = this.#keepsVectors ? 0 : await this.store.count(signal ? { signal } : {});
    // Core's empty store takes its saved vectors straight into its scan memory, with no second copy.
    const store = this.store;
    const intoStore = store instanceof InMemoryVectorStore && (await store.count()) === 0;
    // The chunks' texts are left unread where the storage can read them later, a text at a time.
    let texts: BlobSource | undefined;
    // The keyword index decoded as soon as it is read, while the vector image is still being read
    // (its outcome, an error included, taken up where the snapshot's checks reach it).
    let early: { index: BM25Index } | { error: unknown } | undefined;
    const snapshot = await this.storage.readSnapshot({
      onRead: (key, bytes) => {
        if (key !== 'keyword-index') return;
        try {
          early = { index: this.#readIndex(bytes) };
        } catch (error) {
          early = { error };
        }
      },
      ...(intoStore
        ? {
            into: (key: string, byteLength: number) =>
              key === 'vector-arena' ? store.arenaImageTarget(byteLength) : undefined,
          }
        : {}),
      defer: (key) =>
        key === 'chunk-texts'
          ? (source) => {
              texts = source;
            }
          : undefined,
    });
    const warnings: Warning[] = this.#restoreWarnings;
    let restored = 0;
    if (snapshot !== undefined) restored = await this.#loadSnapshot(snapshot, texts, early);
    // A snapshot in an older format is written again on close, so the next open reads the current one.
    if (this.storage.outdated === true) this.#changed = this.#outdated = true;
    const open = new Map<number, string[]>();
    for (const bytes of await this.storage.readLog()) {
      const record = decodeRecord(bytes, this.storage.location);
      this.#seq = Math.max(this.#seq, record.seq);
      this.#logSize++;
      this.#logChunks += loggedChunks(record);
      this.#changed = true;
      if (record.t === 'intent') open.set(record.seq, record.ids);
      else if (record.t === 'add') {
        open.delete(record.seq);
        if (this.#keepsVectors && record.chunks.length > 0)
          await this.store.add(record.chunks, { embeddings: record.vectors ?? [] });
        this.#keyword.add(record.chunks);
      } else {
        open.delete(record.seq);
        if (this.#keepsVectors && record.ids.length > 0) await this.store.delete?.(record.ids);
        this.#keyword.remove(record.ids);
      }
    }
    let reconciled = 0;
    // An intent with no outcome: the process stopped mid-write. The database says what happened
    // (a store that keeps nothing across restarts lost that write with the process).
    if (!this.#keepsVectors) {
      for (const ids of open.values()) {
        const held = new Set((await this.store.get(ids, signal ? { signal } : {})).map((chunk) => chunk.id));
        const present = ids.filter((id) => held.has(id));
        if (present.length > 0) this.#keyword.add(await this.store.get(present));
        this.#keyword.remove(ids.filter((id) => !held.has(id)));
        reconciled += ids.length;
      }
    }
    let rebuilt = 0;
    if (!this.#keepsVectors) {
      if (stored !== this.#keyword.size) {
        if (typeof this.store.list !== 'function') {
          warnings.push({
            type: 'compatibility',
            source: 'collection',
            message: `the database holds ${stored} records and the keyword side ${this.#keyword.size}, and the '${this.store.name}' backend cannot list its records to catch up: keyword results may miss or keep chunks another writer changed`,
          });
        } else {
          if (snapshot !== undefined) {
            warnings.push({
              type: 'compatibility',
              source: 'collection',
              message: `the database holds ${stored} records and the local keyword side ${this.#keyword.size} (another writer changed it): the keyword side was rebuilt from the database`,
            });
          }
          rebuilt = await this.#rebuildFromStore(stored, signal);
        }
      }
    }
    this.report = { restored, reconciled, rebuilt, warnings };
    if (snapshot === undefined || reconciled > 0 || rebuilt > 0) await this.writeSnapshot();
  }

  async #rebuildFromStore(total: number, signal: AbortSignal | undefined): Promise<number> {
    const keyword = this.#newKeyword();
    let done = 0;
    const list = this.store.list as NonNullable<VectorDatabase['list']>;
    for await (const page of list.call(this.store, { pageSize: 1000, ...(signal ? { signal } : {}) })) {
      keyword.add(page);
      done += page.length;
      this.settings.onProgress?.({ phase: 'rebuild', done, total });
    }
    this.#keyword = keyword;
    this.#retrievers = this.#makeRetrievers();
    return done;
  }

  async #loadSnapshot(
    snapshot: Map<string, Uint8Array>,
    deferredTexts: BlobSource | undefined,
    early: { index: BM25Index } | { error: unknown } | undefined,
  ): Promise<number> {
    const location = this.storage.location;
    const text = (key: string): string => {
      const bytes = snapshot.get(key);
      if (bytes === undefined)
        throw new IndexFormatError({ message: `The collection snapshot has no '${key}'`, path: location });
      return new TextDecoder().decode(bytes);
    };
    const state = this.readState(snapshot) as CollectionState;
    if ((state as { format?: unknown })?.format === DATABASE_STATE_FORMAT) {
      throw new IndexFormatError({
        message:
          "This storage holds a collection whose keyword side is in the database: open it with keyword 'database'",
        path: location,
      });
    }
    if (
      state?.format !== STATE_FORMAT ||
      !(Number.isInteger(state.version) && state.version >= 1 && state.version <= STATE_VERSION)
    ) {
      throw new IndexFormatError({
        message: `Not a Zerda collection of version 1 to ${STATE_VERSION}${state?.format === STATE_FORMAT ? ` (it is version ${String(state.version)}, written by another version of Zerda)` : ''}`,
        path: location,
      });
    }
    this.checkSavedStore(state.store);
    const analyzer = this.#keyword.index.analyzer.name;
    if (state.analyzer !== analyzer) throw this.mismatch('analyzer', state.analyzer, analyzer);
    if (early !== undefined && 'error' in early) throw early.error;
    const index = early?.index ?? this.#readIndex(snapshot.get('keyword-index') ?? new Uint8Array(0));
    let chunks: Chunk[];
    if (state.version === 1) {
      const lines = text('keyword-chunks');
      try {
        chunks = normalizeChunks(lines.length === 0 ? [] : lines.split('\n').map((line) => JSON.parse(line)));
      } catch (error) {
        throw new IndexFormatError({
          message: 'The collection chunks are corrupt',
          path: location,
          cause: error,
        });
      }
    } else {
      const table = snapshot.get('chunks');
      if (table === undefined)
        throw new IndexFormatError({ message: "The collection snapshot has no 'chunks'", path: location });
      // Validated when they were added; the table's reader checks its structure, the storage its
      // bytes. A table of version 2 or 3 takes the index's ids (in slot order, the order it was
      // saved in); one of version 1 holds its own. Version 3 chunks read their texts when asked.
      const whole = snapshot.get('chunk-texts');
      const texts = deferredTexts ?? (whole !== undefined ? bytesSource(whole) : undefined);
      chunks = decodeChunkTable(table, location, [...index.documentIds()], texts);
    }
    if (state.version !== STATE_VERSION) this.#changed = this.#outdated = true;
    this.#keyword = KeywordRetriever.fromParts(index, chunks);
    this.#retrievers = this.#makeRetrievers();
    if (this.#keepsVectors && chunks.length > 0 && !state.vectors) {
      // A store that keeps nothing and cannot list its vectors: they are embedded again from the texts.
      await this.store.add(chunks);
      this.#restoreWarnings.push({
        type: 'compatibility',
        source: 'collection',
        message: `the '${this.store.name}' store cannot list its vectors, so the ${chunks.length} chunks of the snapshot were embedded again`,
      });
    } else if (this.#keepsVectors && chunks.length > 0 && snapshot.has('vector-arena')) {
      await this.#restoreArena(snapshot, state, chunks);
    } else if (this.#keepsVectors && chunks.length > 0) {
      const bytes = snapshot.get('vectors');
      const width = state.store.dimension ?? 0;
      if (bytes === undefined || bytes.byteLength !== chunks.length * width * 4) {
        throw new IndexFormatError({
          message: 'The collection snapshot has no vectors for its chunks',
          path: location,
        });
      }
      if (this.store instanceof InMemoryVectorStore && (await this.store.count()) === 0) {
        // Read in place where aligned: the store copies the rows into its own memory.
        const all =
          bytes.byteOffset % 4 === 0
            ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
            : new Float32Array(bytes.slice().buffer);
        // Core's own store takes its vectors back as stored, in one copy, without re-checking them.
        this.store.restoreSnapshot({
          metric: this.store.capabilities.metric,
          dimension: width,
          vectors: all,
          chunks,
        });
      } else {
        // A copy: another store may keep the arrays it is given, and the storage keeps these bytes.
        const all = new Float32Array(bytes.slice().buffer);
        const embeddings = chunks.map((_, i) => all.subarray(i * width, (i + 1) * width));
        await this.store.add(chunks, { embeddings });
      }
    }
    return chunks.length;
  }

  /** The saved keyword index: the storage's bytes are ours (the index keeps views into them) and checked where it says so. */
  #readIndex(bytes: Uint8Array): BM25Index {
    return BM25Index.deserialize(bytes, {
      analyzer: this.#keyword.index.analyzer,
      path: this.storage.location,
      adopt: true,
      verified: this.storage.verified === true,
    });
  }

  /**
   * Restores the in-memory store's arena image: checked against the state and the chunks (sizes and
   * structure; the storage has checked the bytes), then each region copied once into the store's
   * memory, with no per-row work. Another store (or a store not empty) gets the vectors as rows.
   */
  async #restoreArena(
    snapshot: Map<string, Uint8Array>,
    state: CollectionState,
    chunks: Chunk[],
  ): Promise<void> {
    const location = this.storage.location;
    const bytes = snapshot.get('vector-arena') as Uint8Array;
    const image = decodeArenaImage(bytes, location);
    const { layout } = image;
    if (
      layout.count !== chunks.length ||
      layout.dimension !== state.store.dimension ||
      layout.metric !== state.store.metric
    ) {
      throw new IndexFormatError({
        message: `The collection's vector image holds ${layout.count} ${layout.metric} vectors of dimension ${layout.dimension}, its state ${chunks.length} chunks of ${state.store.metric} vectors of dimension ${String(state.store.dimension)}`,
        path: location,
      });
    }
    const rows = chunksInRowOrder(snapshot.get('vector-order'), chunks, location);
    if (this.store instanceof InMemoryVectorStore && (await this.store.count()) === 0) {
      this.store.restoreArena({ bytes, chunks: rows }, { path: location });
      return;
    }
    const vectors = arenaImageVectors(image);
    const width = layout.dimension;
    const embeddings = rows.map((_, row) => vectors.subarray(row * width, (row + 1) * width));
    await this.store.add(rows, { embeddings });
  }

  // --- parts ---------------------------------------------------------------------------------

  #newKeyword(): KeywordRetriever {
    const { analyzer, k1, b } = this.settings;
    return new KeywordRetriever({
      ...(analyzer ? { analyzer } : {}),
      ...(k1 !== undefined ? { k1 } : {}),
      ...(b !== undefined ? { b } : {}),
    });
  }

  #makeRetrievers(): Record<RetrievalMode, BaseRetriever> {
    const { reranker, strictFilters, fusion } = this.settings;
    const embedder = this.settings.embedder;
    const vector = new VectorRetriever({
      store: this.store,
      ...(embedder ? { embedder } : {}),
      ...(strictFilters !== undefined ? { strictFilters } : {}),
    });
    // The branches run without the reranker; each mode's result is reranked once.
    const hybrid = new HybridRetriever({
      keyword: this.#keyword,
      vector,
      ...(fusion && fusion !== 'database' ? { fusion } : {}),
      ...(reranker ? { reranker } : {}),
    });
    return this.modes(this.#keyword, vector, hybrid);
  }
}
