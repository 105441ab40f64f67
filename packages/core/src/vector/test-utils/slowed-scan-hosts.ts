// Scan thread hosts whose workers are slowed, for the split-scan tests (scan-threads.test.ts and
// the plain-Node script threaded-search-script.ts): each prepends a few lines to the worker's
// source that wrap what the worker calls.
import type { ScanThreadHost } from '../kernels/scan-threads.js';

/** Blocks the worker's thread for `ms` milliseconds (worker source). */
const sleep = (ms: number) => `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${ms})`;

function prepended(host: ScanThreadHost, prelude: string): ScanThreadHost {
  return {
    threads: host.threads,
    start: (source, data, onError) => host.start(`${prelude}\n${source}`, data, onError),
  };
}

/** Every kernel call in the workers starts `ms` late: a worker that has its job but is slow to run it. */
export function kernelsLate(host: ScanThreadHost, ms: number): ScanThreadHost {
  return prepended(
    host,
    `const Instance = WebAssembly.Instance;
WebAssembly.Instance = function (module, imports) {
  const exports = new Instance(module, imports).exports;
  const slowed = {};
  for (const name of Object.keys(exports)) slowed[name] = (...args) => (${sleep(ms)}, exports[name](...args));
  return { exports: slowed };
};`,
  );
}

/**
 * The workers' kernels throw from call `calls + 1` on, a worker that fails partway through its
 * part; each throw adds one to the int32 at byte `counter` of the shared memory.
 */
export function kernelsFailing(host: ScanThreadHost, calls: number, counter: number): ScanThreadHost {
  return prepended(
    host,
    `const Instance = WebAssembly.Instance;
const failures = new Int32Array(data.memory.buffer, ${counter}, 1);
let calls = 0;
WebAssembly.Instance = function (module, imports) {
  const exports = new Instance(module, imports).exports;
  const failing = {};
  for (const name of Object.keys(exports)) {
    failing[name] = (...args) => {
      if (++calls > ${calls}) {
        Atomics.add(failures, 0, 1);
        throw new Error('a scan kernel failed');
      }
      return exports[name](...args);
    };
  }
  return { exports: failing };
};`,
  );
}

/**
 * The workers sleep `ms` each time they wake for a job, before they can start it: threads the
 * machine does not schedule. (Their control word 0 is the job's request.)
 */
export function wakingLate(host: ScanThreadHost, ms: number): ScanThreadHost {
  return prepended(
    host,
    `const wait = Atomics.wait;
Atomics.wait = (words, index, value, timeout) => {
  const result = wait(words, index, value, timeout);
  if (index === 0) ${sleep(ms)};
  return result;
};`,
  );
}
