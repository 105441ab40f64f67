import { ZerdaError } from '../errors/index.js';
import { createScanKernels, LinearMemory, type ScanKernels } from './kernels/kernels.js';

/** Byte offsets of the regions of the arena's memory, for a given capacity (in rows). */
interface Layout {
  capacity: number;
  /** float32 rows, `stride` values each; at 0, so they never move when the memory grows. */
  vectors: number;
  /** int8 rows, `codeStride` bytes each (quantised stores only). */
  codes: number;
  /** float32 per row: the scale of its int8 codes. */
  scales: number;
  /** float32 per row: scan output (scratch). */
  scores: number;
  /** int32 per row: row numbers for the list kernels (scratch). */
  list: number;
  /** The query, float32 (scratch). */
  query: number;
  /** The query's int8 codes widened to int16 (scratch). */
  queryCodes: number;
  /** Bytes needed. */
  end: number;
}

/** Where the scan output of the last call lives: a view valid until the next scan or growth. */
export type ScanScores = Float32Array;

const INITIAL_CAPACITY = 64;

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
  readonly kernels: ScanKernels;
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
    kernel,
  }: { dimension: number; quantized: boolean; kernel: 'wasm' | 'js' }) {
    this.dimension = dimension;
    this.stride = Math.ceil(dimension / 4) * 4;
    this.codeStride = quantized ? Math.ceil(dimension / 16) * 16 : 0;
    this.layout = this.computeLayout(0);
    this.memory = new LinearMemory(kernel, this.layout.end);
    this.kernels = createScanKernels(this.memory);
  }

  get quantized(): boolean {
    return this.codeStride > 0;
  }

  get capacity(): number {
    return this.layout.capacity;
  }

  /** Bytes of memory held: the linear memory and the norms. */
  get byteLength(): number {
    return this.memory.byteLength + this.norms.byteLength;
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
    // Persistent regions after the vectors move up; the highest first, so none overwrites another
    // before it has moved. Stale bytes left behind are overwritten by `write`, which fills whole rows.
    const bytes = new Uint8Array(this.memory.buffer);
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
    const row = this.layout.vectors / 4 + slot * stride;
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
      f32[scales + slot] = quantize(
        f32,
        row,
        dimension,
        this.i8,
        this.layout.codes + slot * this.codeStride,
        this.codeStride,
      );
    }
  }

  /** Copies row `from` onto row `to` (used to fill the hole a deletion leaves). */
  move(from: number, to: number): void {
    if (from === to) return;
    this.refreshViews();
    const { stride, codeStride, layout } = this;
    const source = layout.vectors / 4 + from * stride;
    this.f32.copyWithin(layout.vectors / 4 + to * stride, source, source + stride);
    this.norms[to] = this.norms[from]!;
    if (this.quantized) {
      const codes = layout.codes + from * codeStride;
      this.i8.copyWithin(layout.codes + to * codeStride, codes, codes + codeStride);
      this.f32[layout.scales / 4 + to] = this.f32[layout.scales / 4 + from]!;
    }
  }

  /** A copy of the vector at `slot` (its `dimension` values, without padding). */
  read(slot: number, target = new Float32Array(this.dimension)): Float32Array {
    this.refreshViews();
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
    const row = this.layout.vectors / 4 + slot * this.stride;
    const query = this.layout.query / 4;
    let sum = 0;
    for (let j = 0; j < this.dimension; j++) {
      const difference = this.f32[query + j]! - this.f32[row + j]!;
      sum += difference * difference;
    }
    return sum;
  }

  /** Sets the query for the following scans (length `dimension`), and its int8 codes when quantised. */
  setQuery(query: ArrayLike<number>): void {
    this.refreshViews();
    const { dimension, stride } = this;
    const offset = this.layout.query / 4;
    for (let j = 0; j < dimension; j++) this.f32[offset + j] = query[j]!;
    this.f32.fill(0, offset + dimension, offset + stride);
    if (this.quantized) {
      const codes = new Int8Array(this.codeStride);
      this.queryScale = quantize(this.f32, offset, dimension, codes, 0, this.codeStride);
      this.i16.set(codes, this.layout.queryCodes / 2);
    }
  }

  /** Exact float32 dot products of the query with rows 0 .. count-1. */
  scanAll(count: number): ScanScores {
    const { layout } = this;
    this.kernels.dotF32All(layout.query, layout.vectors, count, this.stride, layout.scores);
    return this.scores(count);
  }

  /** Exact float32 dot products of the query with the given rows, in order. */
  scanList(slots: ArrayLike<number>, count: number): ScanScores {
    const { layout } = this;
    this.writeList(slots, count);
    this.kernels.dotF32List(layout.query, layout.vectors, layout.list, count, this.stride, layout.scores);
    return this.scores(count);
  }

  /**
   * Approximate dot products of the query with rows 0 .. count-1, from the int8 codes, divided by
   * the query's scale (`quantizedQueryScale`): a positive constant, so they rank alike.
   */
  scanAllQuantized(count: number): ScanScores {
    const { layout } = this;
    this.kernels.dotI8All(
      layout.queryCodes,
      layout.codes,
      count,
      this.codeStride,
      layout.scales,
      layout.scores,
    );
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
    let offset = 0;
    // Every region starts on a 16-byte boundary, the width of a SIMD load.
    const take = (bytes: number): number => {
      const start = offset;
      offset = Math.ceil((offset + bytes) / 16) * 16;
      return start;
    };
    const vectors = take(capacity * this.stride * 4);
    const codes = take(capacity * this.codeStride);
    const scales = take(this.codeStride > 0 ? capacity * 4 : 0);
    const scores = take(capacity * 4);
    const list = take(capacity * 4);
    const query = take(this.stride * 4);
    const queryCodes = take(this.codeStride * 2);
    return { capacity, vectors, codes, scales, scores, list, query, queryCodes, end: offset };
  }
}

/**
 * Symmetric scalar quantisation of one vector to int8: code = round(x / scale), scale =
 * max|x| / 127, so each vector uses the whole code range whatever its magnitude. Writes
 * `stride` codes (zero-padded) at `offset` and returns the scale (0 for a zero vector).
 */
function quantize(
  source: Float32Array,
  start: number,
  dimension: number,
  target: Int8Array,
  offset: number,
  stride: number,
): number {
  let maxAbs = 0;
  for (let j = 0; j < dimension; j++) maxAbs = Math.max(maxAbs, Math.abs(source[start + j]!));
  target.fill(0, offset, offset + stride);
  if (maxAbs === 0) return 0;
  const inverse = 127 / maxAbs;
  for (let j = 0; j < dimension; j++) target[offset + j] = Math.round(source[start + j]! * inverse);
  return maxAbs / 127;
}
