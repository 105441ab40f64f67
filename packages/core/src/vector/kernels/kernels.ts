import { InvalidArgumentError } from '../../errors/index.js';
import {
  decodeBase64,
  WASM_MAX_PAGES,
  WASM_PAGE_BYTES,
  type WasmMemory,
  webAssembly,
} from '../../util/webassembly.js';
import { dotF32SharedWasm, dotF32Wasm } from './generated/dot-f32.js';
import { dotI8SharedWasm, dotI8Wasm } from './generated/dot-i8.js';
import { dotI8RelaxedSharedWasm, dotI8RelaxedWasm } from './generated/dot-i8-relaxed.js';
import {
  createViews,
  dotF32AllJs,
  dotF32I8ListJs,
  dotF32ListJs,
  dotI8AllJs,
  dotI8ListJs,
  firstAtLeastJs,
  type MemoryViews,
} from './js-kernels.js';
import { type ScanThreadHost, ScanThreads } from './scan-threads.js';

/** Which implementation scans: WebAssembly SIMD, plain JavaScript, or the best available. */
export type KernelPreference = 'auto' | 'wasm' | 'js';

/**
 * The scan kernels. Every address is a byte offset into the memory they were created for; rows
 * are contiguous, `stride` float32 values (a multiple of 4) or `strideBytes` int8 codes (a
 * multiple of 16), zero-padded.
 */
export interface ScanKernels {
  /** 'wasm' (WebAssembly SIMD) or 'js' (the fallback). */
  readonly kind: 'wasm' | 'js';
  /**
   * Which `dotI8All` this is: relaxed SIMD's dot product (dot-i8-relaxed.wat, where the runtime
   * has it and its results passed a probe), SIMD128 (dot-i8.wat), or JavaScript.
   */
  readonly int8Kernel: 'relaxed-simd' | 'simd' | 'js';
  /** out[i] = query . row[i] for `count` float32 rows starting at `base`. */
  dotF32All(query: number, base: number, count: number, stride: number, out: number): void;
  /** out[j] = query . row[list[j]] for `count` int32 row numbers at `list`. */
  dotF32List(query: number, base: number, list: number, count: number, stride: number, out: number): void;
  /**
   * out[i] = (query . codes[i]) * scales[i]. The query block holds the query's codes widened to
   * int16 (2 strideBytes bytes), then, read by the relaxed-SIMD kernel only, the same codes plus
   * 64 as bytes; `sums` holds each row's sum of codes (int32, from `codeSums`), also read by it
   * only. Every kernel gives the same results.
   */
  dotI8All(
    query: number,
    base: number,
    count: number,
    strideBytes: number,
    scales: number,
    out: number,
    sums: number,
  ): void;
  /**
   * out[i] = the sum of the codes of row i (int32), for `count` rows starting at `base`: present
   * when `dotI8All` reads the sums (relaxed SIMD), and only then do they need keeping.
   */
  codeSums?(base: number, count: number, strideBytes: number, out: number): void;
  /** out[j] = (query . codes[list[j]]) * scales[list[j]], from the query's int16 codes. */
  dotI8List(
    query: number,
    base: number,
    list: number,
    count: number,
    strideBytes: number,
    scales: number,
    out: number,
  ): void;
  /**
   * out[j] = (query . codes[list[j]]) * scales[list[j]] for a float32 query of `stride` values:
   * re-scores a shortlist from the codes when no float32 rows are kept.
   */
  dotF32I8List(
    query: number,
    base: number,
    list: number,
    count: number,
    stride: number,
    strideBytes: number,
    scales: number,
    out: number,
  ): void;
  /**
   * The first position from `from` (below `count`) whose float32 score at address `scores` is at
   * least `threshold` (itself a float32 value, as the heap's worst score is), or `count` (NaN
   * never is): the skip loop of `selectTopK` over a scan's scores, sixteen at a time in
   * WebAssembly.
   */
  firstAtLeast(scores: number, from: number, count: number, threshold: number): number;
  /**
   * The threads full scans may be split over (`ScanThreads.dotF32AllAsync`, `dotI8AllAsync`), when
   * the memory is shared and a host was given. The kernels above always run on the caller's thread.
   */
  readonly threads?: ScanThreads;
}

/**
 * A linear memory that grows and keeps its contents: a WebAssembly memory when the kernels are
 * WebAssembly (so vectors are scanned where they are stored, never copied per query), a plain
 * ArrayBuffer otherwise. The buffer changes on growth, so views must be taken again. A shared
 * memory (for scans split over threads) is a SharedArrayBuffer of at most 4 GiB.
 */
export class LinearMemory {
  readonly wasm: WasmMemory | undefined;
  readonly shared: boolean;
  private plain: ArrayBuffer | undefined;

  constructor(kind: 'wasm' | 'js', bytes = WASM_PAGE_BYTES, shared = false) {
    this.shared = shared && kind === 'wasm';
    if (kind === 'wasm') {
      if (webAssembly === undefined) throw new Error('WebAssembly is not available');
      const initial = Math.max(1, Math.ceil(bytes / WASM_PAGE_BYTES));
      this.wasm = new webAssembly.Memory(
        this.shared ? { initial, maximum: WASM_MAX_PAGES, shared: true } : { initial },
      );
    } else {
      this.plain = new ArrayBuffer(bytes);
    }
  }

  get buffer(): ArrayBuffer {
    return this.wasm === undefined ? this.plain! : this.wasm.buffer;
  }

  get byteLength(): number {
    return this.buffer.byteLength;
  }

  /** Grows to at least `bytes`; throws a RangeError when the runtime refuses (wasm32 stops at 4 GiB). */
  growTo(bytes: number): void {
    const current = this.byteLength;
    if (bytes <= current) return;
    if (this.wasm !== undefined) {
      this.wasm.grow(Math.ceil((bytes - current) / WASM_PAGE_BYTES));
    } else {
      const grown = new ArrayBuffer(bytes);
      new Uint8Array(grown).set(new Uint8Array(this.plain!));
      this.plain = grown;
    }
  }
}

interface KernelModules<T> {
  f32: T;
  i8: T;
  /** dot-i8-relaxed.wat, where the runtime has relaxed SIMD and the probe passed. */
  i8Relaxed?: T;
}

let wasmBytes: KernelModules<Uint8Array> | undefined;
let wasmModules: KernelModules<object> | undefined;
let sharedModules: KernelModules<object> | undefined;
let simdSupport: boolean | undefined;
let relaxedSupport: boolean | undefined;

function kernelBytes(): KernelModules<Uint8Array> {
  wasmBytes ??= { f32: decodeBase64(dotF32Wasm), i8: decodeBase64(dotI8Wasm) };
  return wasmBytes;
}

/**
 * Whether this runtime runs the WebAssembly SIMD kernels. Feature detection by validating the
 * kernels themselves: a runtime without 128-bit SIMD rejects their v128 instructions.
 */
export function wasmSimdSupported(): boolean {
  if (simdSupport === undefined) {
    try {
      const bytes = kernelBytes();
      simdSupport =
        webAssembly !== undefined && [bytes.f32, bytes.i8].every((module) => webAssembly!.validate(module));
    } catch {
      simdSupport = false;
    }
  }
  return simdSupport;
}

/**
 * Whether the int8 scans here can use relaxed SIMD's dot product: the runtime validates the
 * module, and its results on a probe equal the exact ones. The probe guards against a runtime
 * whose instruction is defined otherwise than the values the kernel gives it assume.
 */
export function relaxedSimdSupported(): boolean {
  if (relaxedSupport === undefined) {
    try {
      const bytes = decodeBase64(dotI8RelaxedWasm);
      relaxedSupport =
        wasmSimdSupported() &&
        webAssembly!.validate(bytes) &&
        relaxedProbePasses(new webAssembly!.Module(bytes));
    } catch {
      relaxedSupport = false;
    }
  }
  return relaxedSupport;
}

/**
 * Runs the relaxed kernel over rows whose codes reach both ends of their range (and one with
 * values spread over it), against queries at both ends of theirs, with an odd number of 16-code
 * blocks, and compares with the exact integer dot products. Node 20's V8, which has relaxed SIMD
 * behind a flag, fails it: its dot product adds the accumulator wrongly in this kernel.
 */
function relaxedProbePasses(module: object): boolean {
  const api = webAssembly!;
  const memory = new api.Memory({ initial: 1 });
  const exports = new api.Instance(module, { env: { memory } }).exports;
  const dotI8All = exports.dot_i8_all as ScanKernels['dotI8All'];
  const codeSums = exports.code_sums as NonNullable<ScanKernels['codeSums']>;
  const strideBytes = 48;
  // The code (row) or 7-bit query value at position j.
  const rows: ((j: number) => number)[] = [
    () => 127,
    () => -127,
    (j) => (j % 2 === 0 ? 127 : -127),
    (j) => ((j * 37) % 255) - 127,
  ];
  const queries: ((j: number) => number)[] = [
    () => 63,
    () => -63,
    (j) => (j % 3 === 0 ? -63 : 63 - (j % 64)),
  ];
  // The query block: int16 codes (unread here), then the offset codes.
  const [queryAt, codesAt, scalesAt, sumsAt, outAt] = [0, 256, 256 + 4 * strideBytes, 512, 1024];
  const offsetCodesAt = queryAt + 2 * strideBytes;
  const bytes = new Uint8Array(memory.buffer);
  const i8 = new Int8Array(memory.buffer);
  rows.forEach((row, r) => {
    for (let j = 0; j < strideBytes; j++) i8[codesAt + r * strideBytes + j] = row(j);
  });
  new Float32Array(memory.buffer, scalesAt, rows.length).fill(1);
  codeSums(codesAt, rows.length, strideBytes, sumsAt);
  const out = new Float32Array(memory.buffer, outAt, rows.length);
  for (const query of queries) {
    for (let j = 0; j < strideBytes; j++) bytes[offsetCodesAt + j] = query(j) + 64;
    dotI8All(queryAt, codesAt, rows.length, strideBytes, scalesAt, outAt, sumsAt);
    for (let r = 0; r < rows.length; r++) {
      let exact = 0;
      for (let j = 0; j < strideBytes; j++) exact += rows[r]!(j) * query(j);
      if (out[r] !== exact) return false;
    }
  }
  return true;
}

/** What the full int8 scans of kernels of `kind` use here (see `ScanKernels.int8Kernel`). */
export function int8KernelFor(kind: 'wasm' | 'js'): ScanKernels['int8Kernel'] {
  if (kind === 'js') return 'js';
  return relaxedSimdSupported() ? 'relaxed-simd' : 'simd';
}

/** Which kernels a preference resolves to here; 'wasm' where SIMD is missing is an error. */
export function resolveKernelKind(preference: KernelPreference = 'auto'): 'wasm' | 'js' {
  if (preference === 'js') return 'js';
  if (wasmSimdSupported()) return 'wasm';
  if (preference === 'wasm') {
    throw new InvalidArgumentError({
      argument: 'kernel',
      value: preference,
      message: "WebAssembly SIMD is not available in this runtime; use 'auto' or 'js'",
    });
  }
  return 'js';
}

/**
 * The kernels for a memory: WebAssembly instances over it when it is a WebAssembly memory. Over a
 * shared memory with a thread host, full scans are split across the host's threads.
 */
export function createScanKernels(memory: LinearMemory, host?: ScanThreadHost): ScanKernels {
  if (memory.wasm === undefined) return createJsKernels(memory);
  return createWasmKernels(memory.wasm, memory.shared, host);
}

type Kernel = (...args: number[]) => void;

/** Whether this runtime compiles the kernels over a shared memory (WebAssembly threads). */
export function sharedKernelsSupported(): boolean {
  try {
    kernelModules(true);
    return true;
  } catch {
    return false;
  }
}

/** The kernel modules, over a plain or a shared memory. */
function kernelModules(shared: boolean): KernelModules<object> {
  if (webAssembly === undefined) throw new Error('WebAssembly is not available');
  const api = webAssembly;
  // Compiled once per process (the modules are tiny, so synchronous compilation is allowed
  // everywhere); instantiated once per memory.
  const relaxed = relaxedSimdSupported();
  if (shared) {
    sharedModules ??= {
      f32: new api.Module(decodeBase64(dotF32SharedWasm)),
      i8: new api.Module(decodeBase64(dotI8SharedWasm)),
      i8Relaxed: relaxed ? new api.Module(decodeBase64(dotI8RelaxedSharedWasm)) : undefined,
    };
    return sharedModules;
  }
  wasmModules ??= {
    f32: new api.Module(kernelBytes().f32),
    i8: new api.Module(kernelBytes().i8),
    i8Relaxed: relaxed ? new api.Module(decodeBase64(dotI8RelaxedWasm)) : undefined,
  };
  return wasmModules;
}

function createWasmKernels(
  memory: WasmMemory,
  shared: boolean,
  host: ScanThreadHost | undefined,
): ScanKernels {
  const api = webAssembly!;
  const modules = kernelModules(shared);
  const imports = { env: { memory } };
  const f32 = new api.Instance(modules.f32, imports).exports;
  const i8 = new api.Instance(modules.i8, imports).exports;
  // The full int8 scan is the relaxed-SIMD one where it passed the probe; the list kernels are
  // SIMD128's either way.
  const i8Relaxed =
    modules.i8Relaxed === undefined ? undefined : new api.Instance(modules.i8Relaxed, imports).exports;
  const kernels: ScanKernels = {
    kind: 'wasm',
    int8Kernel: i8Relaxed === undefined ? 'simd' : 'relaxed-simd',
    dotF32All: f32.dot_f32_all as Kernel,
    dotF32List: f32.dot_f32_list as Kernel,
    dotI8All: (i8Relaxed ?? i8).dot_i8_all as Kernel,
    codeSums: i8Relaxed?.code_sums as Kernel | undefined,
    dotI8List: i8.dot_i8_list as Kernel,
    dotF32I8List: i8.dot_f32_i8_list as Kernel,
    firstAtLeast: f32.first_at_least as ScanKernels['firstAtLeast'],
  };
  if (!shared || host === undefined || host.threads < 2) return kernels;
  // The workers run the full scans only: theirs are the same.
  const threadModules = [modules.f32, modules.i8Relaxed ?? modules.i8];
  return { ...kernels, threads: new ScanThreads(host, threadModules, memory) };
}

function createJsKernels(memory: LinearMemory): ScanKernels {
  let buffer: ArrayBuffer | undefined;
  let views: MemoryViews | undefined;
  const current = (): MemoryViews => {
    if (memory.buffer !== buffer || views === undefined) {
      buffer = memory.buffer;
      views = createViews(buffer);
    }
    return views;
  };
  return {
    kind: 'js',
    int8Kernel: 'js',
    dotF32All: (query, base, count, stride, out) => dotF32AllJs(current(), query, base, count, stride, out),
    dotF32List: (query, base, list, count, stride, out) =>
      dotF32ListJs(current(), query, base, list, count, stride, out),
    dotI8All: (query, base, count, strideBytes, scales, out) =>
      dotI8AllJs(current(), query, base, count, strideBytes, scales, out),
    dotI8List: (query, base, list, count, strideBytes, scales, out) =>
      dotI8ListJs(current(), query, base, list, count, strideBytes, scales, out),
    dotF32I8List: (query, base, list, count, stride, strideBytes, scales, out) =>
      dotF32I8ListJs(current(), query, base, list, count, stride, strideBytes, scales, out),
    firstAtLeast: (scores, from, count, threshold) =>
      firstAtLeastJs(current(), scores, from, count, threshold),
  };
}
