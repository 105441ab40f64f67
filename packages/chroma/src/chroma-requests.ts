import { type RetryFailure, withRetry, withTimeout } from '@zerda/core/backend';
import type { ChromaDriverSettings } from './chroma-settings.js';

/** Chroma client errors after which trying again later may succeed. */
const retryableErrors = new Set(['ChromaConnectionError', 'ChromaServerError', 'ChromaRateLimitError']);

/**
 * One request to the Chroma server: retried while that may help (connection, server and
 * rate-limit errors), the whole bounded by `timeoutMs` and the caller's signal. Failures are
 * BackendErrors naming the server, with the client's error as `cause`.
 */
export function chromaRequest<T>(
  { url, timeoutMs, retry }: Pick<ChromaDriverSettings, 'url' | 'timeoutMs' | 'retry'>,
  operation: string,
  signal: AbortSignal | undefined,
  request: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const classify = (error: unknown) => describeFailure(error, url);
  return withTimeout(
    (bounded) =>
      withRetry(request, { backend: 'chroma', operation, retry, signal: bounded, deadline, classify }),
    { backend: 'chroma', operation, timeoutMs, signal, where: `the Chroma server at ${url}` },
  );
}

/** A Chroma client error as a retry decision and a message naming the server. */
function describeFailure(error: unknown, url: string): RetryFailure {
  const name = error instanceof Error ? error.name : '';
  const reason =
    name === 'ChromaConnectionError'
      ? `cannot reach the Chroma server at ${url}`
      : name === 'ChromaNotFoundError'
        ? `the Chroma server at ${url} did not find the collection or database`
        : `the Chroma server at ${url} answered with an error`;
  const detail = error instanceof Error ? error.message : String(error);
  return { retryable: retryableErrors.has(name), reason, detail };
}
