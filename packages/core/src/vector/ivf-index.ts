import { InvalidArgumentError } from '../errors/index.js';
import type { DistanceMetric } from './driver.js';
import { createScanKernels, LinearMemory, type ScanKernels } from './kernels/kernels.js';
import { quantize, quantizeQuery, queryCodesBytes, type VectorArena } from './vector-arena.js';

/**
 * An inverted-file (IVF) index over the in-memory store's rows: k-means centroids, and for each
 * centroid the list of rows nearest to it. A query scores the centroids, takes the `probes` best
 * lists and the store scans only their rows (int8 codes, then float32 re-scoring, as an exact
 * scan does). Runs on the same scan kernels as the store (WebAssembly SIMD or JavaScript).
 */
export interface IvfIndexSettings {
  type: 'ivf';
  /** Centroids (inverted lists). Default: about the square root of the row count at training. */
  lists?: number;
  /** Lists scanned per query. Default: `defaultProbes(lists)`. */
  probes?: number;
}

/**
 * How the in-memory store searches: 'exact' scans every row; an IVF setting scans the rows of
 * the nearest lists (approximate) once the store holds `IVF_MIN_ROWS` rows; 'auto' is exact up to
 * `AUTO_IVF_ROWS` rows and IVF with default settings from there. The default is 'exact': results
 * are approximate, and a search may pause to train, only where the application asked for it.
 */
export type VectorIndexSetting = 'auto' | 'exact' | IvfIndexSettings;

/** Where 'auto' switches from an exact scan to IVF (an int8 scan of this many 384-d rows takes a few ms). */
export const AUTO_IVF_ROWS = 200_000;
/** Below this an exact scan costs about what scoring the centroids would: IVF waits. */
export const IVF_MIN_ROWS = 1_000;
/** The index is trained again once the store holds this many times the rows it was trained on. */
export const RETRAIN_GROWTH = 4;
const TRAIN_ITERATIONS = 8;
/** k-means runs on a sample of this many rows per centroid (the rest are only assigned). */
const SAMPLE_PER_LIST = 32;
const MAX_LISTS = 65_536;

/** The index settings a store runs with: whether and from which size IVF is used, and its sizes. */
export interface ResolvedIndexSetting {
  type: 'exact' | 'ivf';
  /** Rows from which IVF is trained and used. */
  minRows: number;
  lists: number | undefined;
  probes: number | undefined;
}

/** Checks the store's `index` setting; a bad one is an InvalidArgumentError naming the option. */
export function resolveIndexSetting(setting: unknown = 'exact'): ResolvedIndexSetting {
  if (setting === 'exact') return { type: 'exact', minRows: Infinity, lists: undefined, probes: undefined };
  if (setting === 'auto') return { type: 'ivf', minRows: AUTO_IVF_ROWS, lists: undefined, probes: undefined };
  if (setting === null || typeof setting !== 'object' || (setting as { type?: unknown }).type !== 'ivf') {
    throw new InvalidArgumentError({
      argument: 'index',
      value: setting,
      message: "expected 'auto', 'exact' or { type: 'ivf', lists?, probes? }",
    });
  }
  const { lists, probes, ...rest } = setting as IvfIndexSettings;
  const unknown = Object.keys(rest).find((key) => key !== 'type');
  if (unknown !== undefined) {
    throw new InvalidArgumentError({
      argument: `index.${unknown}`,
      value: (rest as Record<string, unknown>)[unknown],
      message: 'the IVF index takes lists and probes only',
    });
  }
  if (lists !== undefined && !(isPositiveInteger(lists) && lists <= MAX_LISTS)) {
    throw new InvalidArgumentError({
      argument: 'index.lists',
      value: lists,
      message: `expected a positive integer up to ${MAX_LISTS}`,
    });
  }
  checkProbes(probes, 'index.probes');
  return { type: 'ivf', minRows: Math.max(IVF_MIN_ROWS, lists ?? 0), lists, probes };
}

export function checkProbes(probes: unknown, argument: string): asserts probes is number | undefined {
  if (probes !== undefined && !isPositiveInteger(probes)) {
    throw new InvalidArgumentError({ argument, value: probes, message: 'expected a positive integer' });
  }
}

/** Lists for `rows` rows: about √rows, so centroid scoring and list scanning cost alike. */
export function defaultLists(rows: number): number {
  return Math.max(8, Math.min(MAX_LISTS, Math.round(Math.sqrt(rows))));
}

/**
 * Lists probed by default: about √lists (a shrinking share as the store grows: 32 of 1,000 lists
 * at a million rows), never fewer than 8. On the bench's clustered vectors that gives recall@10
 * of 0.99 or more at 100,000 and 1,000,000 rows (`pnpm bench --suite ann` sweeps the others).
 */
export function defaultProbes(lists: number): number {
  return Math.min(lists, Math.max(8, Math.round(Math.sqrt(lists))));
}

/** What a saved index holds: its centroids and each row's list, in slot order. */
export interface IvfIndexSnapshot {
  /** lists x dimension float32 values. */
  centroids: Float32Array;
  /** The list of each row, rows 0 .. count-1. */
  assignments: Int32Array;
  /** Rows the centroids were trained on (retraining waits for `RETRAIN_GROWTH` times as many). */
  trainedRows: number;
}

/**
 * The index proper. Each list keeps, besides its row numbers, its rows' int8 codes and scales
 * contiguously (as FAISS's inverted lists do), in a linear memory of its own: a probed list is
 * scanned by the contiguous kernel at memory speed, where gathering rows scattered through the
 * store's memory measured 10 to 50 times slower per row. The codes are the index's own
 * quantisation of the stored vectors (codeStride + 4 bytes a row, and 4 more for the code sums
 * of the relaxed-SIMD scan where it runs), so the store's quantisation setting does not matter
 * to it; the store re-scores the best candidates exactly as usual. The query is quantised as the
 * store's scans quantise it (`quantizeQuery`).
 *
 * Memory: the centroids, the query, then list blocks (codes, then scales, then code sums when
 * relaxed, each list with room to grow) allocated upwards. A full list moves to a block twice its
 * size at the top; the hole it leaves is reclaimed by compacting once holes make up half the
 * blocks.
 */
export class IvfIndex {
  readonly dimension: number;
  readonly lists: number;
  /** Rows when the centroids were trained. */
  readonly trainedRows: number;
  private readonly stride: number;
  private readonly codeStride: number;
  /** Whether the lists are scanned with relaxed SIMD's dot product (and keep their rows' code sums). */
  private readonly relaxed: boolean;
  /** Bytes a row takes in its list's block: codes, scale, and code sum when relaxed. */
  private readonly rowBytes: number;
  private readonly kernel: 'wasm' | 'js';
  private memory: LinearMemory;
  private kernels: ScanKernels;
  private viewBuffer: ArrayBuffer | undefined;
  private f32 = new Float32Array(0);
  private i8 = new Int8Array(0);
  private i16 = new Int16Array(0);
  // Fixed regions (byte offsets): centroids at 0, the query in float32 and as the int8 kernels
  // read its codes, one score per centroid; list blocks from `blocksStart` up to `top`.
  private readonly queryAt: number;
  private readonly queryCodesAt: number;
  private readonly centroidScoresAt: number;
  private readonly blocksStart: number;
  private top: number;
  private deadBytes = 0;
  /** Where each list's block starts, and how many rows it has room for. */
  private readonly blockAt: Int32Array;
  private readonly capacities: Int32Array;
  private readonly sizes: Int32Array;
  /** Where the scores of the probed lists' rows go, and for how many rows. */
  private outAt = 0;
  private outCapacity = 0;
  /** Half the squared norm of each centroid: `q·c - |c|²/2` ranks centroids by distance to q. */
  private readonly halfNorms: Float64Array;
  private readonly members: Int32Array[];
  /** For each row, its list and its position in that list (for O(1) removal). */
  private listOf = new Int32Array(0);
  private positionOf = new Int32Array(0);
  /** Scale of the query's int8 codes (the scan's scores times it estimate q·x). */
  private queryScale = 0;
  // Query scratch, reused: the rows gathered and the best lists (a min-heap).
  private candidates = new Int32Array(0);
  private readonly heapKeys: Float64Array;
  private readonly heapLists: Int32Array;

  private constructor(
    dimension: number,
    centroids: Float32Array,
    trainedRows: number,
    kernel: 'wasm' | 'js',
  ) {
    this.dimension = dimension;
    this.stride = Math.ceil(dimension / 4) * 4;
    this.codeStride = Math.ceil(dimension / 16) * 16;
    this.lists = centroids.length / dimension;
    this.trainedRows = trainedRows;
    this.kernel = kernel;
    this.queryAt = this.lists * this.stride * 4;
    this.queryCodesAt = this.queryAt + this.stride * 4;
    this.centroidScoresAt = this.queryCodesAt + queryCodesBytes(this.codeStride);
    this.blocksStart = align16(this.centroidScoresAt + this.lists * 4);
    this.top = this.blocksStart;
    this.memory = new LinearMemory(kernel, this.blocksStart);
    this.kernels = createScanKernels(this.memory);
    this.relaxed = this.kernels.codeSums !== undefined;
    this.rowBytes = this.codeStride + 4 + (this.relaxed ? 4 : 0);
    this.refreshViews();
    this.halfNorms = new Float64Array(this.lists);
    for (let list = 0; list < this.lists; list++) {
      let norm = 0;
      for (let j = 0; j < dimension; j++) {
        const value = centroids[list * dimension + j]!;
        this.f32[list * this.stride + j] = value;
        norm += value * value;
      }
      this.halfNorms[list] = norm / 2;
    }
    this.blockAt = new Int32Array(this.lists);
    this.capacities = new Int32Array(this.lists);
    this.sizes = new Int32Array(this.lists);
    this.members = Array.from({ length: this.lists }, () => new Int32Array(0));
    this.heapKeys = new Float64Array(this.lists);
    this.heapLists = new Int32Array(this.lists);
  }

  /**
   * Trains `lists` centroids by k-means (a fixed number of iterations, started from evenly spread
   * rows, so the same rows give the same index) on a sample of the arena's rows 0 .. count-1,
   * then puts every row in the list of its nearest centroid. Cost: O(count x lists x dimension).
   */
  static train(arena: VectorArena, count: number, lists: number, kernel: 'wasm' | 'js'): IvfIndex {
    const { dimension } = arena;
    const listCount = Math.max(1, Math.min(lists, count));
    const sampleSize = Math.min(count, listCount * SAMPLE_PER_LIST);
    const sample = new Float32Array(sampleSize * dimension);
    for (let index = 0; index < sampleSize; index++) {
      const slot = Math.floor(((index + 0.5) * count) / sampleSize);
      arena.read(slot, sample.subarray(index * dimension, (index + 1) * dimension));
    }
    // Initial centroids: sample points spread evenly through the sample.
    let centroids = new Float32Array(listCount * dimension);
    for (let list = 0; list < listCount; list++) {
      const from = Math.floor(((list + 0.5) * sampleSize) / listCount) * dimension;
      centroids.set(sample.subarray(from, from + dimension), list * dimension);
    }
    const assigned = new Int32Array(sampleSize);
    const sums = new Float64Array(listCount * dimension);
    const counts = new Int32Array(listCount);
    for (let iteration = 0; iteration < TRAIN_ITERATIONS; iteration++) {
      const index = new IvfIndex(dimension, centroids, count, kernel);
      for (let point = 0; point < sampleSize; point++)
        assigned[point] = index.nearest(sample, point * dimension);
      sums.fill(0);
      counts.fill(0);
      for (let point = 0; point < sampleSize; point++) {
        const list = assigned[point]!;
        counts[list]!++;
        const from = point * dimension;
        const to = list * dimension;
        for (let j = 0; j < dimension; j++) sums[to + j]! += sample[from + j]!;
      }
      const next = new Float32Array(listCount * dimension);
      for (let list = 0; list < listCount; list++) {
        const members = counts[list]!;
        if (members > 0) {
          for (let j = 0; j < dimension; j++)
            next[list * dimension + j] = sums[list * dimension + j]! / members;
        } else {
          // An empty list takes over a point of the largest list, which is split between them.
          let largest = 0;
          for (let other = 1; other < listCount; other++)
            if (counts[other]! > counts[largest]!) largest = other;
          let donor = 0;
          while (assigned[donor] !== largest) donor++;
          assigned[donor] = list;
          counts[largest]!--;
          counts[list] = 1;
          next.set(sample.subarray(donor * dimension, (donor + 1) * dimension), list * dimension);
        }
      }
      centroids = next;
    }
    const index = new IvfIndex(dimension, centroids, count, kernel);
    const assignments = new Int32Array(count);
    const query = index.queryView();
    for (let slot = 0; slot < count; slot++) {
      arena.read(slot, query);
      assignments[slot] = index.nearestToQuery();
    }
    index.fill(arena, count, assignments);
    return index;
  }

  /** An index from its saved centroids and row lists (checked by the caller), codes taken from the arena. */
  static restore(
    snapshot: IvfIndexSnapshot,
    arena: VectorArena,
    count: number,
    kernel: 'wasm' | 'js',
  ): IvfIndex {
    const index = new IvfIndex(arena.dimension, snapshot.centroids, snapshot.trainedRows, kernel);
    index.fill(arena, count, snapshot.assignments);
    return index;
  }

  /** The centroids and the rows' lists (copies), for saving. */
  snapshot(count: number): IvfIndexSnapshot {
    this.refreshViews();
    const centroids = new Float32Array(this.lists * this.dimension);
    for (let list = 0; list < this.lists; list++) {
      centroids.set(
        this.f32.subarray(list * this.stride, list * this.stride + this.dimension),
        list * this.dimension,
      );
    }
    return { centroids, assignments: this.listOf.slice(0, count), trainedRows: this.trainedRows };
  }

  /** Bytes held: the linear memory (centroids, codes, scratch) and the row lists. */
  get byteLength(): number {
    let members = 0;
    for (const list of this.members) members += list.byteLength;
    return (
      this.memory.byteLength +
      members +
      this.listOf.byteLength +
      this.positionOf.byteLength +
      this.candidates.byteLength +
      this.lists * (8 + 8 + 4 + 4 + 4 + 4)
    );
  }

  /** Adds row `slot` (new, or rewritten: then it leaves its old list first) from the arena. */
  place(arena: VectorArena, slot: number, isNew: boolean): void {
    if (!isNew) this.remove(slot);
    this.ensureRows(slot + 1);
    arena.read(slot, this.queryView());
    this.append(slot, this.nearestToQuery());
  }

  /** Takes row `slot` out of its list: the list's last row takes its place (codes and all). */
  remove(slot: number): void {
    const list = this.listOf[slot]!;
    const last = --this.sizes[list]!;
    const position = this.positionOf[slot]!;
    if (position === last) return;
    const members = this.members[list]!;
    const moved = members[last]!;
    members[position] = moved;
    this.positionOf[moved] = position;
    const { codeStride } = this;
    const codes = this.blockAt[list]!;
    this.i8.copyWithin(
      codes + position * codeStride,
      codes + last * codeStride,
      codes + (last + 1) * codeStride,
    );
    const scales = this.scalesAt(list) / 4;
    this.f32[scales + position] = this.f32[scales + last]!;
    if (this.relaxed) {
      const sums = this.sumsAt(list);
      this.i8.copyWithin(sums + position * 4, sums + last * 4, sums + (last + 1) * 4);
    }
  }

  /** Row `from` now lives at `to` (the store filled a deleted row's hole with its last row). */
  move(from: number, to: number): void {
    if (from === to) return;
    const list = this.listOf[from]!;
    const position = this.positionOf[from]!;
    this.members[list]![position] = to;
    this.listOf[to] = list;
    this.positionOf[to] = position;
  }

  /**
   * Scans the `probes` lists whose centroids are nearest the query (`query` times `scale`, as
   * the store holds it) with the int8 kernel; returns how many rows were scanned. Their slots
   * are `gatheredRows(n)` and their scores `gatheredScores(n)`, valid until the next call, in
   * units of `gatheredScale` (times it, they estimate q·x). Cosine and L2 rank centroids by
   * distance (`q·c - |c|²/2`), dot by inner product.
   */
  gather(query: ArrayLike<number>, scale: number, probes: number, metric: DistanceMetric): number {
    this.refreshViews();
    const { dimension, lists, heapKeys, heapLists, halfNorms } = this;
    let f32 = this.f32;
    const at = this.queryAt / 4;
    for (let j = 0; j < dimension; j++) f32[at + j] = query[j]! * scale;
    this.queryScale = quantizeQuery(
      f32,
      at,
      dimension,
      this.codeStride,
      this.queryCodesAt,
      this.i16,
      this.relaxed ? this.i8 : undefined,
    );
    this.kernels.dotF32All(this.queryAt, 0, lists, this.stride, this.centroidScoresAt);
    const take = Math.min(probes, lists);
    const scores = this.centroidScoresAt / 4;
    const bias = metric === 'dot' ? 0 : 1;
    let size = 0;
    for (let list = 0; list < lists; list++) {
      const key = f32[scores + list]! - bias * halfNorms[list]!;
      if (size < take) heapPush(heapKeys, heapLists, size++, key, list);
      else if (key > heapKeys[0]!) heapReplaceRoot(heapKeys, heapLists, size, key, list);
    }
    let total = 0;
    for (let index = 0; index < size; index++) total += this.sizes[heapLists[index]!]!;
    if (this.candidates.length < total) {
      this.candidates = new Int32Array(Math.max(total, this.candidates.length * 2));
    }
    if (this.outCapacity < total) {
      const capacity = Math.max(total, this.outCapacity * 2);
      if (this.outCapacity > 0) this.deadBytes += this.outCapacity * 4;
      this.outAt = this.allocate(capacity * 4);
      this.outCapacity = capacity;
      f32 = this.f32;
    }
    let filled = 0;
    for (let index = 0; index < size; index++) {
      const list = heapLists[index]!;
      const length = this.sizes[list]!;
      if (length === 0) continue;
      this.kernels.dotI8All(
        this.queryCodesAt,
        this.blockAt[list]!,
        length,
        this.codeStride,
        this.scalesAt(list),
        this.outAt + filled * 4,
        this.sumsAt(list),
      );
      this.candidates.set(this.members[list]!.subarray(0, length), filled);
      filled += length;
    }
    return filled;
  }

  gatheredRows(count: number): Int32Array {
    return this.candidates.subarray(0, count);
  }

  gatheredScores(count: number): Float32Array {
    return this.f32.subarray(this.outAt / 4, this.outAt / 4 + count);
  }

  get gatheredScale(): number {
    return this.queryScale;
  }

  /** The size of each list (for tests and stats). */
  listSizes(): Int32Array {
    return this.sizes.slice();
  }

  /** The centroid nearest the point at `values[offset ..]` (by L2 distance). */
  private nearest(values: Float32Array, offset: number): number {
    this.f32.set(values.subarray(offset, offset + this.dimension), this.queryAt / 4);
    return this.nearestToQuery();
  }

  /** The centroid nearest the vector in the query slot, by `q·c - |c|²/2`. */
  private nearestToQuery(): number {
    this.kernels.dotF32All(this.queryAt, 0, this.lists, this.stride, this.centroidScoresAt);
    const scores = this.centroidScoresAt / 4;
    const f32 = this.f32;
    let best = 0;
    let bestKey = -Infinity;
    for (let list = 0; list < this.lists; list++) {
      const key = f32[scores + list]! - this.halfNorms[list]!;
      if (key > bestKey) {
        bestKey = key;
        best = list;
      }
    }
    return best;
  }

  /** The float32 query slot, where a row is read to be assigned and quantised. */
  private queryView(): Float32Array<ArrayBuffer> {
    this.refreshViews();
    return this.f32.subarray(
      this.queryAt / 4,
      this.queryAt / 4 + this.dimension,
    ) as Float32Array<ArrayBuffer>;
  }

  /**
   * Lays out the lists of an empty index for rows 0 .. count-1 in `assignments` (with an eighth
   * more room each), then quantises every row into its list.
   */
  private fill(arena: VectorArena, count: number, assignments: Int32Array): void {
    this.ensureRows(count);
    const counts = new Int32Array(this.lists);
    for (let slot = 0; slot < count; slot++) counts[assignments[slot]!]!++;
    // Grown once to what the lists need, rather than by a quarter at a time.
    let bytes = this.top;
    for (let list = 0; list < this.lists; list++) bytes += align16(withRoom(counts[list]!) * this.rowBytes);
    this.memory.growTo(bytes);
    this.refreshViews();
    for (let list = 0; list < this.lists; list++) {
      const capacity = withRoom(counts[list]!);
      this.blockAt[list] = this.allocate(capacity * this.rowBytes);
      this.capacities[list] = capacity;
      this.members[list] = new Int32Array(capacity);
    }
    const query = this.queryView();
    for (let slot = 0; slot < count; slot++) {
      arena.read(slot, query);
      this.append(slot, assignments[slot]!);
    }
  }

  /** Appends the row in the query slot to `list` as row `slot`: its codes, scale (and code sum) and number. */
  private append(slot: number, list: number): void {
    const size = this.sizes[list]!;
    if (size === this.capacities[list]!) this.growList(list, withRoom(2 * size));
    let members = this.members[list]!;
    if (members.length <= size) {
      const grown = new Int32Array(Math.max(4, this.capacities[list]!));
      grown.set(members);
      this.members[list] = members = grown;
    }
    members[size] = slot;
    const codes = this.blockAt[list]! + size * this.codeStride;
    const rowScale = quantize(this.f32, this.queryAt / 4, this.dimension, this.i8, codes, this.codeStride);
    this.f32[this.scalesAt(list) / 4 + size] = rowScale;
    if (this.relaxed) this.kernels.codeSums!(codes, 1, this.codeStride, this.sumsAt(list) + size * 4);
    this.sizes[list] = size + 1;
    this.listOf[slot] = list;
    this.positionOf[slot] = size;
  }

  /** Moves a list to a block with room for `capacity` rows at the top of the memory. */
  private growList(list: number, capacity: number): void {
    const oldCapacity = this.capacities[list]!;
    const size = this.sizes[list]!;
    const { codeStride, rowBytes } = this;
    if (oldCapacity > 0 && this.deadBytes + oldCapacity * rowBytes > (this.top - this.blocksStart) / 2) {
      // Holes would be half the blocks: compact instead (every list laid out again, with room).
      this.compact(list, capacity);
      return;
    }
    const at = this.allocate(capacity * rowBytes);
    const oldAt = this.blockAt[list]!;
    const oldScales = this.scalesAt(list);
    this.i8.copyWithin(at, oldAt, oldAt + size * codeStride);
    this.i8.copyWithin(at + capacity * codeStride, oldScales, oldScales + size * 4);
    if (this.relaxed) {
      const oldSums = this.sumsAt(list);
      this.i8.copyWithin(at + capacity * (codeStride + 4), oldSums, oldSums + size * 4);
    }
    this.deadBytes += oldCapacity * rowBytes;
    this.blockAt[list] = at;
    this.capacities[list] = capacity;
  }

  /**
   * Copies every list into a new memory, tightly (with room), `list` with room for `capacity`.
   * The old memory, holes and all, is dropped.
   */
  private compact(list: number, capacity: number): void {
    const { codeStride, rowBytes } = this;
    const oldBytes = new Uint8Array(this.memory.buffer);
    let bytes = this.blocksStart;
    for (let other = 0; other < this.lists; other++) {
      const rows = other === list ? capacity : withRoom(this.sizes[other]!);
      bytes += align16(rows * rowBytes);
    }
    const memory = new LinearMemory(this.kernel, bytes);
    const target = new Uint8Array(memory.buffer);
    target.set(oldBytes.subarray(0, this.blocksStart));
    let top = this.blocksStart;
    for (let other = 0; other < this.lists; other++) {
      const rows = other === list ? capacity : withRoom(this.sizes[other]!);
      const size = this.sizes[other]!;
      const oldAt = this.blockAt[other]!;
      const oldScales = oldAt + this.capacities[other]! * codeStride;
      target.set(oldBytes.subarray(oldAt, oldAt + size * codeStride), top);
      target.set(oldBytes.subarray(oldScales, oldScales + size * 4), top + rows * codeStride);
      if (this.relaxed) {
        const oldSums = oldScales + this.capacities[other]! * 4;
        target.set(oldBytes.subarray(oldSums, oldSums + size * 4), top + rows * (codeStride + 4));
      }
      this.blockAt[other] = top;
      this.capacities[other] = rows;
      top += align16(rows * rowBytes);
    }
    this.memory = memory;
    this.kernels = createScanKernels(memory);
    this.top = top;
    this.deadBytes = 0;
    this.outAt = 0;
    this.outCapacity = 0;
    this.refreshViews();
  }

  private scalesAt(list: number): number {
    return this.blockAt[list]! + this.capacities[list]! * this.codeStride;
  }

  /** Where `list`'s rows' code sums start (kept when relaxed only): after its scales. */
  private sumsAt(list: number): number {
    return this.scalesAt(list) + this.capacities[list]! * 4;
  }

  /** `bytes` at the top of the memory, growing it by at least a quarter when needed. */
  private allocate(bytes: number): number {
    const at = this.top;
    this.top = align16(this.top + bytes);
    if (this.top > this.memory.byteLength) {
      this.memory.growTo(align16(Math.max(this.top, this.memory.byteLength * 1.25)));
      this.refreshViews();
    }
    return at;
  }

  private refreshViews(): void {
    const buffer = this.memory.buffer;
    if (buffer === this.viewBuffer) return;
    this.viewBuffer = buffer;
    this.f32 = new Float32Array(buffer);
    this.i8 = new Int8Array(buffer);
    this.i16 = new Int16Array(buffer);
  }

  private ensureRows(rows: number): void {
    if (rows <= this.listOf.length) return;
    const capacity = Math.max(rows, this.listOf.length * 2, 64);
    const listOf = new Int32Array(capacity);
    listOf.set(this.listOf);
    const positionOf = new Int32Array(capacity);
    positionOf.set(this.positionOf);
    this.listOf = listOf;
    this.positionOf = positionOf;
  }
}

const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

/** Room for `rows` rows and an eighth more (at least 4), so a few adds do not move a list. */
const withRoom = (rows: number) => Math.max(4, rows + (rows >> 3));

/** Min-heap by key (the root is the worst of the best lists kept). */
function heapPush(keys: Float64Array, lists: Int32Array, size: number, key: number, list: number): void {
  let position = size;
  while (position > 0) {
    const parent = (position - 1) >> 1;
    if (keys[parent]! <= key) break;
    keys[position] = keys[parent]!;
    lists[position] = lists[parent]!;
    position = parent;
  }
  keys[position] = key;
  lists[position] = list;
}

function heapReplaceRoot(
  keys: Float64Array,
  lists: Int32Array,
  size: number,
  key: number,
  list: number,
): void {
  let position = 0;
  for (;;) {
    const left = 2 * position + 1;
    if (left >= size) break;
    const right = left + 1;
    const child = right < size && keys[right]! < keys[left]! ? right : left;
    if (keys[child]! >= key) break;
    keys[position] = keys[child]!;
    lists[position] = lists[child]!;
    position = child;
  }
  keys[position] = key;
  lists[position] = list;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
