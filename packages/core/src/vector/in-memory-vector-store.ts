import {
  type ChunkProblem,
  ChunkValidationError,
  IndexFormatError,
  InvalidArgumentError,
  throwIfAborted,
} from '../errors/index.js';
import {
  compileFilter,
  type FilterConvention,
  type FilterInput,
  type FilterNode,
  parseFilter,
  zerdaFilterConvention,
} from '../filter/index.js';
import type { Chunk } from '../model/index.js';
import type { Embedder } from './embedder.js';
import { type KernelPreference, resolveKernelKind } from './kernels/kernels.js';
import { readStore, type StoreSnapshot, writeStore } from './store-files.js';
import {
  checkStoreSettings,
  checkVectorSearchOptions,
  embedChunksForStore,
  embedQueryForStore,
  prepareAddBatch,
} from './store-helpers.js';
import { selectTopK } from './top-k.js';
import { VectorArena } from './vector-arena.js';
import type {
  AddOptions,
  AddResult,
  DistanceMetric,
  VectorDatabase,
  VectorDatabaseCapabilities,
  VectorHit,
  VectorSearchOptions,
  VectorSearchResult,
} from './vector-database.js';
import { checkVector, isNumberArray, prepareQuery } from './vector-input.js';

/** How the in-memory store scans: exactly in float32, or in int8 first with exact re-scoring. */
export type VectorQuantization = 'none' | 'int8';

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
   * 'none' (default): exact float32 scan. 'int8': each vector is also kept as int8 codes with a
   * per-vector scale; a search scans the codes (a quarter of the memory traffic), then re-scores
   * the best `max(factor * topK, minimum)` candidates exactly in float32. Results are exact
   * unless a true neighbour falls outside the candidates. Memory: float32 plus one byte a value.
   */
  quantization?: VectorQuantization;
  /** Candidates re-scored after an int8 scan: `max(factor * topK, minimum)` (default 4 and 100). */
  rescore?: { factor?: number; minimum?: number };
  /**
   * The scan kernels: 'auto' (default) uses WebAssembly SIMD where the runtime has it and plain
   * JavaScript otherwise; 'wasm' requires SIMD; 'js' forces the fallback.
   */
  kernel?: KernelPreference;
}

/** The in-memory store's native filter option: Zerda's filter language, evaluated in full. */
export interface InMemoryFilterOptions {
  /** A filter in Zerda's language (or a tree from `parseFilter`), applied while scanning. */
  filter: FilterInput | FilterNode;
}

export type InMemorySearchOptions = VectorSearchOptions & Partial<InMemoryFilterOptions>;

/** Sizes and settings of a store, for monitoring and benchmarks. */
export interface InMemoryVectorStoreStats {
  count: number;
  dimension: number | undefined;
  metric: DistanceMetric;
  quantization: VectorQuantization;
  /** Which kernels scan: 'wasm' (WebAssembly SIMD) or 'js'. */
  kernel: 'wasm' | 'js';
  /** Bytes held for vectors, codes, norms and scan scratch (chunks not included). */
  vectorBytes: number;
}

const scoreConversions: Record<DistanceMetric, string> = {
  cosine: 'cosine similarity, 1 - d for cosine distance d (vectors are normalised when added)',
  dot: 'the inner product itself (-d for inner-product distance d)',
  l2: '1 / (1 + d) for the Euclidean (not squared) distance d',
};

/** Filters matching fewer rows than this share (estimated by sampling) are evaluated before the scan. */
const PREFILTER_BELOW = 0.2;
const FILTER_SAMPLE = 256;

/**
 * Zerda's own vector database: vectors in one contiguous block of memory scanned exhaustively by
 * WebAssembly SIMD kernels (exact results, memory-bandwidth speed), optionally int8-quantised,
 * with the whole filter language evaluated on the chunks' metadata during the scan, and
 * save/load to a directory. Implements `VectorDatabase` v1 (`name: 'memory'`).
 *
 * Exhaustive search is the right tool up to a few hundred thousand vectors: 100,000 x 384 scan in
 * a few milliseconds, with no index to build and no recall loss.
 */
export class InMemoryVectorStore implements VectorDatabase<InMemoryFilterOptions> {
  readonly specificationVersion = 'v1' as const;
  readonly name = 'memory';
  readonly capabilities: VectorDatabaseCapabilities;
  readonly filterConvention: FilterConvention = zerdaFilterConvention;

  private readonly embedder: Embedder | undefined;
  private readonly metric: DistanceMetric;
  private readonly quantization: VectorQuantization;
  private readonly rescoreFactor: number;
  private readonly rescoreMinimum: number;
  private readonly kernel: 'wasm' | 'js';
  private configuredDimension: number | undefined;
  private arena: VectorArena | undefined;
  /** The chunk in each slot; slots 0 .. count-1 are all in use (deletion compacts). */
  private readonly chunks: Chunk[] = [];
  private readonly slots = new Map<string, number>();

  constructor(settings: InMemoryVectorStoreSettings = {}) {
    const {
      embedder,
      dimension,
      metric = 'cosine',
      quantization = 'none',
      rescore = {},
      kernel = 'auto',
    } = settings;
    checkStoreSettings({ metric, dimension, embedder });
    if (quantization !== 'none' && quantization !== 'int8') {
      throw new InvalidArgumentError({
        argument: 'quantization',
        value: quantization,
        message: "expected 'none' or 'int8'",
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
    this.embedder = embedder;
    this.metric = metric;
    this.quantization = quantization;
    this.rescoreFactor = factor;
    this.rescoreMinimum = minimum;
    this.kernel = resolveKernelKind(kernel);
    this.configuredDimension = dimension ?? embedder?.dimension;
    this.capabilities = Object.freeze({
      metric,
      persistent: false,
      deletion: true,
      scoreConversion: scoreConversions[metric],
    });
  }

  /** Vector dimension, once known (from the settings, the embedder or the first add). */
  get dimension(): number | undefined {
    return this.configuredDimension;
  }

  /**
   * Inserts chunks, or replaces those whose id is already stored (in place). The whole batch is
   * checked first (chunks, vector count, dimension, finite values); any problem throws before
   * anything is written.
   */
  async add(input: readonly Chunk[], options: AddOptions = {}): Promise<AddResult> {
    const { embeddings, signal, onProgress } = options;
    throwIfAborted(signal);
    const chunks = prepareAddBatch(input, embeddings);
    if (chunks.length === 0) return { ids: [] };
    const vectors = embeddings ?? (await embedChunksForStore(this.embedder, chunks, signal));
    const { dimension, scales } = this.checkBatch(chunks, vectors);
    throwIfAborted(signal);

    // From here on nothing awaits, so no other call sees the batch half-written.
    const arena = this.ensureArena(dimension);
    let added = 0;
    for (const chunk of chunks) if (!this.slots.has(chunk.id)) added++;
    arena.ensureCapacity(this.chunks.length + added);
    chunks.forEach((chunk, index) => {
      let slot = this.slots.get(chunk.id);
      if (slot === undefined) {
        slot = this.chunks.length;
        this.slots.set(chunk.id, slot);
        this.chunks.push(chunk);
      } else {
        this.chunks[slot] = chunk;
      }
      arena.write(slot, vectors[index] as ArrayLike<number>, scales[index]);
    });
    onProgress?.({ written: chunks.length, total: chunks.length });
    return { ids: chunks.map((chunk) => chunk.id) };
  }

  /**
   * The `topK` chunks most similar to the query (a text, embedded by the store's embedder, or a
   * vector), best first, among those matching `filter`. Ties keep insertion order only until a
   * deletion moves chunks.
   */
  async search(
    query: string | Float32Array | readonly number[],
    options: InMemorySearchOptions,
  ): Promise<VectorSearchResult> {
    const { topK, scoreThreshold, signal, filter } = checkVectorSearchOptions(options);
    throwIfAborted(signal);
    // A bad filter fails before any work (FilterError says where).
    const predicate = filter === undefined ? undefined : this.compilePredicate(filter);
    const vector = typeof query === 'string' ? await embedQueryForStore(this.embedder, query, signal) : query;
    throwIfAborted(signal);
    const arena = this.arena;
    const dimension = this.configuredDimension;
    if (dimension === undefined) return { hits: [] };
    const prepared = prepareQuery(vector, dimension, this.metric);
    if (typeof prepared === 'string') {
      throw new InvalidArgumentError({
        argument: typeof query === 'string' ? 'embedder' : 'query',
        value: typeof query === 'string' ? query : undefined,
        message: typeof query === 'string' ? `the query embedding is unusable: ${prepared}` : prepared,
      });
    }
    if (arena === undefined || this.chunks.length === 0) return { hits: [] };

    const { slots, scores } = this.searchSlots(arena, prepared, topK, predicate);
    const hits: VectorHit[] = [];
    slots.forEach((slot, index) => {
      const score = scores[index]!;
      if (scoreThreshold !== undefined && score < scoreThreshold) return;
      hits.push({ chunk: copyChunk(this.chunks[slot]!), score });
    });
    return { hits };
  }

  /** Removes chunks by id (unknown ids are ignored); returns how many existed. */
  async delete(ids: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number> {
    throwIfAborted(options.signal);
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
      throw new InvalidArgumentError({
        argument: 'ids',
        value: ids,
        message: 'expected an array of strings',
      });
    }
    const arena = this.arena;
    let removed = 0;
    for (const id of ids) {
      const slot = this.slots.get(id);
      if (slot === undefined || arena === undefined) continue;
      // Move the last row into the hole, so rows 0 .. count-1 stay contiguous for the scan.
      const last = this.chunks.length - 1;
      const moved = this.chunks[last]!;
      if (slot !== last) {
        arena.move(last, slot);
        this.chunks[slot] = moved;
        this.slots.set(moved.id, slot);
      }
      this.chunks.pop();
      this.slots.delete(id);
      removed++;
    }
    return removed;
  }

  async count(options: { signal?: AbortSignal } = {}): Promise<number> {
    throwIfAborted(options.signal);
    return this.chunks.length;
  }

  /** Sizes and settings, for monitoring and benchmarks. */
  stats(): InMemoryVectorStoreStats {
    return {
      count: this.chunks.length,
      dimension: this.configuredDimension,
      metric: this.metric,
      quantization: this.quantization,
      kernel: this.kernel,
      vectorBytes: this.arena?.byteLength ?? 0,
    };
  }

  /**
   * Saves the store to `directory` (created if needed): a versioned binary vectors file and a
   * JSON manifest with the chunks. Atomic: a crash leaves the previous save or this one.
   * Taken as a snapshot at the call, so later writes do not leak into it.
   */
  async save(directory: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    throwIfAborted(options.signal);
    const dimension = this.configuredDimension;
    if (dimension === undefined) {
      throw new InvalidArgumentError({
        argument: 'store',
        message:
          'an empty store of unknown dimension has nothing to save; set `dimension` or add vectors first',
      });
    }
    const count = this.chunks.length;
    const vectors = new Float32Array(count * dimension);
    for (let slot = 0; slot < count; slot++) {
      this.arena!.read(slot, vectors.subarray(slot * dimension, (slot + 1) * dimension));
    }
    const snapshot: StoreSnapshot = { metric: this.metric, dimension, vectors, chunks: this.chunks.slice() };
    await writeStore(directory, snapshot, options.signal);
  }

  /**
   * Loads a store saved by `save`. The metric and dimension come from the files; settings that
   * contradict them (metric, dimension, the embedder's dimension) are refused with an
   * IndexFormatError, as are corrupt, truncated or mismatched files. Quantisation and kernel
   * may differ from the saved store's.
   */
  static async load(
    directory: string,
    settings: InMemoryVectorStoreSettings = {},
    options: { signal?: AbortSignal } = {},
  ): Promise<InMemoryVectorStore> {
    const snapshot = await readStore(directory, options.signal);
    const path = directory;
    if (settings.metric !== undefined && settings.metric !== snapshot.metric) {
      throw new IndexFormatError({
        message: `The saved store uses the ${snapshot.metric} metric, the settings ask for ${settings.metric}`,
        path,
      });
    }
    const expected = settings.dimension ?? settings.embedder?.dimension;
    if (expected !== undefined && expected !== snapshot.dimension) {
      throw new IndexFormatError({
        message: `The saved store has dimension ${snapshot.dimension}, the settings or embedder ${expected}`,
        path,
      });
    }
    const store = new InMemoryVectorStore({
      ...settings,
      metric: snapshot.metric,
      dimension: snapshot.dimension,
    });
    store.restore(snapshot);
    return store;
  }

  /** Fills an empty store from a snapshot; its vectors are already as stored (unit length for cosine). */
  private restore({ dimension, vectors, chunks }: StoreSnapshot): void {
    const arena = this.ensureArena(dimension);
    arena.ensureCapacity(chunks.length);
    // readStore has checked the chunks (ids unique) and the vectors (finite).
    chunks.forEach((chunk, slot) => {
      this.slots.set(chunk.id, slot);
      this.chunks.push(chunk);
      arena.write(slot, vectors.subarray(slot * dimension, (slot + 1) * dimension));
    });
  }

  private ensureArena(dimension: number): VectorArena {
    this.arena ??= new VectorArena({
      dimension,
      quantized: this.quantization === 'int8',
      kernel: this.kernel,
    });
    this.configuredDimension = dimension;
    return this.arena;
  }

  /**
   * Checks every vector of the batch (without copying: a large batch is copied once, into the
   * store) and returns the dimension and each vector's scale, or throws one ChunkValidationError
   * listing every problem.
   */
  private checkBatch(
    chunks: Chunk[],
    vectors: ReadonlyArray<unknown>,
  ): { dimension: number; scales: Float64Array } {
    const first = vectors[0];
    // The first vectors added fix the dimension of a store that was not told it.
    const dimension =
      this.configuredDimension ?? (isNumberArray(first) && first.length > 0 ? first.length : undefined);
    const scales = new Float64Array(chunks.length);
    const problems: ChunkProblem[] = [];
    chunks.forEach((chunk, index) => {
      const scale =
        dimension === undefined
          ? `the dimension cannot be taken from the first vector (${isNumberArray(first) ? 'it is empty' : 'it is not an array of numbers'})`
          : checkVector(vectors[index], dimension, this.metric);
      if (typeof scale === 'string') problems.push({ index, id: chunk.id, reason: scale });
      else scales[index] = scale;
    });
    if (problems.length > 0 || dimension === undefined) throw new ChunkValidationError({ problems });
    return { dimension, scales };
  }

  /** The filter as a predicate on slots, or undefined when it matches everything (`{}`). */
  private compilePredicate(filter: FilterInput | FilterNode): ((slot: number) => boolean) | undefined {
    const node = parseFilter(filter);
    if (node.kind === 'and' && node.children.length === 0) return undefined;
    const matches = compileFilter(node);
    const chunks = this.chunks;
    return (slot) => matches(chunks[slot]!);
  }

  /** The best `k` slots and their similarities, best first. */
  private searchSlots(
    arena: VectorArena,
    query: Float32Array,
    k: number,
    predicate: ((slot: number) => boolean) | undefined,
  ): { slots: Int32Array; scores: Float64Array } {
    const count = this.chunks.length;
    arena.setQuery(query);
    // Which rows to scan: all of them (a filter is then asked only about rows that would enter
    // the top k), or, for a selective filter, only the matching rows, found first.
    let rows: Int32Array | undefined;
    let accept = predicate;
    if (
      predicate !== undefined &&
      count > 4 * FILTER_SAMPLE &&
      sampleShare(predicate, count) < PREFILTER_BELOW
    ) {
      rows = matchingRows(predicate, count);
      accept = undefined;
      if (rows.length === 0) return { slots: new Int32Array(0), scores: new Float64Array(0) };
    }
    const scanned = rows?.length ?? count;

    // The rows scored exactly: all (or the filter's), or the int8 scan's shortlist.
    let candidates = rows;
    let exact: Float32Array;
    if (this.quantization === 'int8') {
      const approximate =
        rows === undefined ? arena.scanAllQuantized(scanned) : arena.scanListQuantized(rows, scanned);
      this.toRankKeys(arena, approximate, rows, arena.quantizedQueryScale);
      const shortlist = Math.max(Math.ceil(this.rescoreFactor * k), this.rescoreMinimum);
      const { indices } = selectTopK(approximate, scanned, shortlist, accept);
      candidates = rows === undefined ? indices : indices.map((index) => rows[index]!);
      accept = undefined;
      exact = arena.scanList(candidates, candidates.length);
    } else {
      exact = rows === undefined ? arena.scanAll(scanned) : arena.scanList(rows, scanned);
    }
    this.toRankKeys(arena, exact, candidates, 1);
    const top = selectTopK(exact, exact.length, k, accept);
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
  private toSimilarities(
    arena: VectorArena,
    slots: Int32Array,
    keys: Float64Array,
  ): { slots: Int32Array; scores: Float64Array } {
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

/** `new InMemoryVectorStore(settings)`. */
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
