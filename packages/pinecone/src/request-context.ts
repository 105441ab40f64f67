import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What one attempt of a store operation learns about its HTTP exchange. The Pinecone client turns
 * responses into errors without their headers (a 429's Retry-After is lost) and has no way to
 * cancel a request; a client the store builds itself gets `observingFetch`, which reads this
 * attempt's state from async context: it aborts the request with the attempt's signal and records
 * the status and Retry-After of the response.
 */
export interface AttemptState {
  /** Aborted when the caller's signal fires or the attempt times out. */
  readonly signal: AbortSignal;
  /** Status of the last response seen by this attempt. */
  status?: number;
  /** Retry-After of the last response, in milliseconds. */
  retryAfterMs?: number;
  /** Whether a response or a failure came through `observingFetch` (the store built the client). */
  observed?: boolean;
}

export const attemptStorage = new AsyncLocalStorage<AttemptState>();

type Fetch = typeof globalThis.fetch;

/** A fetch for the Pinecone client that honours the current attempt's signal and records what it sees. */
export function observingFetch(base: Fetch = globalThis.fetch): Fetch {
  return async (input, init) => {
    const attempt = attemptStorage.getStore();
    if (attempt === undefined) return base(input, init);
    const signal = init?.signal ? AbortSignal.any([init.signal, attempt.signal]) : attempt.signal;
    attempt.observed = true;
    const response = await base(input, { ...init, signal });
    attempt.status = response.status;
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    if (retryAfter === undefined) delete attempt.retryAfterMs;
    else attempt.retryAfterMs = retryAfter;
    return response;
  };
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
