import { AbortedError, BackendError, InvalidArgumentError, throwIfAborted, ZerdaError } from '@zerda/core';
import { type AttemptState, attemptStorage } from './request-context.js';

/** How the store retries a request that failed in a way that may pass (429, 5xx, connection, timeout). */
export interface RetrySettings {
  /** Tries after the first (default 5, so 6 attempts in all). */
  maxRetries?: number;
  /** Backoff before the first retry (default 250 ms); doubled each retry, with jitter. */
  initialDelayMs?: number;
  /** Longest backoff (default 20,000 ms). */
  maxDelayMs?: number;
  /**
   * Longest Retry-After honoured (default 60,000 ms). A 429 or 503 whose Retry-After asks for
   * longer ends the retries with an error saying so, rather than sleeping for minutes.
   */
  maxRetryAfterMs?: number;
}

export interface ResolvedRetry {
  maxRetries: number;
  initialDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

/** Where the store reports retries; nothing is logged without one. Never given a secret. */
export interface PineconeLogger {
  warn?(message: string): void;
  debug?(message: string): void;
}

/** What `onRetry` is told before each retry. */
export interface RetryEvent {
  /** The store operation, for example 'upsert'. */
  operation: string;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  /** Attempts allowed in all. */
  attempts: number;
  /** How long the store waits before the next attempt. */
  delayMs: number;
  /** The HTTP status, where there was one. */
  status?: number;
  /** Retry-After, where the response had one. */
  retryAfterMs?: number;
  /** A short description of the failure, for example '429 Too Many Requests'. */
  reason: string;
}

export interface RetryRun {
  backend: string;
  operation: string;
  retry: ResolvedRetry;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  logger?: PineconeLogger | undefined;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** Removes secrets from any text that leaves the store. */
  redact: (text: string) => string;
}

export function resolveRetry(settings: RetrySettings = {}): ResolvedRetry {
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

/** Marks an attempt abandoned by the store's own timeout. */
class AttemptTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'AttemptTimeout';
  }
}

interface Failure {
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
  /** Short, for logs and messages: '429 Too Many Requests', 'connection failed', ... */
  reason: string;
  /** The backend's own words, redacted and shortened. */
  detail?: string;
}

/**
 * Runs one request with retries: exponential backoff with jitter (half fixed, half random) on
 * 429, 5xx (not 501), connection failures and timeouts, honouring Retry-After; other failures
 * end at once. Every failure becomes a BackendError (Zerda's own errors pass through), with
 * `retryable` saying whether trying later may help, and a message naming the attempts made.
 */
export async function withRetry<T>(run: RetryRun, request: () => Promise<T>): Promise<T> {
  const attempts = run.retry.maxRetries + 1;
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(run.signal);
    const state: AttemptState & { controller: AbortController } = (() => {
      const controller = new AbortController();
      return { controller, signal: controller.signal };
    })();
    try {
      return await runAttempt(state, request, run);
    } catch (error) {
      if (ZerdaError.isInstance(error)) throw error;
      scrubSecrets(error, run.redact);
      const failure = describeFailure(error, state, run.redact);
      if (!failure.retryable) throw toBackendError(run, failure, error, attempt, false);
      if (attempt >= attempts) {
        throw toBackendError(run, failure, error, attempt, true);
      }
      if (failure.retryAfterMs !== undefined && failure.retryAfterMs > run.retry.maxRetryAfterMs) {
        throw new BackendError({
          backend: run.backend,
          operation: run.operation,
          message: `${failure.reason}: Pinecone asked to wait ${Math.ceil(failure.retryAfterMs / 1000)} s before trying again, longer than retry.maxRetryAfterMs (${run.retry.maxRetryAfterMs} ms); attempt ${attempt} of ${attempts}`,
          cause: error,
          retryable: true,
        });
      }
      const backoff = Math.min(run.retry.maxDelayMs, run.retry.initialDelayMs * 2 ** (attempt - 1));
      const jittered = backoff / 2 + (Math.random() * backoff) / 2;
      const delayMs = Math.round(Math.max(jittered, failure.retryAfterMs ?? 0));
      const event: RetryEvent = {
        operation: run.operation,
        attempt,
        attempts,
        delayMs,
        reason: failure.reason,
      };
      if (failure.status !== undefined) event.status = failure.status;
      if (failure.retryAfterMs !== undefined) event.retryAfterMs = failure.retryAfterMs;
      run.onRetry?.(event);
      run.logger?.warn?.(
        run.redact(
          `${run.backend} ${run.operation}: attempt ${attempt} of ${attempts} failed (${failure.reason}); retrying in ${delayMs} ms`,
        ),
      );
      await sleep(delayMs, run.signal);
    }
  }
}

function runAttempt<T>(
  state: AttemptState & { controller: AbortController },
  request: () => Promise<T>,
  run: RetryRun,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const signal = run.signal;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    const onAbort = () => {
      state.controller.abort(signal?.reason);
      finish(() => reject(new AbortedError({ cause: signal?.reason })));
    };
    const timer = setTimeout(() => {
      const timeout = new AttemptTimeout(run.timeoutMs);
      state.controller.abort(timeout);
      finish(() => reject(timeout));
    }, run.timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    // A request abandoned by a timeout or an abort may still settle later: its outcome is ignored.
    attemptStorage.run(state, request).then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

const statusText: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The status each of the client's error classes stands for. */
const statusOfError: Record<string, number> = {
  PineconeBadRequestError: 400,
  PineconeAuthorizationError: 401,
  PineconeNotFoundError: 404,
  PineconeMethodNotAllowedError: 405,
  PineconeConflictError: 409,
  PineconeUnprocessableEntityError: 422,
  PineconeInternalServerError: 500,
  PineconeNotImplementedError: 501,
  PineconeUnavailableError: 503,
};

const connectionErrors = new Set(['PineconeConnectionError', 'FetchError', 'PineconeRequestError']);

function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status !== 501);
}

function describeFailure(error: unknown, state: AttemptState, redact: (text: string) => string): Failure {
  const detail = detailOf(error, redact);
  if (error instanceof AttemptTimeout) {
    return { retryable: true, reason: `timed out: ${error.message}` };
  }
  const name = error instanceof Error ? error.name : '';
  // The store's own fetch saw the response: its status is the truth (the client may have
  // replaced it, for example with "max retries exceeded" for a 5xx).
  let status = state.observed ? state.status : undefined;
  if (state.observed && state.status !== undefined && state.status >= 200 && state.status < 300) {
    status = undefined; // the request succeeded and something after it failed
  }
  if (status === undefined && !state.observed) {
    status = statusOfError[name];
    if (status === undefined && name === 'PineconeUnmappedHttpError') {
      const match = /Status: (\d{3})/.exec(error instanceof Error ? error.message : '');
      if (match) status = Number(match[1]);
    }
    if (status === undefined && name === 'PineconeMaxRetriesExceededError') {
      return { retryable: true, reason: 'server error (5xx)', ...withDetail(detail) };
    }
  }
  if (status !== undefined) {
    const failure: Failure = {
      retryable: isRetryableStatus(status),
      status,
      reason: `${status}${statusText[status] ? ` ${statusText[status]}` : ''}`,
      ...withDetail(detail),
    };
    if (state.retryAfterMs !== undefined && state.observed) failure.retryAfterMs = state.retryAfterMs;
    return failure;
  }
  if (connectionErrors.has(name) || isNetworkError(error)) {
    return { retryable: true, reason: `connection failed${causeSummary(error, redact)}` };
  }
  return { retryable: false, reason: name || 'error', ...withDetail(detail) };
}

function withDetail(detail: string | undefined): { detail?: string } {
  return detail === undefined ? {} : { detail };
}

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TypeError' && /fetch failed/i.test(error.message)) return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^(ECONN|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|UND_ERR)/.test(code);
}

/** The innermost cause's message, e.g. ': other side closed' or ': connect ECONNREFUSED 127.0.0.1:9'. */
function causeSummary(error: unknown, redact: (text: string) => string): string {
  let current: unknown = error;
  let innermost: string | undefined;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    if (current.message) innermost = current.message;
    current = (current as { cause?: unknown }).cause;
  }
  if (current != null && typeof current === 'object' && 'message' in current) {
    innermost = String((current as { message: unknown }).message);
  }
  return innermost === undefined ? '' : `: ${shorten(redact(innermost))}`;
}

function detailOf(error: unknown, redact: (text: string) => string): string | undefined {
  if (!(error instanceof Error) || !error.message) return undefined;
  return shorten(redact(error.message));
}

function shorten(text: string, limit = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

function toBackendError(
  run: RetryRun,
  failure: Failure,
  error: unknown,
  attempt: number,
  exhausted: boolean,
): BackendError {
  const detail = failure.detail && !failure.reason.includes(failure.detail) ? ` (${failure.detail})` : '';
  const message = exhausted
    ? `gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}; the last failed with ${failure.reason}${detail}`
    : `${failure.reason}${detail}`;
  return new BackendError({
    backend: run.backend,
    operation: run.operation,
    message,
    cause: error,
    retryable: failure.retryable,
  });
}

/**
 * Removes secrets from the messages and stacks of an error and its causes, in place: the client's
 * errors quote what the server said, and a server (or a proxy) may quote the request's key.
 */
function scrubSecrets(error: unknown, redact: (text: string) => string): void {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current instanceof Error; depth++) {
    for (const field of ['message', 'stack'] as const) {
      const text = current[field];
      if (typeof text !== 'string') continue;
      const clean = redact(text);
      if (clean !== text) {
        try {
          Object.defineProperty(current, field, { value: clean, writable: true, configurable: true });
        } catch {
          // a frozen error: its text is what it is
        }
      }
    }
    current = (current as { cause?: unknown }).cause;
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
