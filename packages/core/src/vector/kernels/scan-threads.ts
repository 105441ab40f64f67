import { InvalidArgumentError } from '../../errors/index.js';
import type { WasmMemory } from '../../util/webassembly.js';

/**
 * What starts the worker threads a store's full scans are split over: Node's `worker_threads`
 * (`nodeScanThreads()` from `@zerda/core/node`), or any runtime's workers that can share a
 * WebAssembly memory. Core starts its workers through this, so the main entry imports no runtime.
 */
export interface ScanThreadHost {
  /** Threads a scan is split over, the caller's own included (1: no worker is started). */
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
  /**
   * The shared-memory float32 and int8 kernel modules, in that order (the int8 one relaxed SIMD's
   * where the caller's full scans use it).
   */
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
  /** Parts of scans the workers have taken part in so far (the caller's thread does the rest). */
  workerParts: number;
  /**
   * Parts handed to a worker that had not started them by the time the caller had scanned all
   * their chunks itself: a worker thread the machine was slow to schedule.
   */
  takenBack: number;
  /**
   * Chunks of the workers' parts that the caller scanned itself, done with its own part before
   * they were with theirs (a worker woken late, or slowed by the machine).
   */
  stolenChunks: number;
  /** Why the workers were given up on; the scans are then done on the caller's thread alone. */
  failure?: string;
}

/** The state before any scan was split: `threads` (1 without a host), no part done by a worker yet. */
export function unsplitScanThreadsState(threads = 1): ScanThreadsState {
  return { threads, workerParts: 0, takenBack: 0, stolenChunks: 0 };
}

// Control words of one worker, one 64-byte line each so workers do not share a cache line.
const CONTROL_WORDS = 16;
const CONTROL_BYTES = CONTROL_WORDS * 4;
/** Bumped by the caller for each job; set to CLOSED to stop the worker. */
const REQUEST = 0;
/**
 * Set by the worker to each REQUEST it reads once it is done with it, or skipped it (the caller
 * took the job back): it only rises.
 */
const DONE = 1;
/** 0 when the kernel returned, 1 when it threw. */
const STATUS = 2;
/** Set to 1 by the worker once it has instantiated its kernels. */
const READY = 3;
const KERNEL = 4;
/** The kernel's arguments, from here (up to seven words). */
const ARGUMENTS = 5;
/**
 * Who has the job: its number once handed over; the worker swaps that for minus the number when
 * it starts the job, the caller for 0 when it takes the job back (see `takeBack`).
 */
const CLAIM = 12;
/**
 * The next chunk of the part to scan (see `CHUNK_BYTES`): the worker and the caller, once done
 * with its own part, each claim chunks by adding one.
 */
const NEXT = 13;
/** Rows per chunk of the part, and bytes per row. */
const CHUNK_ROWS = 14;
const ROW_BYTES = 15;
/** Set as NEXT when the caller gives a scan up: no chunk is claimed after it. */
const NO_MORE_CHUNKS = 0x3fffffff;
const CLOSED = -1;
const KERNEL_F32 = 0;
const KERNEL_I8 = 1;

/**
 * The size of the chunks a worker's part is claimed in (about 20 µs of one thread's scan): the
 * caller, done with its own part, scans the chunks the worker has not claimed yet, so a worker
 * woken late (a fraction of a millisecond on a virtual machine, more when its thread is not
 * scheduled) delays a scan by one chunk at most, not by what it has left of its part.
 */
const CHUNK_BYTES = 256 * 1024;

/** How far one scan moves the caller's share of the next (a fraction of the rows). */
const SHARE_STEP = 1 / 512;

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
  // Unless the caller took the job back (this worker woke too late).
  if (Atomics.compareExchange(words, ${CLAIM}, seen, -seen) === seen) {
    let status = 0;
    try {
      // The part's chunks, as long as the caller has not claimed them.
      const rows = words[a + 2], chunk = words[${CHUNK_ROWS}], rowBytes = words[${ROW_BYTES}];
      for (let first = Atomics.add(words, ${NEXT}, 1) * chunk; first < rows; first = Atomics.add(words, ${NEXT}, 1) * chunk) {
        const base = words[a + 1] + first * rowBytes, count = Math.min(chunk, rows - first), at = first * 4;
        if (words[${KERNEL}] === ${KERNEL_F32}) f32(words[a], base, count, words[a + 3], words[a + 4] + at);
        else i8(words[a], base, count, words[a + 3], words[a + 4] + at, words[a + 5] + at, words[a + 6] + at);
      }
    } catch {
      status = 1;
    }
    Atomics.store(words, ${STATUS}, status);
  }
  Atomics.store(words, ${DONE}, seen);
  Atomics.notify(words, ${DONE});
}
`;

type Kernel = (...args: number[]) => void;

/** The caller's share of a scan in `parts` parts, kept such that every part is at least half an even one. */
function boundedShare(share: number, parts: number): number {
  const even = 1 / parts;
  return Math.min(Math.max(share, even / 2), 1 - (1 - even) / 2);
}

const ignore = (): void => {};

/** How much longer than an asynchronous wait its keep-alive timer is set for (see `waitFor`). */
const KEEP_ALIVE_MARGIN_MS = 1000;

/** Whether this runtime can share a WebAssembly memory between threads and wait on it. */
export function sharedMemorySupported(): boolean {
  return typeof SharedArrayBuffer === 'function' && typeof Atomics === 'object';
}

/** Checks the thread count asked of a host (`nodeScanThreads`, `webScanThreads`): 1 to 256, the caller's included. */
export function checkThreadCount(threads: number): void {
  if (!Number.isInteger(threads) || threads < 1 || threads > 256) {
    throw new InvalidArgumentError({
      argument: 'threads',
      value: threads,
      message: "expected an integer from 1 to 256 (the caller's thread included)",
    });
  }
}

/** Checks a host given in settings; a bad one is an InvalidArgumentError naming `argument`. */
export function checkScanThreadHost(host: unknown, argument: string): asserts host is ScanThreadHost {
  const candidate = host as Partial<ScanThreadHost> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.start !== 'function' ||
    !Number.isInteger(candidate.threads) ||
    (candidate.threads as number) < 1
  ) {
    throw new InvalidArgumentError({
      argument,
      value: host,
      message: 'expected a scan thread host: { threads: an integer >= 1, start(source, data, onError) }',
    });
  }
  if (!sharedMemorySupported()) {
    throw new InvalidArgumentError({
      argument,
      message: 'this runtime has no SharedArrayBuffer (browsers need cross-origin isolation)',
    });
  }
}

/** `Atomics.waitAsync`, where the runtime has it (not declared by core's TypeScript library). */
type WaitAsync = (
  words: Int32Array,
  index: number,
  value: number,
  timeout: number,
) => { async: boolean; value: 'not-equal' | 'timed-out' | 'ok' | Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;

/**
 * Waits, without blocking, until `words[index]` is no longer `value` or `timeout` ms have passed
 * (`Atomics.waitAsync`, which the caller checks exists).
 */
async function waitFor(words: Int32Array, index: number, value: number, timeout: number): Promise<void> {
  const wait = waitAsync!(words, index, value, timeout);
  if (!wait.async) return;
  // A pending waitAsync does not keep Node's event loop alive, and the workers are unreferenced:
  // without a timer, a process with nothing else to do would exit here. The timer outlives the
  // wait (it is cleared once the wait is over): one ending with it could let the process exit
  // before the wait's own timeout is delivered, which a short wait did.
  const keepAlive = setTimeout(ignore, timeout + KEEP_ALIVE_MARGIN_MS);
  try {
    await wait.value;
  } finally {
    clearTimeout(keepAlive);
  }
}

/**
 * Worker threads sharing one WebAssembly memory, each with its own instances of the kernels: a
 * full scan is cut into one part per thread; the workers take theirs, the caller's thread scans
 * the first part (its size adapts, see `balance`), then lets other work run on its thread (a
 * keyword branch, say), then scans the chunks of the workers' parts they have not claimed yet
 * (see `CHUNK_BYTES`), then waits for the chunks they have asynchronously (`Atomics.waitAsync`;
 * a blocking wait where the runtime lacks it), so that a browser's main thread, which may not
 * block, can split scans too. The caller keeps the memory unchanged until the scan is finished,
 * and starts no other scan meanwhile.
 *
 * Results are those of one thread: every row's score is computed by the same kernel code. If a
 * worker fails, stops answering or is not ready yet, the caller scans its part itself; a failure
 * gives the workers up for good and says why in `state`.
 */
export class ScanThreads {
  private readonly words: Int32Array;
  private readonly workers: ScanWorkerHandle[] = [];
  /** Per part of the scan being split: 1 when a worker took it. */
  private readonly handed: Uint8Array;
  /** Per worker: the number of its last job (its REQUEST word, kept here as the word may turn CLOSED). */
  private readonly jobs: Int32Array;
  // The scan being split: its kernel, its arguments for row 0, and its parts.
  private kernel = KERNEL_F32;
  private direct: Kernel = () => {};
  private query = 0;
  private base = 0;
  private rowBytes = 0;
  /** The kernel's stride argument: float32 values (f32) or bytes (i8) per row. */
  private stride = 0;
  /** The scales and the rows' code sums (i8 only). */
  private scales = 0;
  private sums = 0;
  private out = 0;
  private count = 0;
  private parts = 0;
  /** Rows of part 0, the caller's; the workers' parts have `size` rows each (the last one fewer). */
  private callerRows = 0;
  private size = 0;
  /** Per kernel: the fraction of a scan's rows the caller's thread takes (see `balance`). */
  private readonly callerShare = new Float64Array(2);
  private failure: string | undefined;
  private workerParts = 0;
  private takenBack = 0;
  private stolenChunks = 0;
  /** Rows per chunk of the scan being split. */
  private chunkRows = 0;
  private splitting = false;
  private closed = false;

  constructor(host: ScanThreadHost, modules: readonly object[], memory: WasmMemory) {
    const control = new SharedArrayBuffer((host.threads - 1) * CONTROL_BYTES);
    this.words = new Int32Array(control);
    this.handed = new Uint8Array(host.threads);
    this.callerShare.fill(1 / host.threads);
    this.jobs = new Int32Array(host.threads - 1);
    for (let index = 0; index < host.threads - 1; index++) {
      const data: ScanWorkerData = { modules, memory, control, index };
      try {
        this.workers.push(host.start(WORKER_SOURCE, data, (error) => this.fail(error)));
      } catch (error) {
        // A worker that cannot start (a Content-Security-Policy refusing blob: workers, a
        // resource limit) leaves the store scanning on the caller's thread, saying why.
        this.fail(error);
        return;
      }
    }
  }

  get state(): ScanThreadsState {
    const { workerParts, takenBack, stolenChunks, failure } = this;
    if (failure !== undefined) return { threads: 1, workerParts, takenBack, stolenChunks, failure };
    return { threads: this.closed ? 1 : this.workers.length + 1, workerParts, takenBack, stolenChunks };
  }

  /**
   * `direct` (the float32 kernel) over `count` rows, split when that pays: a promise when workers
   * took parts, undefined when the scan is already done here.
   */
  dotF32AllAsync(
    direct: Kernel,
    query: number,
    base: number,
    count: number,
    stride: number,
    out: number,
  ): Promise<void> | undefined {
    return this.begin(KERNEL_F32, direct, query, base, count, stride * 4, stride, 0, out)
      ? this.finishAsync()
      : undefined;
  }

  /** As `dotF32AllAsync`, for `direct` the int8 kernel (`ScanKernels.dotI8All`, whose arguments these are). */
  dotI8AllAsync(
    direct: Kernel,
    query: number,
    base: number,
    count: number,
    strideBytes: number,
    scales: number,
    out: number,
    sums: number,
  ): Promise<void> | undefined {
    return this.begin(KERNEL_I8, direct, query, base, count, strideBytes, strideBytes, scales, out, sums)
      ? this.finishAsync()
      : undefined;
  }

  /** The fraction of a full scan's rows the caller's thread takes now, per kernel (see `balance`). */
  get callerShares(): { f32: number; i8: number } {
    return { f32: this.callerShare[KERNEL_F32]!, i8: this.callerShare[KERNEL_I8]! };
  }

  /** Stops the workers; later scans run on the caller's thread. Call it with no scan in flight. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (let worker = 0; worker < this.workers.length; worker++) {
      Atomics.store(this.words, worker * CONTROL_WORDS + REQUEST, CLOSED);
      Atomics.notify(this.words, worker * CONTROL_WORDS + REQUEST);
    }
    for (const worker of this.workers) worker.terminate();
  }

  /**
   * Scans on this thread alone (false) when the workers are gone or the scan is small; otherwise
   * hands parts 1 .. parts-1 to the workers that are ready, scans part 0 here (true: the caller
   * then finishes the scan).
   */
  private begin(
    kernel: number,
    direct: Kernel,
    query: number,
    base: number,
    count: number,
    rowBytes: number,
    stride: number,
    scales: number,
    out: number,
    sums = 0,
  ): boolean {
    if (this.splitting) throw new Error('a split scan is already in flight');
    const parts =
      this.closed || this.failure !== undefined
        ? 1
        : Math.min(this.workers.length + 1, Math.floor(count / MIN_ROWS_PER_THREAD));
    if (parts < 2) {
      if (kernel === KERNEL_F32) direct(query, base, count, stride, out);
      else direct(query, base, count, stride, scales, out, sums);
      return false;
    }
    this.kernel = kernel;
    this.direct = direct;
    this.query = query;
    this.base = base;
    this.rowBytes = rowBytes;
    this.stride = stride;
    this.scales = scales;
    this.sums = sums;
    this.out = out;
    this.count = count;
    this.parts = parts;
    this.callerRows = Math.round(count * boundedShare(this.callerShare[kernel]!, parts));
    this.size = Math.ceil((count - this.callerRows) / (parts - 1));
    this.chunkRows = Math.max(1, Math.floor(CHUNK_BYTES / rowBytes));
    this.splitting = true;
    const { words, handed, jobs } = this;
    for (let part = 1; part < parts; part++) {
      const at = (part - 1) * CONTROL_WORDS;
      handed[part] = Atomics.load(words, at + READY);
      if (handed[part] !== 1) continue;
      const first = this.firstRow(part);
      words[at + KERNEL] = kernel;
      words[at + ARGUMENTS] = query;
      words[at + ARGUMENTS + 1] = base + first * rowBytes;
      words[at + ARGUMENTS + 2] = this.rowsOf(part);
      words[at + ARGUMENTS + 3] = stride;
      // f32: (query, base, count, stride, out); i8: (query, base, count, strideBytes, scales, out,
      // sums).
      if (kernel === KERNEL_F32) {
        words[at + ARGUMENTS + 4] = out + first * 4;
      } else {
        words[at + ARGUMENTS + 4] = scales + first * 4;
        words[at + ARGUMENTS + 5] = out + first * 4;
        words[at + ARGUMENTS + 6] = this.sums + first * 4;
      }
      words[at + NEXT] = 0;
      words[at + CHUNK_ROWS] = this.chunkRows;
      words[at + ROW_BYTES] = rowBytes;
      jobs[part - 1] = jobs[part - 1]! + 1;
      Atomics.store(words, at + CLAIM, jobs[part - 1]!);
      Atomics.store(words, at + REQUEST, jobs[part - 1]!);
      Atomics.notify(words, at + REQUEST);
    }
    try {
      this.scanHere(0);
    } catch (error) {
      this.abandon();
      throw error;
    }
    return true;
  }

  /**
   * After an error on this thread: takes back the parts not started, and waits for the others, so
   * that none is still being written when the memory is reused.
   */
  private abandon(): void {
    try {
      for (let part = 1; part < this.parts; part++) {
        Atomics.store(this.words, (part - 1) * CONTROL_WORDS + NEXT, NO_MORE_CHUNKS);
        if (this.handed[part] === 1 && !this.takeBack(part)) this.answered(part);
      }
    } finally {
      this.end();
    }
  }

  /**
   * Finishes the workers' parts: scans here the chunks they have not claimed, then waits for the
   * ones they have. A part no worker took or could do (it failed, or its kernel threw) is scanned
   * here whole, where an error surfaces as itself.
   */
  private async finishAsync(): Promise<void> {
    try {
      // Whatever the caller runs next (a keyword branch, say) runs before this continues.
      await undefined;
      this.balance();
      for (let part = 1; part < this.parts; part++) {
        let done = this.handed[part] === 1;
        if (done) {
          this.steal(part);
          // A worker that has not started its part never will: every chunk was scanned here.
          if (this.takeBack(part)) {
            this.takenBack++;
            continue;
          }
          done = waitAsync === undefined ? this.answered(part) : await this.finished(part);
        }
        this.settle(part, done);
      }
    } catch (error) {
      // No worker may still be writing once the caller's scan has failed.
      this.abandon();
      throw error;
    } finally {
      this.end();
    }
  }

  /** Scans here, claiming them one by one, the chunks of `part` its worker has not claimed. */
  private steal(part: number): void {
    const at = (part - 1) * CONTROL_WORDS;
    const { words, chunkRows } = this;
    const first = this.firstRow(part);
    const rows = this.rowsOf(part);
    for (let start = Atomics.add(words, at + NEXT, 1) * chunkRows; start < rows; ) {
      this.scanRows(first + start, Math.min(chunkRows, rows - start));
      this.stolenChunks++;
      start = Atomics.add(words, at + NEXT, 1) * chunkRows;
    }
  }

  /** Takes back part `part` if its worker has not started it (true: the worker never will). */
  private takeBack(part: number): boolean {
    const job = this.jobs[part - 1]!;
    return Atomics.compareExchange(this.words, (part - 1) * CONTROL_WORDS + CLAIM, job, 0) === job;
  }

  /** Scans part `part` here (whole) unless its worker and the caller did it in chunks. */
  private settle(part: number, done: boolean): void {
    if (done && this.words[(part - 1) * CONTROL_WORDS + STATUS] === 0) this.workerParts++;
    else this.scanHere(part);
  }

  private end(): void {
    this.splitting = false;
    if (this.failure !== undefined) this.close();
  }

  /**
   * Moves rows between the caller and the workers for the next scans of this kernel, once the
   * caller comes to wait: the workers start late (a wake-up takes a fraction of a millisecond on a
   * virtual machine) and the caller may have other work meanwhile, so even parts leave one side
   * idle. A worker still busy gives the caller more rows; all workers done give it fewer. The
   * steps are uneven so that a worker is usually still busy (four times in five): the caller then
   * scans the chunks it has left and waits for one at most, while a worker done first has been
   * idle. (Before the parts were claimed in chunks, the caller waited for a busy worker's whole
   * part, and the steps leaned the other way.)
   */
  private balance(): void {
    let busy = false;
    for (let part = 1; part < this.parts; part++) {
      const at = (part - 1) * CONTROL_WORDS;
      if (this.handed[part] === 1 && Atomics.load(this.words, at + DONE) !== this.jobs[part - 1]) busy = true;
    }
    const share = this.callerShare[this.kernel]! + (busy ? SHARE_STEP : -4 * SHARE_STEP);
    this.callerShare[this.kernel] = boundedShare(share, this.parts);
  }

  private firstRow(part: number): number {
    return part === 0 ? 0 : this.callerRows + (part - 1) * this.size;
  }

  private rowsOf(part: number): number {
    return part === 0 ? this.callerRows : Math.min(this.size, this.count - this.firstRow(part));
  }

  private scanHere(part: number): void {
    this.scanRows(this.firstRow(part), this.rowsOf(part));
  }

  /** Scans `rows` rows from row `first` here. */
  private scanRows(first: number, rows: number): void {
    const base = this.base + first * this.rowBytes;
    const out = this.out + first * 4;
    if (this.kernel === KERNEL_F32) this.direct(this.query, base, rows, this.stride, out);
    else
      this.direct(this.query, base, rows, this.stride, this.scales + first * 4, out, this.sums + first * 4);
  }

  /**
   * Whether the worker of `part` has done its job, waiting for it without blocking; false (and
   * the workers given up) if it does not answer in time.
   */
  private async finished(part: number): Promise<boolean> {
    const at = (part - 1) * CONTROL_WORDS;
    const job = this.jobs[part - 1]!;
    const deadline = performance.now() + WORKER_WAIT_MS;
    // DONE is the last job the worker has seen (one it skipped included), rising to this one.
    for (let seen = Atomics.load(this.words, at + DONE); seen !== job; ) {
      const left = deadline - performance.now();
      if (left <= 0) return this.unanswered();
      await waitFor(this.words, at + DONE, seen, left);
      seen = Atomics.load(this.words, at + DONE);
    }
    return true;
  }

  /**
   * As `finished`, waiting synchronously; false (and the workers given up) also where this thread
   * may not block.
   */
  private answered(part: number): boolean {
    const at = (part - 1) * CONTROL_WORDS;
    const job = this.jobs[part - 1]!;
    const deadline = performance.now() + WORKER_WAIT_MS;
    for (let seen = Atomics.load(this.words, at + DONE); seen !== job; ) {
      const left = deadline - performance.now();
      if (left <= 0) return this.unanswered();
      try {
        Atomics.wait(this.words, at + DONE, seen, left);
      } catch (error) {
        // A browser's main thread may not block: it needs the asynchronous scans.
        this.fail(error);
        return false;
      }
      seen = Atomics.load(this.words, at + DONE);
    }
    return true;
  }

  private unanswered(): false {
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
