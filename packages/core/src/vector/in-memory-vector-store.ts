import { InvalidArgumentError } from '../errors/index.js';
import { compileFilter, type FilterInput, parseFilter, zerdaFilterConvention } from '../filter/index.js';
import type { Chunk } from '../model/index.js';
import { arenaImageVectors, decodeArenaImage, encodeArenaImage } from './arena-image.js';
import type {
  DistanceMetric,
  DriverCapabilities,
  DriverListOptions,
  DriverListPage,
  DriverMatch,
  DriverQueryOptions,
  VectorDriver,
  VectorRecord,
} from './driver.js';
import type { Embedder } from './embedder.js';
import {
  checkProbes,
  defaultLists,
  defaultProbes,
  IvfIndex,
  type IvfIndexSnapshot,
  RETRAIN_GROWTH,
  type ResolvedIndexSetting,
  resolveIndexSetting,
  type VectorIndexSetting,
} from './ivf-index.js';
import {
  int8KernelFor,
  type KernelPreference,
  resolveKernelKind,
  sharedKernelsSupported,
} from './kernels/kernels.js';
import {
  checkScanThreadHost,
  type ScanThreadHost,
  type ScanThreadsState,
  unsplitScanThreadsState,
} from './kernels/scan-threads.js';
import { selectTopK } from './top-k.js';
import { VectorArena } from './vector-arena.js';
import type { Deletable, Listable, VectorSearchOptions, VectorSearchResult } from './vector-database.js';
import { checkVector } from './vector-input.js';
import { VectorStore } from './vector-store.js';

/** An in-memory store's content: vectors as stored (unit length for cosine) and chunks, both in slot order. */
export interface InMemoryStoreSnapshot {
  metric: DistanceMetric;
  dimension: number;
  /** count x dimension values. */
  vectors: Float32Array;
  chunks: Chunk[];
  /** The IVF index (centroids and each row's list), when the store has trained one. */
  index?: IvfIndexSnapshot;
}

/**
 * An in-memory store's content as its memory holds it: `bytes`, one blob of the store's vector
 * regions (float32 rows, int8 codes and scales, norms: whatever its quantisation keeps) after a
 * header with its layout (dimension, count, quantisation, metric), and the chunks in the same
 * (slot) order. Restoring copies each region once and quantises nothing.
 */
export interface InMemoryArenaSnapshot {
  bytes: Uint8Array;
  chunks: Chunk[];
}

/**
 * How the in-memory store holds and scans vectors: float32 only ('none'), int8 codes plus float32
 * for exact re-scoring ('int8'), or int8 codes only ('int8-only').
 */
export type VectorQuantization = 'none' | 'int8' | 'int8-only';

export interface InMemoryVectorStoreSettings {
  /** Embeds chunk texts on `add` (when no `embeddings` are given) and query texts on `search`. */
  embedder?: Embedder;
  /** Vector dimension. Default: the embedder's, else the length of the first vectors added. */
  dimension?: number;
  /**
   * Similarity (default 'cosine'). Scores: cosine similarity (`1 - d` for cosine distance d; a
   * stored zero vector, which has no direction, scores 0); 'dot': the raw inner product; 'l2':
   * `1 / (1 + d)` for the Euclidean distance d.
   */
  metric?: DistanceMetric;
  /**
   * 'int8' (default): each vector is kept in float32 and as int8 codes with a per-vector scale; a
   * search scans the codes with the query's 7-bit codes (a quarter of the memory traffic; relaxed
   * SIMD's dot product where the runtime has it, see `stats().int8Kernel`), then re-scores the best
   * `max(factor * topK, minimum)` candidates exactly in float32. Results and scores are exact
   * unless a true neighbour falls outside the candidates. Memory: 5 bytes a value.
   * 'none': float32 only, every vector scored exactly in float32. Memory: 4 bytes a value.
   * 'int8-only': the codes only, no float32 copy (1 byte a value): the candidates are re-scored
   * with the float32 query against their codes times their scale, so the query's quantisation
   * error is removed but the vector's stays: scores are within about `scale / 2` per dimension of
   * exact, and near-ties may rank differently. Saving writes the codes times the scale, which
   * quantise back to the same codes. `stats().bytesPerVector` says what each mode holds.
   */
  quantization?: VectorQuantization;
  /** Candidates re-scored after an int8 scan: `max(factor * topK, minimum)` (default 4 and 100). */
  rescore?: { factor?: number; minimum?: number };
  /**
   * The scan kernels: 'auto' (default) uses WebAssembly SIMD where the runtime has it and plain
   * JavaScript otherwise; 'wasm' requires SIMD; 'js' forces the fallback.
   */
  kernel?: KernelPreference;
  /**
   * How a search finds the nearest rows. 'exact' (default): always scan every row. 'auto': an
   * exact scan up to 200,000 vectors, then an IVF index (below). `{ type: 'ivf', lists?, probes? }`:
   * from 1,000 vectors, k-means centroids (`lists`, default about √count) each hold the rows
   * nearest them, and a search scans only the rows of the `probes` lists nearest the query
   * (default `max(8, √lists)`): approximate, recall@10 about 0.95 or more on clustered
   * embeddings, in a fraction of the time; such results carry `approximate`. The index is trained
   * on the first search (or `buildIndex()`), follows adds and deletes, and is trained again once
   * the store has grown to 4 times the rows it was trained on. Filters stay exact.
   */
  index?: VectorIndexSetting;
  /**
   * Worker threads to split each full scan over, for a shorter search on a machine with idle
   * cores: `nodeScanThreads()` from `@zerda/core/node`, `webScanThreads()` in browsers (a cross-
   * origin isolated page), Deno and Bun, or another `ScanThreadHost`. Results are the same as on
   * one thread. Needs the WebAssembly kernels; the store's memory is then a SharedArrayBuffer. A
   * search waits for the workers asynchronously, so other work runs meanwhile; searches, writes
   * and `close()` made during a split scan wait for it. `close()` stops the workers;
   * `stats().threads` says how many threads scan, and why the workers were given up if they failed.
   */
  threads?: ScanThreadHost;
}

/** Per-search options of the in-memory store, beside the common ones. */
export interface InMemorySearchOptions extends VectorSearchOptions<FilterInput> {
  /** IVF lists to scan for this search (more: better recall, slower). */
  probes?: number;
  /** Scan every row, even where the store has an IVF index. */
  exact?: boolean;
}

/** A search result; `approximate` says how an IVF search was made (absent when it was exact). */
export interface InMemorySearchResult extends VectorSearchResult {
  approximate?: { index: 'ivf'; lists: number; probes: number };
}

/** Sizes and settings of a store, for monitoring and benchmarks. */
export interface InMemoryVectorStoreStats {
  count: number;
  dimension: number | undefined;
  metric: DistanceMetric;
  quantization: VectorQuantization;
  /** Which kernels scan: 'wasm' (WebAssembly SIMD) or 'js'. */
  kernel: 'wasm' | 'js';
  /**
   * What the int8 scans use (the full scans of a quantised store, and an IVF index's list scans;
   * undefined for a store with neither): 'relaxed-simd', the 8-bit dot product of WebAssembly's
   * relaxed SIMD, about a fifth faster, where the runtime has it (Chrome 114 and later, Node 21 and
   * later); 'simd' (SIMD128) elsewhere; 'js' with the JavaScript kernels. The results are the same.
   */
  int8Kernel: 'relaxed-simd' | 'simd' | 'js' | undefined;
  /** Bytes held for vectors, codes, norms and scan scratch (chunks not included). */
  vectorBytes: number;
  /** Bytes per vector: float32 row (when kept), codes and scale (when quantised), norm, scan scratch. */
  bytesPerVector: number | undefined;
  /** Threads a full scan is split over (1 without `threads`), and why the workers were given up if they failed. */
  threads: ScanThreadsState;
  /** The search index: 'exact', or IVF with its lists and probes (`trainedRows` 0 before training). */
  index:
    | { type: 'exact' }
    | {
        type: 'ivf';
        lists: number | undefined;
        probes: number | undefined;
        trainedRows: number;
        minRows: number;
        /** Bytes the index holds (centroids, its own int8 codes of each row, row lists); counted in `vectorBytes`. */
        bytes: number;
      };
}

const ignore = (): void => {};

/** The best slots of a search and their similarities, best first. */
interface Ranked {
  slots: Int32Array;
  scores: Float64Array;
}

/** What one search asked for and what the driver did (keyed by the search's own signal). */
interface SearchCall {
  probes: number | undefined;
  exact: boolean;
  used?: { lists: number; probes: number };
}

/** Filters matching fewer rows than this share (estimated by sampling) are evaluated before the scan. */
const PREFILTER_BELOW = 0.2;
const FILTER_SAMPLE = 256;

/**
 * The in-memory store's driver: vectors in one contiguous block of memory scanned exhaustively by
 * WebAssembly SIMD kernels (exact results, memory-bandwidth speed), optionally int8-quantised,
 * with the whole filter language evaluated on the chunks' metadata during the scan.
 */
class InMemoryDriver implements VectorDriver<FilterInput> {
  readonly specificationVersion = 'v2' as const;
  readonly name = 'memory';
  readonly capabilities: DriverCapabilities;
  readonly filterConvention = zerdaFilterConvention;

  readonly metric: DistanceMetric;
  readonly quantization: VectorQuantization;
  readonly kernel: 'wasm' | 'js';
  private readonly threads: ScanThreadHost | undefined;
  private readonly rescoreFactor: number;
  private readonly rescoreMinimum: number;
  private arena: VectorArena | undefined;
  readonly indexSetting: ResolvedIndexSetting;
  /** The IVF index, once trained (see `index`). */
  private ivf: IvfIndex | undefined;
  /**
   * The search whose scan is split over threads, while its workers scan. Until it is done, the
   * calls that touch the scan memory (searches, writes, close) wait for it, each in a loop that
   * ends right before its own synchronous work, so no two of them pass it together.
   */
  #scan: Promise<void> | undefined;
  /** Per-search options and outcome, found through the signal the store passes down. */
  readonly calls = new WeakMap<AbortSignal, SearchCall>();
  /**
   * The chunk in each slot; slots 0 .. count-1 are all in use (deletion compacts). Replaced whole
   * only by a restore into an empty store.
   */
  chunks: Chunk[] = [];
  /** The slot of each id; built on first use after a bulk restore, which then skips a map insert per row. */
  #slotsById: Map<string, number> | undefined = new Map();

  private get slots(): Map<string, number> {
    if (this.#slotsById === undefined) {
      const slots = new Map<string, number>();
      for (let slot = 0; slot < this.chunks.length; slot++) slots.set((this.chunks[slot] as Chunk).id, slot);
      this.#slotsById = slots;
    }
    return this.#slotsById;
  }

  constructor(settings: InMemoryVectorStoreSettings) {
    const { metric = 'cosine', quantization = 'int8', rescore = {}, kernel = 'auto' } = settings;
    if (metric !== 'cosine' && metric !== 'dot' && metric !== 'l2') {
      throw new InvalidArgumentError({
        argument: 'metric',
        value: metric,
        message: "expected 'cosine', 'dot' or 'l2'",
      });
    }
    if (quantization !== 'none' && quantization !== 'int8' && quantization !== 'int8-only') {
      throw new InvalidArgumentError({
        argument: 'quantization',
        value: quantization,
        message: "expected 'none', 'int8' or 'int8-only'",
      });
    }
    const { factor = 4, minimum = 100 } = rescore;
    if (!(factor >= 1) || !Number.isFinite(factor) || !isPositiveInteger(minimum)) {
      throw new InvalidArgumentError({
        argument: 'rescore',
        value: rescore,
        message: 'factor must be a finite number >= 1 and minimum a positive integer',
      });
    }
    this.metric = metric;
    this.quantization = quantization;
    this.rescoreFactor = factor;
    this.rescoreMinimum = minimum;
    this.kernel = resolveKernelKind(kernel);
    if (settings.threads !== undefined) {
      checkScanThreadHost(settings.threads, 'threads');
      if (this.kernel !== 'wasm') {
        throw new InvalidArgumentError({
          argument: 'threads',
          message: "scan threads need the WebAssembly kernels, and this store's are 'js'",
        });
      }
      if (!sharedKernelsSupported()) {
        throw new InvalidArgumentError({
          argument: 'threads',
          message: 'this runtime cannot share a WebAssembly memory between threads',
        });
      }
    }
    this.threads = settings.threads;
    this.indexSetting = resolveIndexSetting(settings.index);
    this.capabilities = Object.freeze({ metric, persistent: false, scoreConversion: 'similarity' });
  }

  get dimension(): number | undefined {
    return this.arena?.dimension;
  }

  get vectorBytes(): number {
    return (this.arena?.byteLength ?? 0) + (this.ivf?.byteLength ?? 0);
  }

  get bytesPerVector(): number | undefined {
    return this.arena?.bytesPerVector;
  }

  /** What the int8 scans use: the full scans of quantised rows, and an IVF index's list scans. */
  get int8Kernel(): InMemoryVectorStoreStats['int8Kernel'] {
    if (this.quantization === 'none' && this.indexSetting.type === 'exact') return undefined;
    return int8KernelFor(this.kernel);
  }

  // Every operation finishes without awaiting once it has started to change anything, so no
  // other call sees a batch half-written.
  async upsert(records: readonly VectorRecord[]): Promise<void> {
    while (this.#scan !== undefined) await this.#scan;
    const first = records[0];
    if (first === undefined) return;
    const arena = this.ensureArena(first.vector.length);
    let added = 0;
    for (const record of records) if (!this.slots.has(record.id)) added++;
    arena.ensureCapacity(this.chunks.length + added);
    for (const record of records) {
      const chunk = copyChunk(record);
      let slot = this.slots.get(chunk.id);
      const isNew = slot === undefined;
      if (slot === undefined) {
        slot = this.chunks.length;
        this.slots.set(chunk.id, slot);
        this.chunks.push(chunk);
      } else {
        this.chunks[slot] = chunk;
      }
      // Core has checked the vector; the scale normalises it for cosine (1 otherwise).
      arena.write(slot, record.vector, checkVector(record.vector, arena.dimension, this.metric) as number);
      // A trained index takes the row into its nearest list (no retraining: see `searchIndex`).
      this.ivf?.place(arena, slot, isNew);
    }
  }

  async query(vector: Float32Array, options: DriverQueryOptions<FilterInput>): Promise<DriverMatch[]> {
    while (this.#scan !== undefined) await this.#scan;
    // A bad filter fails before any work (FilterError says where).
    const predicate = options.filter === undefined ? undefined : this.compilePredicate(options.filter);
    const arena = this.arena;
    if (arena === undefined || this.chunks.length === 0) return [];
    // Checked, then written scaled straight into the scan memory: no copy of the query per search.
    const scale = checkVector(vector, arena.dimension, this.metric, 'refuse');
    if (typeof scale === 'string') throw new InvalidArgumentError({ argument: 'query', message: scale });
    const call = options.signal === undefined ? undefined : this.calls.get(options.signal);
    const ranked = this.searchSlots(arena, vector, scale, options.topK, predicate, call);
    if (!(ranked instanceof Promise)) return this.matches(ranked);
    const scan = ranked.then(ignore, ignore);
    this.#scan = scan;
    try {
      return this.matches(await ranked);
    } finally {
      if (this.#scan === scan) this.#scan = undefined;
    }
  }

  private matches({ slots, scores }: Ranked): DriverMatch[] {
    return Array.from(slots, (slot, index) => ({
      id: this.chunks[slot]!.id,
      score: scores[index]!,
      chunk: copyChunk(this.chunks[slot]!),
    }));
  }

  async get(ids: readonly string[]): Promise<Chunk[]> {
    return ids.flatMap((id) => {
      const slot = this.slots.get(id);
      return slot === undefined ? [] : [copyChunk(this.chunks[slot]!)];
    });
  }

  async count(): Promise<number> {
    return this.chunks.length;
  }

  async delete(ids: readonly string[]): Promise<number> {
    while (this.#scan !== undefined) await this.#scan;
    const arena = this.arena;
    let removed = 0;
    for (const id of ids) {
      const slot = this.slots.get(id);
      if (slot === undefined || arena === undefined) continue;
      // Move the last row into the hole, so rows 0 .. count-1 stay contiguous for the scan.
      const last = this.chunks.length - 1;
      const moved = this.chunks[last]!;
      this.ivf?.remove(slot);
      if (slot !== last) {
        arena.move(last, slot);
        this.ivf?.move(last, slot);
        this.chunks[slot] = moved;
        this.slots.set(moved.id, slot);
      }
      this.chunks.pop();
      this.slots.delete(id);
      removed++;
    }
    return removed;
  }

  /** Pages in id order (a cursor is the last id of the previous page), stable under writes between pages. */
  async list(options: DriverListOptions): Promise<DriverListPage> {
    const ids = [...this.slots.keys()].sort();
    let start = 0;
    if (options.cursor !== undefined) {
      const after = options.cursor;
      while (start < ids.length && ids[start]! <= after) start++;
    }
    const page = ids.slice(start, start + options.limit);
    const slots = page.map((id) => this.slots.get(id) as number);
    const chunks = slots.map((slot) => copyChunk(this.chunks[slot]!));
    const arena = this.arena;
    const vectors =
      options.includeVectors && arena
        ? slots.map((slot) => {
            const vector = new Float32Array(arena.dimension);
            arena.read(slot, vector);
            return vector;
          })
        : undefined;
    const last = page[page.length - 1];
    const more = start + page.length < ids.length && last !== undefined;
    return { chunks, ...(vectors ? { vectors } : {}), ...(more ? { nextCursor: last } : {}) };
  }

  /** The stored vectors (as stored: unit length for cosine) and chunks, for saving. */
  snapshot(): InMemoryStoreSnapshot | undefined {
    const arena = this.arena;
    if (arena === undefined) return undefined;
    const { dimension } = arena;
    const count = this.chunks.length;
    const vectors = new Float32Array(count * dimension);
    for (let slot = 0; slot < count; slot++)
      arena.read(slot, vectors.subarray(slot * dimension, (slot + 1) * dimension));
    const index = this.ivf?.snapshot(count);
    return {
      metric: this.metric,
      dimension,
      vectors,
      chunks: this.chunks.slice(),
      ...(index ? { index } : {}),
    };
  }

  /** The arena's regions copied into one image (one copy each), and the chunks in slot order. */
  snapshotArena(): InMemoryArenaSnapshot | undefined {
    const arena = this.arena;
    if (arena === undefined) return undefined;
    const count = this.chunks.length;
    const layout = {
      dimension: arena.dimension,
      count,
      stride: arena.stride,
      codeStride: arena.codeStride,
      quantization: this.quantization,
      metric: this.metric,
    };
    return {
      bytes: encodeArenaImage(layout, arena.regions(count), this.ivf?.snapshot(count)),
      chunks: this.chunks.slice(),
    };
  }

  /**
   * Fills an empty store from an arena image and its chunks (in slot order). When the image keeps
   * what this store keeps (the same quantisation, or 'int8' into 'none'), each region is copied
   * once into the scan memory; otherwise its vectors are written row by row (and quantised).
   */
  restoreArena({ bytes, chunks }: InMemoryArenaSnapshot, path: string): void {
    const image = decodeArenaImage(bytes, path);
    const { layout } = image;
    if (layout.metric !== this.metric) {
      throw new InvalidArgumentError({
        argument: 'snapshot',
        message: `the snapshot holds ${layout.metric} vectors, the store is ${this.metric}`,
      });
    }
    if (layout.count !== chunks.length) {
      throw new InvalidArgumentError({
        argument: 'chunks',
        message: `the snapshot holds ${layout.count} vectors and ${chunks.length} chunks were given`,
      });
    }
    const arena = this.ensureArena(layout.dimension);
    // Saved norms are those of what the saved arena kept: float32 rows, or codes times scale.
    const sameNorms = arena.keepsFloat32 === (layout.quantization !== 'int8-only');
    const hasCodes = layout.quantization !== 'none';
    if (sameNorms && (hasCodes || !arena.quantized)) {
      // An image read into the scan memory (`arenaImageTarget`) is taken where it lies; where it
      // cannot be, it is copied out first, since loading it would write over it.
      const inMemory = arena.holds(bytes);
      if (!(inMemory && arena.adoptImage(layout.count, image.regions))) {
        arena.loadRegions(
          layout.count,
          inMemory ? decodeArenaImage(bytes.slice(), path).regions : image.regions,
        );
      }
    } else {
      const { dimension } = layout;
      const vectors = arenaImageVectors(image);
      arena.ensureCapacity(layout.count);
      for (let slot = 0; slot < layout.count; slot++)
        arena.write(slot, vectors.subarray(slot * dimension, (slot + 1) * dimension));
    }
    // The store is empty: the chunks become its rows, and the id map is built when first needed.
    // One copy by the builtin: a push per row, in a loop run once per open, took tens of ms.
    this.chunks = chunks.slice();
    this.#slotsById = undefined;
    this.restoreIndex(image.index, arena, layout.count);
  }

  /** The saved IVF index (its lists' codes quantised again from the rows), unless this store scans exactly. */
  private restoreIndex(saved: IvfIndexSnapshot | undefined, arena: VectorArena, count: number): void {
    this.ivf =
      saved === undefined || this.indexSetting.type === 'exact' || count === 0
        ? undefined
        : IvfIndex.restore(saved, arena, count, this.kernel);
  }

  /** Fills an empty store from a snapshot; its vectors are already as stored (unit length for cosine). */
  restore({ dimension, vectors, chunks, index }: InMemoryStoreSnapshot): void {
    const arena = this.ensureArena(dimension);
    arena.ensureCapacity(chunks.length);
    // readStore has checked the chunks (ids unique) and the vectors (finite).
    chunks.forEach((chunk, slot) => {
      this.slots.set(chunk.id, slot);
      this.chunks.push(chunk);
      arena.write(slot, vectors.subarray(slot * dimension, (slot + 1) * dimension));
    });
    this.restoreIndex(index, arena, chunks.length);
  }

  ensureArena(dimension: number): VectorArena {
    this.arena ??= new VectorArena({
      dimension,
      quantized: this.quantization !== 'none',
      keepFloat32: this.quantization !== 'int8-only',
      kernel: this.kernel,
      threads: this.threads,
    });
    return this.arena;
  }

  get threadsState(): ScanThreadsState {
    return this.arena?.threads ?? unsplitScanThreadsState(this.threads?.threads);
  }

  /** Stops the scan workers; the store goes on working, scanning on the caller's thread. */
  async close(): Promise<void> {
    while (this.#scan !== undefined) await this.#scan;
    this.arena?.close();
  }

  /** The filter as a predicate on slots, or undefined when it matches everything (`{}`). */
  private compilePredicate(filter: FilterInput): ((slot: number) => boolean) | undefined {
    const node = parseFilter(filter);
    if (node.kind === 'and' && node.children.length === 0) return undefined;
    const matches = compileFilter(node);
    const chunks = this.chunks;
    return (slot) => matches(chunks[slot]!);
  }

  private idOfSlot(slot: number): string {
    return this.chunks[slot]!.id;
  }

  /**
   * The best `k` slots and their similarities, best first: over the rows a selective filter
   * matches (exact), over the rows of the nearest IVF lists (approximate; with a filter, the
   * lists widen until `k` rows pass or all are scanned), or over every row.
   */
  private searchSlots(
    arena: VectorArena,
    query: Float32Array,
    scale: number,
    k: number,
    predicate: ((slot: number) => boolean) | undefined,
    call: SearchCall | undefined,
  ): Ranked | Promise<Ranked> {
    const count = this.chunks.length;
    arena.setQuery(query, scale);
    // For a selective filter, only the matching rows, found first, are scanned (exactly).
    if (
      predicate !== undefined &&
      count > 4 * FILTER_SAMPLE &&
      sampleShare(predicate, count) < PREFILTER_BELOW
    ) {
      const rows = matchingRows(predicate, count);
      if (rows.length === 0) return { slots: new Int32Array(0), scores: new Float64Array(0) };
      return this.rankRows(arena, rows, k, undefined);
    }
    const ivf = call?.exact === true ? undefined : this.searchIndex();
    if (ivf === undefined) {
      // Every row: the one scan that may be split over threads, and so finish later.
      const full = this.quantization === 'none' ? arena.scanAll(count) : arena.scanAllQuantized(count);
      return full instanceof Promise
        ? full.then((scores) => this.rankRows(arena, undefined, k, predicate, undefined, scores))
        : this.rankRows(arena, undefined, k, predicate, undefined, full);
    }
    const wanted = Math.min(k, count);
    let probes = Math.min(call?.probes ?? this.indexSetting.probes ?? defaultProbes(ivf.lists), ivf.lists);
    for (;;) {
      const scanned = ivf.gather(query, scale, probes, this.metric);
      const rows = ivf.gatheredRows(scanned);
      const result = this.rankRows(arena, rows, k, predicate, {
        scores: ivf.gatheredScores(scanned),
        factor: ivf.gatheredScale,
      });
      if (result.slots.length >= wanted || probes >= ivf.lists) {
        if (call !== undefined) call.used = { lists: ivf.lists, probes };
        return result;
      }
      probes = Math.min(ivf.lists, probes * 4);
    }
  }

  /**
   * The IVF index to search with, trained first when due: once the store reaches the setting's
   * size, and again when it has grown to `RETRAIN_GROWTH` times the rows of the last training.
   * Training costs O(rows x lists x dimension); growing by a constant factor between trainings
   * keeps that amortised to O(lists x dimension) per added row, like an array doubling. Below
   * the size (after deletes) the exact scan is used, and the lists are kept up to date.
   */
  private searchIndex(): IvfIndex | undefined {
    const count = this.chunks.length;
    const { type, minRows } = this.indexSetting;
    if (type === 'exact' || count < minRows) return undefined;
    if (this.ivf === undefined || count >= RETRAIN_GROWTH * this.ivf.trainedRows) this.buildIndex();
    return this.ivf;
  }

  /** Trains the IVF index on the rows now stored (a no-op for an exact or empty store). */
  buildIndex(): void {
    const arena = this.arena;
    const count = this.chunks.length;
    if (this.indexSetting.type === 'exact' || arena === undefined || count === 0) return;
    this.ivf = IvfIndex.train(arena, count, this.indexSetting.lists ?? defaultLists(count), this.kernel);
  }

  /** The index as `stats()` reports it. */
  get indexStats(): InMemoryVectorStoreStats['index'] {
    const { type, minRows } = this.indexSetting;
    if (type === 'exact') return { type };
    const lists = this.ivf?.lists ?? this.indexSetting.lists;
    return {
      type,
      lists,
      probes: this.indexSetting.probes ?? (lists === undefined ? undefined : defaultProbes(lists)),
      trainedRows: this.ivf?.trainedRows ?? 0,
      minRows,
      bytes: this.ivf?.byteLength ?? 0,
    };
  }

  /**
   * The best `k` of `rows` (all rows when undefined) that `predicate` accepts. `scanned`: the
   * rows' int8 scores already computed (by the IVF index), times `factor` estimates of q·x.
   * `full`: the scan of every row already made (int8 estimates when quantised, else exact).
   */
  private rankRows(
    arena: VectorArena,
    rows: Int32Array | undefined,
    k: number,
    predicate: ((slot: number) => boolean) | undefined,
    scanned?: { scores: Float32Array; factor: number },
    full?: Float32Array,
  ): Ranked {
    const count = this.chunks.length;
    let accept =
      predicate === undefined || rows === undefined ? predicate : (index: number) => predicate(rows[index]!);
    const rowCount = rows?.length ?? count;

    // The rows scored exactly: all (or the filter's), or the int8 scan's shortlist.
    let candidates = rows;
    let exact: Float32Array;
    if (this.quantization !== 'none' || scanned !== undefined) {
      const approximate = scanned?.scores ?? full ?? arena.scanListQuantized(rows!, rowCount);
      this.toRankKeys(arena, approximate, rows, scanned?.factor ?? arena.quantizedQueryScale);
      const shortlist = Math.max(Math.ceil(this.rescoreFactor * k), this.rescoreMinimum);
      const { indices } = selectTopK(
        approximate,
        rowCount,
        shortlist,
        accept,
        (index) => this.idOfSlot(rows === undefined ? index : rows[index]!),
        arena.firstAtLeast(approximate),
      );
      candidates = rows === undefined ? indices : indices.map((index) => rows[index]!);
      accept = undefined;
      exact = arena.scanList(candidates, candidates.length);
    } else {
      exact = full ?? arena.scanList(rows!, rowCount);
    }
    this.toRankKeys(arena, exact, candidates, 1);
    // Equal scores rank by chunk id, as the retrievers' final sort does.
    const top = selectTopK(
      exact,
      exact.length,
      k,
      accept,
      (index) => this.idOfSlot(candidates === undefined ? index : candidates[index]!),
      arena.firstAtLeast(exact),
    );
    const slots = candidates === undefined ? top.indices : top.indices.map((index) => candidates[index]!);
    return this.toSimilarities(arena, slots, top.scores);
  }

  /**
   * For L2, turns dot products (times `factor`) into `q·x - |x|²/2`, which ranks as `-|q - x|²`
   * (|q|² is constant). Cosine and dot rank by the dot product itself.
   */
  private toRankKeys(
    arena: VectorArena,
    scores: Float32Array,
    rows: Int32Array | undefined,
    factor: number,
  ): void {
    if (this.metric === 'l2') arena.toL2Keys(scores, rows, factor);
  }

  /** Rank keys of the final hits as similarities (see `capabilities.scoreConversion`). */
  private toSimilarities(arena: VectorArena, slots: Int32Array, keys: Float64Array): Ranked {
    if (this.metric === 'dot') return { slots, scores: keys };
    if (this.metric === 'cosine') {
      // Rounding can take a unit vector's dot product a hair past ±1.
      return { slots, scores: keys.map((key) => Math.min(1, Math.max(-1, key))) };
    }
    // The expanded form cancels badly for near neighbours: recompute the few distances directly.
    const order = Array.from(slots, (slot) => ({
      slot,
      score: 1 / (1 + Math.sqrt(arena.squaredDistance(slot))),
    }));
    order.sort((a, b) => b.score - a.score);
    return {
      slots: Int32Array.from(order, (hit) => hit.slot),
      scores: Float64Array.from(order, (hit) => hit.score),
    };
  }
}

/**
 * Zerda's own vector database (`name: 'memory'`): exhaustive, exact search over vectors held in
 * memory (see the driver above), made into a store by core like every backend, plus stats and
 * save/load to a directory. Exhaustive search is the right tool up to a few hundred thousand
 * vectors: 100,000 x 384 scan in a few milliseconds, with no index to build and no recall loss.
 */
export class InMemoryVectorStore extends VectorStore<FilterInput> implements Deletable, Listable {
  declare delete: Deletable['delete'];
  declare list: Listable['list'];
  declare listRecords: Listable['listRecords'];
  readonly #driver: InMemoryDriver;

  constructor(settings: InMemoryVectorStoreSettings = {}) {
    const driver = new InMemoryDriver(settings);
    super(driver, settings);
    this.#driver = driver;
  }

  /** Sizes and settings, for monitoring and benchmarks. */
  stats(): InMemoryVectorStoreStats {
    return {
      count: this.#driver.chunks.length,
      dimension: this.dimension,
      metric: this.#driver.metric,
      quantization: this.#driver.quantization,
      kernel: this.#driver.kernel,
      int8Kernel: this.#driver.int8Kernel,
      vectorBytes: this.#driver.vectorBytes,
      bytesPerVector: this.#driver.bytesPerVector,
      threads: this.#driver.threadsState,
      index: this.#driver.indexStats,
    };
  }

  /**
   * As every store's `search`, plus the in-memory store's own options: `probes` (IVF lists to
   * scan) and `exact` (scan every row). A result found through the IVF index says so in
   * `approximate` (lists and probes used).
   */
  override async search(
    query: string | Float32Array | readonly number[],
    options: InMemorySearchOptions,
  ): Promise<InMemorySearchResult> {
    const { probes, exact, ...common } = options ?? ({} as InMemorySearchOptions);
    checkProbes(probes, 'probes');
    if (exact !== undefined && typeof exact !== 'boolean') {
      throw new InvalidArgumentError({ argument: 'exact', value: exact, message: 'expected a boolean' });
    }
    // An exact store with no IVF options to pass on: the plain path, with nothing made per search.
    if (this.#driver.indexSetting.type === 'exact') return super.search(query, common);
    // The driver learns this search's options, and reports what it did, through a signal of the
    // search's own (concurrent searches each have theirs), which follows the caller's.
    const controller = new AbortController();
    const given = common.signal;
    const forward = () => controller.abort(given?.reason);
    if (given?.aborted) forward();
    given?.addEventListener('abort', forward, { once: true });
    const call: SearchCall = { probes, exact: exact === true };
    this.#driver.calls.set(controller.signal, call);
    try {
      const result: InMemorySearchResult = await super.search(query, {
        ...common,
        signal: controller.signal,
      });
      if (call.used !== undefined) result.approximate = { index: 'ivf', ...call.used };
      return result;
    } finally {
      given?.removeEventListener('abort', forward);
    }
  }

  /**
   * Trains the IVF index now on the rows stored, rather than on the first search that needs it
   * (a no-op with `index: 'exact'`). Later adds and deletes keep it up to date.
   */
  buildIndex(): void {
    this.#driver.buildIndex();
  }

  /**
   * The stored vectors (as stored: unit length for cosine) and chunks in slot order, taken at the
   * call; what `saveInMemoryVectorStore` (`@zerda/core/node`) writes.
   */
  snapshot(): InMemoryStoreSnapshot | undefined {
    const dimension = this.dimension;
    if (dimension === undefined) return undefined;
    return (
      this.#driver.snapshot() ?? {
        metric: this.#driver.metric,
        dimension,
        vectors: new Float32Array(0),
        chunks: [],
      }
    );
  }

  /**
   * Fills this empty store from a snapshot of vectors as stored (unit length for cosine): no
   * re-validation, one copy into the scan memory. The fast way back for what `snapshot` gave.
   */
  restoreSnapshot(snapshot: InMemoryStoreSnapshot): void {
    if (this.#driver.chunks.length > 0) {
      throw new InvalidArgumentError({
        argument: 'store',
        message: 'a snapshot is restored into an empty store only',
      });
    }
    if (
      snapshot.metric !== this.#driver.metric ||
      (this.dimension !== undefined && snapshot.dimension !== this.dimension)
    ) {
      throw new InvalidArgumentError({
        argument: 'snapshot',
        message: `the snapshot holds ${snapshot.metric} vectors of ${snapshot.dimension} dimensions, the store is ${this.#driver.metric}${this.dimension === undefined ? '' : ` of ${this.dimension}`}`,
      });
    }
    this.#driver.restore(snapshot);
  }

  /**
   * The store's vectors as its memory holds them, in one blob (each region copied once: float32
   * rows, int8 codes and scales, norms, whatever the quantisation keeps), and its chunks in the
   * same order; what a collection saves. Undefined before the store knows its dimension.
   */
  snapshotArena(): InMemoryArenaSnapshot | undefined {
    return this.#driver.snapshotArena();
  }

  /**
   * Where to read a saved arena image of `byteLength` bytes so that `restoreArena` takes it in
   * place, with no copy of the vectors: the start of this empty store's scan memory. Undefined when
   * the store is not empty or does not know its dimension yet (then read it anywhere).
   */
  arenaImageTarget(byteLength: number): Uint8Array | undefined {
    const dimension = this.dimension;
    if (this.#driver.chunks.length > 0 || dimension === undefined) return undefined;
    return this.#driver.ensureArena(dimension).imageTarget(byteLength);
  }

  /**
   * Fills this empty store from what `snapshotArena` gave (its chunks in the same order): each
   * region copied once into the scan memory, nothing quantised or re-checked when the snapshot
   * keeps what this store keeps (the same quantisation, or 'int8' into 'none'), row by row
   * otherwise (where the int8 scans use relaxed SIMD, one pass over the codes also sums each
   * row's). A truncated or inconsistent blob is an IndexFormatError naming `path`.
   */
  restoreArena(snapshot: InMemoryArenaSnapshot, options: { path?: string } = {}): void {
    if (this.#driver.chunks.length > 0) {
      throw new InvalidArgumentError({
        argument: 'store',
        message: 'a snapshot is restored into an empty store only',
      });
    }
    const dimension = this.dimension;
    const path = options.path ?? 'in-memory vector store snapshot';
    // The dimension is in the blob's header: checked before anything is written.
    const saved = decodeArenaImage(snapshot.bytes, path).layout.dimension;
    if (dimension !== undefined && saved !== dimension) {
      throw new InvalidArgumentError({
        argument: 'snapshot',
        message: `the snapshot holds vectors of ${saved} dimensions, the store has ${dimension}`,
      });
    }
    this.#driver.restoreArena(snapshot, path);
  }

  /** A store holding a snapshot (vectors as stored), with these settings (metric and dimension from the snapshot). */
  static fromSnapshot(
    snapshot: InMemoryStoreSnapshot,
    settings: InMemoryVectorStoreSettings = {},
  ): InMemoryVectorStore {
    const store = new InMemoryVectorStore({
      ...settings,
      metric: snapshot.metric,
      dimension: snapshot.dimension,
    });
    store.#driver.restore(snapshot);
    return store;
  }
}

/** The in-memory store: `new InMemoryVectorStore(settings)`. */
export function createInMemoryVectorStore(settings?: InMemoryVectorStoreSettings): InMemoryVectorStore {
  return new InMemoryVectorStore(settings);
}

/** The share of rows a predicate accepts, estimated on evenly spread rows. */
function sampleShare(predicate: (slot: number) => boolean, count: number): number {
  let accepted = 0;
  for (let index = 0; index < FILTER_SAMPLE; index++) {
    if (predicate(Math.floor(((index + 0.5) * count) / FILTER_SAMPLE))) accepted++;
  }
  return accepted / FILTER_SAMPLE;
}

function matchingRows(predicate: (slot: number) => boolean, count: number): Int32Array {
  const rows = new Int32Array(count);
  let found = 0;
  for (let slot = 0; slot < count; slot++) if (predicate(slot)) rows[found++] = slot;
  return rows.slice(0, found);
}

/** A copy the caller may change without touching the stored chunk. */
function copyChunk(chunk: Chunk): Chunk {
  const copy: Chunk = { id: chunk.id, text: chunk.text };
  if (chunk.docId !== undefined) copy.docId = chunk.docId;
  if (chunk.metadata !== undefined) {
    const metadata: NonNullable<Chunk['metadata']> = {};
    for (const [key, value] of Object.entries(chunk.metadata))
      metadata[key] = Array.isArray(value) ? [...value] : value;
    copy.metadata = metadata;
  }
  return copy;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
