import { BackendError, InvalidArgumentError, throwIfAborted, ZerdaError } from '../errors/index.js';
import { sleep } from './timeout.js';

/** How a backend retries a request that failed in a way that may pass (429, 5xx, connection, timeout). */
export interface RetrySettings {
  /** Tries after the first (default 5, so 6 attempts in all); 0 turns retries off. */
  maxRetries?: number;
  /** Backoff before the first retry (default 250 ms); doubled each retry, with jitter. */
  initialDelayMs?: number;
  /** Longest backoff (default 20,000 ms). */
  maxDelayMs?: number;
  /**
   * Longest Retry-After honoured (default 60,000 ms). A failure whose Retry-After asks for longer
   * ends the retries with an error saying so, rather than sleeping for minutes.
   */
  maxRetryAfterMs?: number;
}

export type ResolvedRetrySettings = Required<RetrySettings>;

/** What a backend says about one failure, so the retry loop knows what to do. */
export interface RetryFailure {
  /** Trying again later may succeed. */
  retryable: boolean;
  /** Short, for logs and messages: '429 Too Many Requests', 'connection failed', ... */
  reason: string;
  /** What the server said, for the final error's message (not the retry events): kept short, secrets removed. */
  detail?: string | undefined;
  /** The wait the server asked for (Retry-After), in ms. */
  retryAfterMs?: number | undefined;
  status?: number | undefined;
}

/** What `onRetry` is told before each retry. */
export interface RetryEvent {
  operation: string;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  /** Attempts allowed in all. */
  attempts: number;
  /** How long the backend waits before the next attempt. */
  delayMs: number;
  reason: string;
  status?: number;
  retryAfterMs?: number;
}

export interface RetryOptions {
  backend: string;
  operation: string;
  retry?: RetrySettings | ResolvedRetrySettings | undefined;
  signal?: AbortSignal | undefined;
  /** Describes a failure (Zerda's own errors are never retried unless `retryable` BackendErrors). */
  classify: (error: unknown) => RetryFailure;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** Random source for the jitter (default Math.random), for deterministic tests. */
  random?: () => number;
  /**
   * For a call bounded as a whole (`withTimeout` around `withRetry`): the time (as `Date.now()`)
   * after which no retry starts. A failure whose backoff would end later is thrown at once, so the
   * caller gets the real failure rather than the timeout.
   */
  deadline?: number | undefined;
}

/** The settings with their defaults, checked: InvalidArgumentError naming a bad one. */
export function resolveRetrySettings(settings: RetrySettings = {}): ResolvedRetrySettings {
  const resolved = {
    maxRetries: settings.maxRetries ?? 5,
    initialDelayMs: settings.initialDelayMs ?? 250,
    maxDelayMs: settings.maxDelayMs ?? 20_000,
    maxRetryAfterMs: settings.maxRetryAfterMs ?? 60_000,
  };
  for (const [key, value] of Object.entries(resolved)) {
    if (!Number.isFinite(value) || value < 0 || (key === 'maxRetries' && !Number.isInteger(value))) {
      throw new InvalidArgumentError({
        argument: `retry.${key}`,
        value,
        message: 'expected a non-negative number (an integer for maxRetries)',
      });
    }
  }
  return resolved;
}

/**
 * Runs one request with retries: exponential backoff with jitter (half fixed, half random) on
 * failures that `classify` calls retryable, honouring Retry-After; other failures end at once.
 * A Zerda error passes through unless it is a retryable BackendError (a timeout from
 * `withTimeout`, say). Every other failure becomes a BackendError whose message names the attempts.
 */
export async function withRetry<T>(
  request: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const settings = resolveRetrySettings(options.retry);
  const attempts = settings.maxRetries + 1;
  const random = options.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(options.signal);
    try {
      return await request(attempt);
    } catch (error) {
      const zerda = ZerdaError.isInstance(error);
      if (zerda && !(BackendError.isInstance(error) && error.retryable)) throw error;
      const failure: RetryFailure = zerda
        ? { retryable: true, reason: (error as Error).message }
        : options.classify(error);
      if (!failure.retryable) throw toBackendError(options, failure, error, attempt, false);
      if (attempt >= attempts) throw toBackendError(options, failure, error, attempt, true);
      if (failure.retryAfterMs !== undefined && failure.retryAfterMs > settings.maxRetryAfterMs) {
        throw new BackendError({
          backend: options.backend,
          operation: options.operation,
          message: `${failure.reason}: the server asked to wait ${Math.ceil(failure.retryAfterMs / 1000)} s before trying again, longer than retry.maxRetryAfterMs (${settings.maxRetryAfterMs} ms); attempt ${attempt} of ${attempts}`,
          cause: error,
          retryable: true,
        });
      }
      const backoff = Math.min(settings.maxDelayMs, settings.initialDelayMs * 2 ** (attempt - 1));
      const jittered = backoff / 2 + (random() * backoff) / 2;
      const delayMs = Math.round(Math.max(jittered, failure.retryAfterMs ?? 0));
      if (options.deadline !== undefined && Date.now() + delayMs >= options.deadline) {
        throw toBackendError(options, failure, error, attempt, attempt > 1);
      }
      const event: RetryEvent = {
        operation: options.operation,
        attempt,
        attempts,
        delayMs,
        reason: failure.reason,
      };
      if (failure.status !== undefined) event.status = failure.status;
      if (failure.retryAfterMs !== undefined) event.retryAfterMs = failure.retryAfterMs;
      options.onRetry?.(event);
      await sleep(delayMs, options.signal);
    }
  }
}

function toBackendError(
  options: RetryOptions,
  failure: RetryFailure,
  error: unknown,
  attempt: number,
  exhausted: boolean,
): BackendError {
  if (!exhausted && BackendError.isInstance(error)) return error;
  const { reason, detail } = failure;
  const described = detail && !reason.includes(detail) ? `${reason} (${detail})` : reason;
  const message = exhausted
    ? `gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}; the last failed with ${described}`
    : described;
  return new BackendError({
    backend: options.backend,
    operation: options.operation,
    message,
    cause: error,
    retryable: failure.retryable,
  });
}

/** Parses an HTTP Retry-After header (seconds or an HTTP date) into ms, or undefined. */
export function parseRetryAfter(header: string | null | undefined, now = Date.now()): number | undefined {
  if (header === null || header === undefined || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** HTTP statuses after which trying again later may succeed: 408, 429 and 5xx except 501. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501);
}
