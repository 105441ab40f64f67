import { ZerdaError } from '../errors/index.js';
import { ARENA_IMAGE_HEADER_BYTES } from './arena-image.js';
import { createScanKernels, LinearMemory, type ScanKernels } from './kernels/kernels.js';
import {
  type ScanThreadHost,
  type ScanThreads,
  type ScanThreadsState,
  unsplitScanThreadsState,
} from './kernels/scan-threads.js';
import type { FirstAtLeast } from './top-k.js';

/** Byte offsets of the regions of the arena's memory, for a given capacity (in rows). */
interface Layout {
  capacity: number;
  /**
   * float32 rows, `stride` values each (none when only codes are kept); at 0, so they never move
   * when the memory grows.
   */
  vectors: number;
  /** int8 rows, `codeStride` bytes each (quantised stores only). */
  codes: number;
  /** float32 per row: the scale of its int8 codes. */
  scales: number;
  /** int32 per row: the sum of its int8 codes (for the relaxed-SIMD scan only; derived, never saved). */
  sums: number;
  /** float32 per row: scan output (scratch). */
  scores: number;
  /** int32 per row: row numbers for the list kernels (scratch). */
  list: number;
  /** The query, float32 (scratch). */
  query: number;
  /** The query's 7-bit codes as the int8 kernels read them (see `quantizeQuery`; scratch). */
  queryCodes: number;
  /** One float32 row being quantised, when no float32 rows are kept (scratch). */
  row: number;
  /** Bytes needed. */
  end: number;
}

/** Where the scan output of the last call lives: a view valid until the next scan or growth. */
export type ScanScores = Float32Array;

/**
 * The persistent regions of rows 0 .. count-1, as bytes laid out as in the arena's memory: float32
 * rows of `stride` values (when kept), int8 rows of `codeStride` codes and float32 scales (when
 * quantised), float64 squared norms. What a snapshot saves; nothing here is derived again on load
 * (only the code sums of the relaxed-SIMD scan, which are not saved).
 */
export interface ArenaRegions {
  vectors?: Uint8Array;
  codes?: Uint8Array;
  scales?: Uint8Array;
  norms: Uint8Array;
}

const INITIAL_CAPACITY = 64;

/**
 * The largest code of a query's quantisation: 7 bits, so that the relaxed-SIMD scan, whose dot
 * product takes one operand in [0, 127], gets the query's codes plus 64; every kernel scans the
 * same 7-bit codes, so a store ranks alike whichever scans it. A row's codes keep 8 bits.
 */
const QUERY_CODE_MAX = 63;

// An arena dropped without `close` still stops its scan workers.
const workersOfDroppedArenas =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<ScanThreads>((threads) => threads.close())
    : undefined;

/**
 * Vectors of one dimension in one contiguous linear memory (a WebAssembly memory where the SIMD
 * kernels run), one row per integer slot, plus what the scans need: int8 codes and their scales
 * when quantised, squared norms, and scratch space for the query and the scores. Grows by
 * doubling. Knows nothing of ids, chunks or metrics: the store maps those onto slots.
 */
export class VectorArena {
  readonly dimension: number;
  /** float32 values per row: the dimension rounded up to a multiple of 4, zero-padded. */
  readonly stride: number;
  /** int8 codes per row: the dimension rounded up to a multiple of 16 (0 when not quantised). */
  readonly codeStride: number;
  /**
   * Whether the float32 rows are kept. Without them (quantised stores asked to keep codes only)
   * a vector is its int8 codes times its scale: reads, re-scoring and L2 norms use those values.
   */
  readonly keepsFloat32: boolean;
  readonly kernels: ScanKernels;
  /** Whether full int8 scans use relaxed SIMD's dot product, so the arena keeps each row's code sum for it. */
  private readonly relaxed: boolean;
  private readonly memory: LinearMemory;
  private layout: Layout;
  /** Squared Euclidean norm of each row, for L2 (`|q|² + |x|² - 2 q·x`). */
  private norms = new Float64Array(0);
  /** Scale of the query's int8 codes, set by `setQuery`. */
  private queryScale = 0;
  private viewBuffer: ArrayBuffer | undefined;
  private f32 = new Float32Array(0);
  private i8 = new Int8Array(0);
  private i16 = new Int16Array(0);
  private i32 = new Int32Array(0);

  constructor({
    dimension,
    quantized,
    keepFloat32 = true,
    kernel,
    threads,
  }: {
    dimension: number;
    quantized: boolean;
    keepFloat32?: boolean;
    kernel: 'wasm' | 'js';
    /** Worker threads to split full scans over (WebAssembly kernels only; the memory is then shared). */
    threads?: ScanThreadHost;
  }) {
    this.dimension = dimension;
    this.stride = Math.ceil(dimension / 4) * 4;
    this.codeStride = quantized ? Math.ceil(dimension / 16) * 16 : 0;
    // Codes only make sense with codes; an unquantised arena always keeps its float32 rows.
    this.keepsFloat32 = keepFloat32 || !quantized;
    // Known from the kernels; an empty layout is the same either way (no rows, no sums).
    this.relaxed = false;
    this.layout = this.computeLayout(0);
    this.memory = new LinearMemory(kernel, this.layout.end, threads !== undefined);
    this.kernels = createScanKernels(this.memory, threads);
    this.relaxed = quantized && this.kernels.codeSums !== undefined;
    if (this.kernels.threads !== undefined)
      workersOfDroppedArenas?.register(this, this.kernels.threads, this);
  }

  /** Threads the full scans are split over (1 without a host), and why the workers were given up, if they were. */
  get threads(): ScanThreadsState {
    return this.kernels.threads?.state ?? unsplitScanThreadsState();
  }

  /** Stops the scan workers, if any; scans go on on the caller's thread. */
  close(): void {
    if (this.kernels.threads === undefined) return;
    workersOfDroppedArenas?.unregister(this);
    this.kernels.threads.close();
  }

  get quantized(): boolean {
    return this.codeStride > 0;
  }

  /** What scans the int8 codes in full (undefined when not quantised): see `ScanKernels.int8Kernel`. */
  get int8Kernel(): ScanKernels['int8Kernel'] | undefined {
    return this.quantized ? this.kernels.int8Kernel : undefined;
  }

  get capacity(): number {
    return this.layout.capacity;
  }

  /** Bytes of memory held: the linear memory and the norms. */
  get byteLength(): number {
    return this.memory.byteLength + this.norms.byteLength;
  }

  /**
   * Bytes each vector takes: its float32 row (when kept), int8 codes and scale (when quantised),
   * and code sum (for the relaxed-SIMD scan), squared norm, and its share of the scan scratch (a
   * score and a row number).
   */
  get bytesPerVector(): number {
    const float32 = this.keepsFloat32 ? this.stride * 4 : 0;
    const codes = this.quantized ? this.codeStride + 4 + (this.relaxed ? 4 : 0) : 0;
    return float32 + codes + 8 + 8;
  }

  /** Makes room for `rows` rows, at least doubling so that appends are amortised O(1). */
  ensureCapacity(rows: number): void {
    const old = this.layout;
    if (rows <= old.capacity) return;
    const next = this.computeLayout(Math.max(rows, old.capacity * 2, INITIAL_CAPACITY));
    try {
      this.memory.growTo(next.end);
    } catch (error) {
      throw new ZerdaError({
        message: `The in-memory vector store cannot grow to ${next.capacity} vectors of dimension ${this.dimension} (${next.end} bytes)`,
        cause: error,
      });
    }
    this.refreshViews();
    // Persistent regions after the vectors move up (and the code sums with them); the highest
    // first, so none overwrites another before it has moved. Stale bytes left behind are
    // overwritten by `write`, which fills whole rows.
    const bytes = new Uint8Array(this.memory.buffer);
    if (this.relaxed) bytes.copyWithin(next.sums, old.sums, old.sums + old.capacity * 4);
    if (this.quantized) {
      bytes.copyWithin(next.scales, old.scales, old.scales + old.capacity * 4);
      bytes.copyWithin(next.codes, old.codes, old.codes + old.capacity * this.codeStride);
    }
    const norms = new Float64Array(next.capacity);
    norms.set(this.norms);
    this.norms = norms;
    this.layout = next;
  }

  /**
   * Stores `vector` times `scale` (length `dimension`, already validated; the scale normalises for
   * cosine) at `slot`, writing the whole row so no stale bytes stay in its padding.
   */
  write(slot: number, vector: ArrayLike<number>, scale = 1): void {
    this.refreshViews();
    const { dimension, stride, f32 } = this;
    // Without float32 rows the values pass through a scratch row on their way to codes.
    const row = this.keepsFloat32 ? this.layout.vectors / 4 + slot * stride : this.layout.row / 4;
    let norm = 0;
    for (let j = 0; j < dimension; j++) {
      // The norm of the stored (float32-rounded) values, so L2 arithmetic matches the scan.
      const stored = Math.fround(vector[j]! * scale);
      f32[row + j] = stored;
      norm += stored * stored;
    }
    f32.fill(0, row + dimension, row + stride);
    this.norms[slot] = norm;
    if (this.quantized) {
      const scales = this.layout.scales / 4;
      const codes = this.layout.codes + slot * this.codeStride;
      const codeScale = quantize(f32, row, dimension, this.i8, codes, this.codeStride);
      f32[scales + slot] = codeScale;
      if (this.relaxed) this.kernels.codeSums!(codes, 1, this.codeStride, this.layout.sums + slot * 4);
      if (!this.keepsFloat32) {
        // The vector is now its codes times the scale: L2 keys use the norm of those values.
        const stored = Math.fround(codeScale);
        let codeNorm = 0;
        for (let j = 0; j < dimension; j++) {
          const value = Math.fround(this.i8[codes + j]! * stored);
          codeNorm += value * value;
        }
        this.norms[slot] = codeNorm;
      }
    }
  }

  /**
   * Views of the persistent regions of rows 0 .. count-1 in memory, not copies: valid until the
   * next write or growth, so the caller copies them out at once.
   */
  regions(count: number): ArenaRegions {
    this.refreshViews();
    const { layout } = this;
    const buffer = this.memory.buffer;
    const regions: ArenaRegions = {
      norms: new Uint8Array(this.norms.buffer, this.norms.byteOffset, count * 8),
    };
    if (this.keepsFloat32) regions.vectors = new Uint8Array(buffer, layout.vectors, count * this.stride * 4);
    if (this.quantized) {
      regions.codes = new Uint8Array(buffer, layout.codes, count * this.codeStride);
      regions.scales = new Uint8Array(buffer, layout.scales, count * 4);
    }
    return regions;
  }

  /**
   * Fills rows 0 .. count-1 of an empty arena from regions laid out as `regions` gives them (the
   * caller has checked their sizes): one copy per region this arena keeps, no per-row work.
   */
  loadRegions(count: number, regions: ArenaRegions): void {
    const expect = (region: Uint8Array | undefined, bytes: number, name: string): Uint8Array => {
      if (region === undefined || region.byteLength !== bytes) {
        throw new ZerdaError({
          message: `the ${name} region holds ${region?.byteLength ?? 0} bytes, ${count} rows need ${bytes}`,
        });
      }
      return region;
    };
    const norms = expect(regions.norms, count * 8, 'norms');
    const vectors = this.keepsFloat32
      ? expect(regions.vectors, count * this.stride * 4, 'vectors')
      : undefined;
    const codes = this.quantized ? expect(regions.codes, count * this.codeStride, 'codes') : undefined;
    const scales = this.quantized ? expect(regions.scales, count * 4, 'scales') : undefined;
    this.ensureCapacity(count);
    const bytes = new Uint8Array(this.memory.buffer);
    if (vectors !== undefined) bytes.set(vectors, this.layout.vectors);
    if (codes !== undefined && scales !== undefined) {
      bytes.set(codes, this.layout.codes);
      bytes.set(scales, this.layout.scales);
    }
    new Uint8Array(this.norms.buffer, this.norms.byteOffset, count * 8).set(norms);
    this.sumCodes(count);
  }

  /**
   * The start of the memory, grown to `byteLength`, for a saved image to be read straight into
   * (then `adoptImage`): no second copy of the vectors. Undefined when the memory cannot grow so far.
   */
  imageTarget(byteLength: number): Uint8Array | undefined {
    try {
      this.memory.growTo(byteLength);
    } catch {
      return undefined;
    }
    return new Uint8Array(this.memory.buffer, 0, byteLength);
  }

  /**
   * Takes rows 0 .. count-1 from an image read into this arena's memory by `imageTarget`, where its
   * regions already lie where the arena keeps them (the same quantisation and row strides): only
   * the norms are copied out, before the scans' scratch space over them is used. False when the
   * regions lie elsewhere (nothing changed: the caller copies them in another way).
   */
  adoptImage(count: number, regions: ArenaRegions): boolean {
    const layout = this.computeLayout(count);
    const buffer = this.memory.buffer;
    const at = (region: Uint8Array | undefined, offset: number, bytes: number) =>
      region !== undefined &&
      region.buffer === buffer &&
      region.byteOffset === offset &&
      region.byteLength === bytes;
    const inPlace =
      (this.keepsFloat32
        ? at(regions.vectors, layout.vectors, count * this.stride * 4)
        : regions.vectors === undefined) &&
      (this.quantized
        ? at(regions.codes, layout.codes, count * this.codeStride) &&
          at(regions.scales, layout.scales, count * 4)
        : regions.codes === undefined) &&
      regions.norms.byteLength === count * 8;
    if (!inPlace) return false;
    const norms = new Float64Array(Math.max(count, INITIAL_CAPACITY));
    new Uint8Array(norms.buffer, 0, count * 8).set(regions.norms);
    this.memory.growTo(layout.end);
    this.norms = norms;
    this.layout = layout;
    this.refreshViews();
    // Over the image's norms, copied out above.
    this.sumCodes(count);
    return true;
  }

  /** The code sums of rows 0 .. count-1, from their codes (for the relaxed-SIMD scan). */
  private sumCodes(count: number): void {
    if (!this.relaxed) return;
    const { layout } = this;
    this.kernels.codeSums!(layout.codes, count, this.codeStride, layout.sums);
  }

  /** Whether `bytes` lie in this arena's memory. */
  holds(bytes: Uint8Array): boolean {
    return bytes.buffer === this.memory.buffer;
  }

  /** Copies row `from` onto row `to` (used to fill the hole a deletion leaves). */
  move(from: number, to: number): void {
    if (from === to) return;
    this.refreshViews();
    const { stride, codeStride, layout } = this;
    if (this.keepsFloat32) {
      const source = layout.vectors / 4 + from * stride;
      this.f32.copyWithin(layout.vectors / 4 + to * stride, source, source + stride);
    }
    this.norms[to] = this.norms[from]!;
    if (this.quantized) {
      const codes = layout.codes + from * codeStride;
      this.i8.copyWithin(layout.codes + to * codeStride, codes, codes + codeStride);
      this.f32[layout.scales / 4 + to] = this.f32[layout.scales / 4 + from]!;
      if (this.relaxed) this.i32[layout.sums / 4 + to] = this.i32[layout.sums / 4 + from]!;
    }
  }

  /** A copy of the vector at `slot` (its `dimension` values, without padding). */
  read(slot: number, target = new Float32Array(this.dimension)): Float32Array {
    this.refreshViews();
    if (!this.keepsFloat32) {
      // Codes times scale: writing these values back gives the same codes.
      const codes = this.layout.codes + slot * this.codeStride;
      const scale = this.f32[this.layout.scales / 4 + slot]!;
      for (let j = 0; j < this.dimension; j++) target[j] = this.i8[codes + j]! * scale;
      return target;
    }
    const row = this.layout.vectors / 4 + slot * this.stride;
    target.set(this.f32.subarray(row, row + this.dimension));
    return target;
  }

  /** The squared Euclidean norm of the vector at `slot`. */
  squaredNorm(slot: number): number {
    return this.norms[slot]!;
  }

  /**
   * scores[i] = scores[i] * factor - |x|²/2 for row `rows[i]` (or row i): turns dot products
   * (scaled by `factor`) into L2 rank keys.
   */
  toL2Keys(scores: Float32Array, rows: Int32Array | undefined, factor: number): void {
    const norms = this.norms;
    if (rows === undefined) {
      for (let index = 0; index < scores.length; index++)
        scores[index] = scores[index]! * factor - 0.5 * norms[index]!;
    } else {
      for (let index = 0; index < scores.length; index++) {
        scores[index] = scores[index]! * factor - 0.5 * norms[rows[index]!]!;
      }
    }
  }

  /** Exact squared Euclidean distance between the current query and the vector at `slot`. */
  squaredDistance(slot: number): number {
    this.refreshViews();
    const query = this.layout.query / 4;
    let sum = 0;
    if (!this.keepsFloat32) {
      const codes = this.layout.codes + slot * this.codeStride;
      const scale = this.f32[this.layout.scales / 4 + slot]!;
      for (let j = 0; j < this.dimension; j++) {
        const difference = this.f32[query + j]! - Math.fround(this.i8[codes + j]! * scale);
        sum += difference * difference;
      }
      return sum;
    }
    const row = this.layout.vectors / 4 + slot * this.stride;
    for (let j = 0; j < this.dimension; j++) {
      const difference = this.f32[query + j]! - this.f32[row + j]!;
      sum += difference * difference;
    }
    return sum;
  }

  /**
   * Sets the query times `scale` (length `dimension`; the scale normalises for cosine) for the
   * following scans, and its 7-bit codes when quantised (see QUERY_CODE_MAX).
   */
  setQuery(query: ArrayLike<number>, scale = 1): void {
    this.refreshViews();
    const { dimension, stride } = this;
    const offset = this.layout.query / 4;
    for (let j = 0; j < dimension; j++) this.f32[offset + j] = query[j]! * scale;
    this.f32.fill(0, offset + dimension, offset + stride);
    if (this.quantized) {
      this.queryScale = quantizeQuery(
        this.f32,
        offset,
        dimension,
        this.codeStride,
        this.layout.queryCodes,
        this.i16,
        this.relaxed ? this.i8 : undefined,
      );
    }
  }

  /**
   * Exact float32 dot products of the query with rows 0 .. count-1 (float32 rows kept only). Split
   * over the scan threads when there are some: then a promise when the workers took parts, and
   * the arena must not change until it settles.
   */
  scanAll(count: number): ScanScores | Promise<ScanScores> {
    const { layout, kernels } = this;
    if (!this.keepsFloat32) throw new ZerdaError({ message: 'this arena keeps int8 codes only' });
    const pending = kernels.threads?.dotF32AllAsync(
      kernels.dotF32All,
      layout.query,
      layout.vectors,
      count,
      this.stride,
      layout.scores,
    );
    if (pending !== undefined) return pending.then(() => this.scores(count));
    if (kernels.threads === undefined) {
      kernels.dotF32All(layout.query, layout.vectors, count, this.stride, layout.scores);
    }
    return this.scores(count);
  }

  /**
   * Dot products of the float32 query with the given rows, in order: exact when the float32 rows
   * are kept, else with each row's codes times its scale (only the row's own quantisation error
   * remains, not the query's). Used to re-score a shortlist.
   */
  scanList(slots: ArrayLike<number>, count: number): ScanScores {
    const { layout, kernels } = this;
    this.writeList(slots, count);
    if (this.keepsFloat32) {
      kernels.dotF32List(layout.query, layout.vectors, layout.list, count, this.stride, layout.scores);
    } else {
      kernels.dotF32I8List(
        layout.query,
        layout.codes,
        layout.list,
        count,
        this.stride,
        this.codeStride,
        layout.scales,
        layout.scores,
      );
    }
    return this.scores(count);
  }

  /**
   * Approximate dot products of the query with rows 0 .. count-1, from the int8 codes, divided by
   * the query's scale (`quantizedQueryScale`): a positive constant, so they rank alike. Split over
   * the scan threads as `scanAll` is.
   */
  scanAllQuantized(count: number): ScanScores | Promise<ScanScores> {
    const { kernels, codeStride } = this;
    const { queryCodes, codes, scales, scores, sums } = this.layout;
    const pending = kernels.threads?.dotI8AllAsync(
      kernels.dotI8All,
      queryCodes,
      codes,
      count,
      codeStride,
      scales,
      scores,
      sums,
    );
    if (pending !== undefined) return pending.then(() => this.scores(count));
    if (kernels.threads === undefined) {
      kernels.dotI8All(queryCodes, codes, count, codeStride, scales, scores, sums);
    }
    return this.scores(count);
  }

  /** As `scanAllQuantized`, for the given rows. */
  scanListQuantized(slots: ArrayLike<number>, count: number): ScanScores {
    const { layout } = this;
    this.writeList(slots, count);
    this.kernels.dotI8List(
      layout.queryCodes,
      layout.codes,
      layout.list,
      count,
      this.codeStride,
      layout.scales,
      layout.scores,
    );
    return this.scores(count);
  }

  /** What the quantised scans' scores are to be multiplied by to estimate q·x. */
  get quantizedQueryScale(): number {
    return this.queryScale;
  }

  /**
   * `selectTopK`'s skip loop over `scores` run by the kernels, when the scores are a scan's output
   * in this arena's memory (as long as the memory does not grow); undefined for other arrays.
   */
  firstAtLeast(scores: Float32Array): FirstAtLeast | undefined {
    if (scores.buffer !== this.memory.buffer) return undefined;
    const { kernels } = this;
    const address = scores.byteOffset;
    return (from, count, threshold) => kernels.firstAtLeast(address, from, count, threshold);
  }

  private writeList(slots: ArrayLike<number>, count: number): void {
    this.refreshViews();
    const offset = this.layout.list / 4;
    for (let j = 0; j < count; j++) this.i32[offset + j] = slots[j]!;
  }

  private scores(count: number): ScanScores {
    this.refreshViews();
    const offset = this.layout.scores / 4;
    return this.f32.subarray(offset, offset + count);
  }

  private refreshViews(): void {
    const buffer = this.memory.buffer;
    if (buffer === this.viewBuffer) return;
    this.viewBuffer = buffer;
    this.f32 = new Float32Array(buffer);
    this.i8 = new Int8Array(buffer);
    this.i16 = new Int16Array(buffer);
    this.i32 = new Int32Array(buffer);
  }

  private computeLayout(capacity: number): Layout {
    // The first bytes stay free: an image (its header, then the regions) read to offset 0 puts
    // every region where an arena of `count` rows keeps it (see `adoptImage`).
    let offset = ARENA_IMAGE_HEADER_BYTES;
    // Every region starts on a 16-byte boundary, the width of a SIMD load.
    const take = (bytes: number): number => {
      const start = offset;
      offset = Math.ceil((offset + bytes) / 16) * 16;
      return start;
    };
    const vectors = take(this.keepsFloat32 ? capacity * this.stride * 4 : 0);
    const codes = take(capacity * this.codeStride);
    const scales = take(this.codeStride > 0 ? capacity * 4 : 0);
    const sums = take(this.relaxed ? capacity * 4 : 0);
    const scores = take(capacity * 4);
    const list = take(capacity * 4);
    const query = take(this.stride * 4);
    const queryCodes = take(queryCodesBytes(this.codeStride));
    const row = take(this.keepsFloat32 ? 0 : this.stride * 4);
    return {
      capacity,
      vectors,
      codes,
      scales,
      sums,
      scores,
      list,
      query,
      queryCodes,
      row,
      end: offset,
    };
  }
}

/** Bytes of a query's codes as the int8 kernels read them (see `quantizeQuery`). */
export function queryCodesBytes(codeStride: number): number {
  return codeStride * 3;
}

/**
 * Quantises a query for the int8 scans, straight into the scan memory (no per-query allocation),
 * at byte address `at`: its 7-bit codes (QUERY_CODE_MAX) widened to int16, then, when `i8` is
 * given (the relaxed-SIMD scan reads them), the same codes plus 64 as bytes (see
 * `ScanKernels.dotI8All`). Returns the codes' scale.
 */
export function quantizeQuery(
  source: Float32Array,
  start: number,
  dimension: number,
  codeStride: number,
  at: number,
  i16: Int16Array,
  i8: Int8Array | undefined,
): number {
  const codes = at / 2;
  const scale = quantize(source, start, dimension, i16, codes, codeStride, QUERY_CODE_MAX);
  if (i8 !== undefined) {
    const offsetCodes = at + 2 * codeStride;
    for (let j = 0; j < codeStride; j++) i8[offsetCodes + j] = i16[codes + j]! + 64;
  }
  return scale;
}

/**
 * Symmetric scalar quantisation of one vector to int8: code = round(x / scale), scale =
 * max|x| / maxCode (127 unless given), so each vector uses the whole code range whatever its
 * magnitude. Writes `stride` codes (zero-padded) at `offset` and returns the scale (0 for a zero
 * vector).
 */
export function quantize(
  source: Float32Array,
  start: number,
  dimension: number,
  target: Int8Array | Int16Array,
  offset: number,
  stride: number,
  maxCode = 127,
): number {
  let maxAbs = 0;
  for (let j = 0; j < dimension; j++) maxAbs = Math.max(maxAbs, Math.abs(source[start + j]!));
  target.fill(0, offset, offset + stride);
  if (maxAbs === 0) return 0;
  const inverse = maxCode / maxAbs;
  for (let j = 0; j < dimension; j++) target[offset + j] = Math.round(source[start + j]! * inverse);
  return maxAbs / maxCode;
}
