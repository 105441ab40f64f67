import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { checkThreadCount, type ScanThreadHost } from './scan-threads.js';

/**
 * A scan thread host on Node's `worker_threads`, for `InMemoryVectorStore({ threads })`: each full
 * scan is split over `threads` threads, the caller's included (default: the machine's available
 * parallelism; with 1, no worker starts). The workers are unreferenced, so they never keep a
 * process alive.
 */
export function nodeScanThreads(threads: number = availableParallelism()): ScanThreadHost {
  checkThreadCount(threads);
  return {
    threads,
    start(source, data, onError) {
      // An eval'd worker is a CommonJS script: `data` comes in as its workerData.
      const worker = new Worker(`const data = require('node:worker_threads').workerData;\n${source}`, {
        eval: true,
        workerData: data,
      });
      worker.unref();
      worker.on('error', onError);
      worker.on('exit', (code) => onError(new Error(`a scan worker exited with code ${code}`)));
      return { terminate: () => void worker.terminate() };
    },
  };
}
