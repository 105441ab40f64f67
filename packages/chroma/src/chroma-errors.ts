import { AbortedError, BackendError, ZerdaError } from '@zerda/core';

/** Chroma client errors after which trying again later may succeed. */
const retryableErrors = new Set([
  'ChromaConnectionError',
  'ChromaServerError',
  'ChromaRateLimitError',
  'TimeoutError',
]);

/**
 * Zerda's errors pass through; anything else becomes a BackendError (backend 'chroma') that keeps
 * the original as `cause` and says where the server was.
 */
export function wrapChromaError(operation: string, error: unknown, url: string): ZerdaError {
  if (ZerdaError.isInstance(error)) return error;
  const name = error instanceof Error ? error.name : undefined;
  const detail = error instanceof Error ? error.message : String(error);
  const message =
    name === 'ChromaConnectionError'
      ? `cannot reach the Chroma server at ${url} (${detail})`
      : name === 'ChromaNotFoundError'
        ? `the Chroma server at ${url} did not find the collection or database (${detail})`
        : `the Chroma server at ${url} answered with an error: ${detail}`;
  return new BackendError({
    backend: 'chroma',
    operation,
    message,
    cause: error,
    retryable: name !== undefined && retryableErrors.has(name),
  });
}

/** The error given as cause when a request outlives its timeout. */
export class ChromaTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * Runs one request to the server, bounded by `timeoutMs` and the caller's signal: the request
 * itself cannot be cancelled (the chromadb client takes no per-call signal), so on a timeout or
 * an abort the caller gets its error at once and the request's late answer is ignored.
 */
export async function boundedRequest<T>(
  request: () => Promise<T>,
  {
    operation,
    url,
    timeoutMs,
    signal,
  }: { operation: string; url: string; timeoutMs: number; signal: AbortSignal | undefined },
): Promise<T> {
  if (signal?.aborted) throw new AbortedError({ cause: signal.reason });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const work = request().then(
    (value) => value,
    (error: unknown) => {
      throw wrapChromaError(operation, error, url);
    },
  );
  // A request that loses the race must not become an unhandled rejection.
  work.catch(() => {});
  const limits = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const cause = new ChromaTimeoutError(`no answer within ${timeoutMs} ms`);
      reject(
        new BackendError({
          backend: 'chroma',
          operation,
          message: `the Chroma server at ${url} did not answer within ${timeoutMs} ms (timeoutMs)`,
          cause,
          retryable: true,
        }),
      );
    }, timeoutMs);
    if (signal) {
      onAbort = () => reject(new AbortedError({ cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
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
