import { AbortedError, throwIfAborted } from '@zerda/core';

/**
 * Waits for `promise`, or rejects with an AbortedError as soon as `signal` fires. LangChain's
 * vector stores and embeddings take no AbortSignal, so the call itself runs on; its late
 * result (or failure) is ignored.
 */
export async function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  throwIfAborted(signal);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new AbortedError({ cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  // A rejection that loses the race must not surface as an unhandled rejection.
  promise.catch(() => {});
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
