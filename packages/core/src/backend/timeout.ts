import { AbortedError, BackendError } from '../errors/index.js';

/** The error kept as `cause` when a request outlives its timeout. */
export class RequestTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

export interface TimeoutOptions {
  /** Longest wait, in ms. */
  timeoutMs: number;
  /** The caller's signal: when it fires, the wait ends at once with an AbortedError. */
  signal?: AbortSignal | undefined;
  /** Names the backend and operation in the BackendError a timeout becomes. */
  backend: string;
  operation: string;
  /** Says where (for example the server's URL) in the timeout's message. */
  where?: string;
}

/**
 * Runs one request bounded by a timeout and the caller's signal. The request gets a signal of its
 * own that fires on either, for clients that can cancel; for those that cannot, the caller gets
 * its error at once and the late answer is ignored (never an unhandled rejection). A timeout is a
 * retryable BackendError whose cause is a RequestTimeoutError; an abort is an AbortedError.
 */
export async function withTimeout<T>(
  request: (signal: AbortSignal) => Promise<T>,
  { timeoutMs, signal, backend, operation, where }: TimeoutOptions,
): Promise<T> {
  if (signal?.aborted) throw new AbortedError({ cause: signal.reason });
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const work = Promise.resolve().then(() => request(controller.signal));
  work.catch(() => {});
  const limits = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const cause = new RequestTimeoutError(timeoutMs);
      controller.abort(cause);
      reject(
        new BackendError({
          backend,
          operation,
          message: `${where === undefined ? `the ${backend} backend` : where} did not answer within ${timeoutMs} ms (timeoutMs)`,
          cause,
          retryable: true,
        }),
      );
    }, timeoutMs);
    if (signal) {
      onAbort = () => {
        controller.abort(signal.reason);
        reject(new AbortedError({ cause: signal.reason }));
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  limits.catch(() => {});
  try {
    return await Promise.race([work, limits]);
  } finally {
    clearTimeout(timer);
    if (signal && onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** Waits for a shared promise, but stops waiting (AbortedError) when the caller's signal fires. */
export async function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) throw new AbortedError({ cause: signal.reason });
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new AbortedError({ cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** Resolves after `ms`, or rejects with an AbortedError when the signal fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError({ cause: signal.reason }));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError({ cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
