import { InvalidArgumentError } from '../../errors/index.js';
import type { WasmMemory } from './webassembly.js';

/**
 * What starts the worker threads a store's full scans are split over: Node's `worker_threads`
 * (`nodeScanThreads()` from `@zerda/core/node`), or any runtime's workers that can share a
 * WebAssembly memory. Core starts its workers through this, so the main entry imports no runtime.
 */
export interface ScanThreadHost {
  /** Threads a scan is split over, the caller's own included: 2 or more. */
  readonly threads: number;
  /**
   * Starts a worker running `source`: the body of a classic script in which `data` (structured
   * clone of the argument: WebAssembly modules, a shared memory and a SharedArrayBuffer) is in
   * scope. `onError` is called if the worker fails or exits on its own.
   */
  start(source: string, data: ScanWorkerData, onError: (error: unknown) => void): ScanWorkerHandle;
}

/** What a scan worker is given. */
export interface ScanWorkerData {
  /** The shared-memory float32 and int8 kernel modules, in that order. */
  modules: readonly object[];
  memory: WasmMemory;
  /** The control words of every worker; this worker's are at `index * CONTROL_BYTES`. */
  control: SharedArrayBuffer;
  index: number;
}

/** A started worker. */
export interface ScanWorkerHandle {
  terminate(): void;
}

/** How a split scan went: all threads answered, or the workers were given up on (see `failure`). */
export interface ScanThreadsState {
  /** Threads scans are split over now: the host's count, or 1 once the workers failed. */
  threads: number;
  /** Parts of scans the workers have done so far (the caller's thread does the rest). */
  workerParts: number;
  /** Why the workers were given up on; the scans are then done on the caller's thread alone. */
  failure?: string;
}

// Control words of one worker, one 64-byte line each so workers do not share a cache line.
const CONTROL_WORDS = 16;
const CONTROL_BYTES = CONTROL_WORDS * 4;
/** Bumped by the caller for each job; set to CLOSED to stop the worker. */
const REQUEST = 0;
/** Set by the worker to the job's REQUEST once it is done. */
const DONE = 1;
/** 0 when the kernel returned, 1 when it threw. */
const STATUS = 2;
/** Set to 1 by the worker once it has instantiated its kernels. */
const READY = 3;
const KERNEL = 4;
/** The kernel's arguments, from here. */
const ARGUMENTS = 5;
const CLOSED = -1;
const KERNEL_F32 = 0;
const KERNEL_I8 = 1;

/** Fewer rows than this per thread are scanned on the caller's thread alone: the handoff would cost more. */
export const MIN_ROWS_PER_THREAD = 4096;

/**
 * How long the caller waits for a worker's part before doing it itself and giving up on the
 * workers. A part of a full scan takes milliseconds; only a dead or starved worker comes near this.
 */
const WORKER_WAIT_MS = 10_000;

// The worker: instantiates the kernels over the shared memory, then runs jobs until closed. A
// plain string, so it survives any bundler and needs no file of its own in the package.
const WORKER_SOURCE = `
const words = new Int32Array(data.control, data.index * ${CONTROL_BYTES}, ${CONTROL_WORDS});
const imports = { env: { memory: data.memory } };
const f32 = new WebAssembly.Instance(data.modules[0], imports).exports.dot_f32_all;
const i8 = new WebAssembly.Instance(data.modules[1], imports).exports.dot_i8_all;
const a = ${ARGUMENTS};
Atomics.store(words, ${READY}, 1);
let seen = 0;
for (;;) {
  Atomics.wait(words, ${REQUEST}, seen);
  seen = Atomics.load(words, ${REQUEST});
  if (seen === ${CLOSED}) break;
  let status = 0;
  try {
    if (words[${KERNEL}] === ${KERNEL_F32}) f32(words[a], words[a + 1], words[a + 2], words[a + 3], words[a + 4]);
    else i8(words[a], words[a + 1], words[a + 2], words[a + 3], words[a + 4], words[a + 5]);
  } catch {
    status = 1;
  }
  Atomics.store(words, ${STATUS}, status);
  Atomics.store(words, ${DONE}, seen);
  Atomics.notify(words, ${DONE});
}
`;

type Kernel = (...args: number[]) => void;

/** Whether this runtime can share a WebAssembly memory between threads and wait on it. */
export function sharedMemorySupported(): boolean {
  return typeof SharedArrayBuffer === 'function' && typeof Atomics === 'object';
}

/** Checks a host given in settings; a bad one is an InvalidArgumentError naming `argument`. */
export function checkScanThreadHost(host: unknown, argument: string): asserts host is ScanThreadHost {
  const candidate = host as Partial<ScanThreadHost> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.start !== 'function' ||
    !Number.isInteger(candidate.threads) ||
    (candidate.threads as number) < 2
  ) {
    throw new InvalidArgumentError({
      argument,
      value: host,
      message: 'expected a scan thread host: { threads: an integer >= 2, start(source, data, onError) }',
    });
  }
  if (!sharedMemorySupported()) {
    throw new InvalidArgumentError({
      argument,
      message: 'this runtime has no SharedArrayBuffer (browsers need cross-origin isolation)',
    });
  }
}

/**
 * Worker threads sharing one WebAssembly memory, each with its own instances of the kernels: a
 * full scan is cut into one part per thread, the caller's thread takes the first, and waits
 * (synchronously, so no other call can change the memory meanwhile) for the others.
 *
 * Results are those of one thread: every row's score is computed by the same kernel code. If a
 * worker fails, stops answering or has not started yet, the caller scans its part itself; a
 * failure gives the workers up for good and says why in `state`.
 */
export class ScanThreads {
  private readonly words: Int32Array;
  private readonly workers: ScanWorkerHandle[] = [];
  /** Per part of the scan being split: 1 when a worker took it. */
  private readonly handed: Uint8Array;
  /** Per worker: the number of its last job (its REQUEST word, kept here as the word may turn CLOSED). */
  private readonly jobs: Int32Array;
  private failure: string | undefined;
  private workerParts = 0;
  private splitting = false;
  private closed = false;

  constructor(host: ScanThreadHost, modules: readonly object[], memory: WasmMemory) {
    const control = new SharedArrayBuffer((host.threads - 1) * CONTROL_BYTES);
    this.words = new Int32Array(control);
    this.handed = new Uint8Array(host.threads);
    this.jobs = new Int32Array(host.threads - 1);
    for (let index = 0; index < host.threads - 1; index++) {
      const data: ScanWorkerData = { modules, memory, control, index };
      this.workers.push(host.start(WORKER_SOURCE, data, (error) => this.fail(error)));
    }
  }

  get state(): ScanThreadsState {
    const { workerParts, failure } = this;
    if (failure !== undefined) return { threads: 1, workerParts, failure };
    return { threads: this.closed ? 1 : this.workers.length + 1, workerParts };
  }

  /** `scan(first, count)` over rows 0 .. count-1, split across the threads when that pays. */
  dotF32All(direct: Kernel, query: number, base: number, count: number, stride: number, out: number): void {
    const parts = this.parts(count);
    if (parts < 2) {
      direct(query, base, count, stride, out);
      return;
    }
    this.split(KERNEL_F32, parts, count, (first, rows, words, at) => {
      if (words === undefined) return direct(query, base + first * stride * 4, rows, stride, out + first * 4);
      words[at] = query;
      words[at + 1] = base + first * stride * 4;
      words[at + 2] = rows;
      words[at + 3] = stride;
      words[at + 4] = out + first * 4;
    });
  }

  dotI8All(
    direct: Kernel,
    query: number,
    base: number,
    count: number,
    strideBytes: number,
    scales: number,
    out: number,
  ): void {
    const parts = this.parts(count);
    if (parts < 2) {
      direct(query, base, count, strideBytes, scales, out);
      return;
    }
    this.split(KERNEL_I8, parts, count, (first, rows, words, at) => {
      const codes = base + first * strideBytes;
      if (words === undefined)
        return direct(query, codes, rows, strideBytes, scales + first * 4, out + first * 4);
      words[at] = query;
      words[at + 1] = codes;
      words[at + 2] = rows;
      words[at + 3] = strideBytes;
      words[at + 4] = scales + first * 4;
      words[at + 5] = out + first * 4;
    });
  }

  /** Stops the workers; later scans run on the caller's thread. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (let worker = 0; worker < this.workers.length; worker++) {
      Atomics.store(this.words, worker * CONTROL_WORDS + REQUEST, CLOSED);
      Atomics.notify(this.words, worker * CONTROL_WORDS + REQUEST);
    }
    for (const worker of this.workers) worker.terminate();
  }

  /** Parts a scan of `count` rows is cut into: 1 (no split) when the workers are gone or it is small. */
  private parts(count: number): number {
    if (this.closed || this.failure !== undefined) return 1;
    return Math.min(this.workers.length + 1, Math.floor(count / MIN_ROWS_PER_THREAD));
  }

  /**
   * Hands parts 1 .. parts-1 to ready workers (`write` fills their argument words), scans part 0
   * and the parts of workers that were not ready on this thread (`write` without words), then
   * waits for the workers. A worker that failed or timed out has its part scanned here.
   */
  private split(
    kernel: number,
    parts: number,
    count: number,
    write: (first: number, rows: number, words: Int32Array | undefined, at: number) => void,
  ): void {
    const { words, handed, jobs } = this;
    const size = Math.ceil(count / parts);
    this.splitting = true;
    for (let part = 1; part < parts; part++) {
      const base = (part - 1) * CONTROL_WORDS;
      handed[part] = Atomics.load(words, base + READY);
      if (handed[part] !== 1) continue;
      const first = part * size;
      write(first, Math.min(size, count - first), words, base + ARGUMENTS);
      words[base + KERNEL] = kernel;
      jobs[part - 1] = jobs[part - 1]! + 1;
      Atomics.store(words, base + REQUEST, jobs[part - 1]!);
      Atomics.notify(words, base + REQUEST);
    }
    let finished = false;
    try {
      write(0, size, undefined, 0);
      for (let part = 1; part < parts; part++) {
        const first = part * size;
        const rows = Math.min(size, count - first);
        // A part no worker took or could do (it failed, or its kernel threw) is done here, where
        // an error surfaces as itself.
        if (
          handed[part] !== 1 ||
          !this.answered((part - 1) * CONTROL_WORDS, jobs[part - 1]!) ||
          words[(part - 1) * CONTROL_WORDS + STATUS] !== 0
        ) {
          write(first, rows, undefined, 0);
        } else {
          this.workerParts++;
        }
      }
      finished = true;
    } finally {
      // On an error here, the workers' parts still in flight finish before the memory is reused.
      if (!finished) {
        for (let part = 1; part < parts; part++) {
          if (handed[part] === 1) this.answered((part - 1) * CONTROL_WORDS, jobs[part - 1]!);
        }
      }
      this.splitting = false;
      if (this.failure !== undefined) this.close();
    }
  }

  /** Waits for the worker at `base` to finish its job; false (workers given up) if it cannot. */
  private answered(base: number, request: number): boolean {
    const { words } = this;
    if (Atomics.load(words, base + DONE) === request) return true;
    try {
      // DONE still holds the previous job's number until this one is done.
      if (Atomics.wait(words, base + DONE, request - 1, WORKER_WAIT_MS) !== 'timed-out') return true;
    } catch (error) {
      // A browser's main thread may not block: such a host belongs in a worker.
      this.fail(error);
      return false;
    }
    if (Atomics.load(words, base + DONE) === request) return true;
    this.fail(new Error(`a scan worker did not answer within ${WORKER_WAIT_MS} ms`));
    return false;
  }

  /** Gives the workers up; during a split, once the parts in flight are back. */
  private fail(error: unknown): void {
    if (this.failure !== undefined || this.closed) return;
    this.failure = error instanceof Error ? error.message : String(error);
    if (!this.splitting) this.close();
  }
}
