import { InvalidArgumentError } from '../../errors/index.js';
import { checkThreadCount, type ScanThreadHost } from './scan-threads.js';

/** The part of the web's Worker API the host uses (core's TypeScript configuration has no DOM library). */
interface WebWorker {
  postMessage(message: unknown): void;
  terminate(): void;
  addEventListener(type: 'error' | 'messageerror', listener: (event: { message?: string }) => void): void;
}

interface WebGlobals {
  Worker?: new (url: string, options?: { name?: string; type?: 'module' }) => WebWorker;
  Blob?: new (parts: string[], options: { type: string }) => object;
  URL?: { createObjectURL(blob: object): string; revokeObjectURL(url: string): void };
  navigator?: { hardwareConcurrency?: number };
  crossOriginIsolated?: boolean;
}

/**
 * A scan thread host on the web's dedicated workers (browsers, Deno, Bun), for
 * `InMemoryVectorStore({ threads })`: each full scan is split over `threads` threads (default:
 * `navigator.hardwareConcurrency`; with 1, no worker starts), the caller's included. The workers run from a
 * blob URL, which a Content-Security-Policy must allow (`worker-src blob:`). Sharing the store's
 * memory needs `SharedArrayBuffer`, which a browser gives only to a cross-origin isolated page
 * (served with `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy:
 * require-corp`); elsewhere this is an InvalidArgumentError saying so.
 */
export function webScanThreads(threads?: number): ScanThreadHost {
  const web = globalThis as WebGlobals;
  const { Worker, Blob, URL } = web;
  if (Worker === undefined || Blob === undefined || URL === undefined) {
    throw new InvalidArgumentError({
      argument: 'threads',
      message: 'this runtime has no web Worker; in Node use nodeScanThreads() from @zerda/core/node',
    });
  }
  if (typeof SharedArrayBuffer !== 'function' || web.crossOriginIsolated === false) {
    throw new InvalidArgumentError({
      argument: 'threads',
      message:
        'scan threads need SharedArrayBuffer, which a browser gives only to a cross-origin isolated page ' +
        '(Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp)',
    });
  }
  const count = threads ?? web.navigator?.hardwareConcurrency ?? 1;
  checkThreadCount(count);
  return {
    threads: count,
    start(source, data, onError) {
      // The worker's script: on its one message (the data), run the scan loop, which never returns.
      const script = `self.onmessage = (event) => { self.onmessage = null; const data = event.data;\n${source}\n};`;
      const url = URL.createObjectURL(new Blob([script], { type: 'text/javascript' }));
      let worker: WebWorker;
      try {
        // A module worker: the one kind every web runtime (Deno included) starts.
        worker = new Worker(url, { name: 'zerda-scan', type: 'module' });
      } finally {
        // The constructor has resolved the URL to its blob, so it can go now (no timer is left
        // to keep a Deno or Bun process alive).
        URL.revokeObjectURL(url);
      }
      worker.addEventListener('error', (event) =>
        onError(new Error(event.message ?? 'a scan worker failed')),
      );
      worker.addEventListener('messageerror', () =>
        onError(new Error('a scan worker could not receive its data')),
      );
      worker.postMessage(data);
      return { terminate: () => worker.terminate() };
    },
  };
}
