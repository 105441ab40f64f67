import { AsyncLocalStorage } from 'node:async_hooks';
import { STATUS_CODES } from 'node:http';
import { Pinecone } from '@pinecone-database/pinecone';
import {
  isRetryableStatus,
  parseRetryAfter,
  type ResolvedRetrySettings,
  type RetryEvent,
  type RetryFailure,
  withRetry,
  withTimeout,
} from '@zerda/core/backend';

/*
 * What is Pinecone-specific about a request: the client turns responses into errors without their
 * headers (a 429's Retry-After is lost) and cannot cancel a request, so a client the driver builds
 * gets `observingFetch`, which aborts with the attempt's signal and records the status and
 * Retry-After it saw; `classifyPineconeError` reads that (or the client's error classes) for core's
 * `withRetry`; `scrubSecrets` takes the API key out of every error before anyone sees it.
 */

export interface RequestSettings {
  retry: ResolvedRetrySettings;
  timeoutMs: number;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  logger?: { warn?(message: string): void } | undefined;
}

/**
 * Runs the driver's requests: each bounded by `timeoutMs` and retried per `retry`, retries
 * reported to `onRetry` and the logger, every secret it knows of redacted from what it reports.
 * ES private fields: util.inspect and JSON.stringify never show a key.
 */
export class PineconeRequests {
  readonly #secrets = new Set<string>();
  readonly #redact = redactor(this.#secrets);
  readonly #settings: RequestSettings;

  constructor(settings: RequestSettings) {
    this.#settings = settings;
  }

  /** Remembers a secret to redact; `read` may throw (a client without a readable key has none to hide). */
  addSecret(read: () => unknown): void {
    try {
      const secret = read();
      if (typeof secret === 'string') this.#secrets.add(secret);
    } catch {
      // nothing to hide
    }
  }

  /** A client whose requests this runner observes; the driver retries, so the client does not (they would multiply). */
  createClient(apiKey: string, controllerHostUrl: string | undefined): Pinecone {
    this.#secrets.add(apiKey);
    return new Pinecone({
      apiKey,
      ...(controllerHostUrl ? { controllerHostUrl } : {}),
      maxRetries: 0,
      fetchApi: observingFetch(),
    });
  }

  run<T>(operation: string, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    const { onRetry, logger, timeoutMs, retry } = this.#settings;
    let state: AttemptState | undefined;
    const attempt = (attemptSignal: AbortSignal) => {
      state = { signal: attemptSignal };
      return attemptStorage.run(state, call);
    };
    return withRetry(() => withTimeout(attempt, { timeoutMs, signal, backend: 'pinecone', operation }), {
      backend: 'pinecone',
      operation,
      retry,
      signal,
      classify: (error) => classifyPineconeError(error, state, this.#redact),
      onRetry: (event) => {
        onRetry?.(event);
        const { attempt: failed, attempts, reason, delayMs } = event;
        logger?.warn?.(
          this.#redact(
            `pinecone ${operation}: attempt ${failed} of ${attempts} failed (${reason}); retrying in ${delayMs} ms`,
          ),
        );
      },
    });
  }
}

/** What one attempt learns about its HTTP exchange. */
export interface AttemptState {
  /** Aborted when the caller's signal fires or the attempt times out. */
  readonly signal: AbortSignal;
  status?: number;
  retryAfterMs?: number | undefined;
  /** A response or a failure came through `observingFetch` (the driver built the client). */
  observed?: boolean;
}

export const attemptStorage = new AsyncLocalStorage<AttemptState>();

/** A fetch for the Pinecone client that honours the current attempt's signal and records what it sees. */
export function observingFetch(base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const attempt = attemptStorage.getStore();
    if (attempt === undefined) return base(input, init);
    attempt.observed = true;
    const signal = init?.signal ? AbortSignal.any([init.signal, attempt.signal]) : attempt.signal;
    const response = await base(input, { ...init, signal });
    attempt.status = response.status;
    attempt.retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    return response;
  };
}

/** The status each of the client's error classes stands for (for clients the driver did not build). */
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

/** Describes a failure of the Pinecone client for core's `withRetry` (texts already redacted). */
export function classifyPineconeError(
  error: unknown,
  state: AttemptState | undefined,
  redact: (text: string) => string,
): RetryFailure {
  scrubSecrets(error, redact);
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : '';
  const detail = message ? shorten(redact(message)) : undefined;
  // The driver's own fetch saw the response: its status is the truth (the client may have replaced
  // it, with "max retries exceeded" for a 5xx, say). A 2xx means something after it failed.
  let status = state?.observed ? state.status : (statusOfError[name] ?? unmappedStatus(name, message));
  if (status !== undefined && status >= 200 && status < 300) status = undefined;
  if (status !== undefined) {
    const reason = `${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''}`;
    const retryAfterMs = state?.observed ? state.retryAfterMs : undefined;
    return { retryable: isRetryableStatus(status), status, reason, detail, retryAfterMs };
  }
  if (!state?.observed && name === 'PineconeMaxRetriesExceededError') {
    return { retryable: true, reason: 'server error (5xx)', detail };
  }
  if (connectionErrors.has(name) || isNetworkError(error)) {
    return { retryable: true, reason: `connection failed${innermostMessage(error, redact)}` };
  }
  return { retryable: false, reason: name || 'error', detail };
}

function unmappedStatus(name: string, message: string): number | undefined {
  const match = name === 'PineconeUnmappedHttpError' ? /Status: (\d{3})/.exec(message) : null;
  return match ? Number(match[1]) : undefined;
}

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TypeError' && /fetch failed/i.test(error.message)) return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^(ECONN|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|UND_ERR)/.test(code);
}

/** The innermost cause's message, e.g. ': connect ECONNREFUSED 127.0.0.1:9'. */
function innermostMessage(error: unknown, redact: (text: string) => string): string {
  let current: unknown = error;
  let innermost: string | undefined;
  for (let depth = 0; depth < 6 && current != null && typeof current === 'object'; depth++) {
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string' && message) innermost = message;
    current = (current as { cause?: unknown }).cause;
  }
  return innermost === undefined ? '' : `: ${shorten(redact(innermost))}`;
}

function shorten(text: string, limit = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

/** Replaces each secret (4 characters or more) in a text. */
export function redactor(secrets: ReadonlySet<string>): (text: string) => string {
  return (text) => {
    let result = text;
    for (const secret of secrets) if (secret.length >= 4) result = result.split(secret).join('[redacted]');
    return result;
  };
}

/**
 * Removes secrets from the messages and stacks of an error and its causes, in place: the client's
 * errors quote what the server said, and a server (or a proxy) may quote the request's key.
 */
export function scrubSecrets(error: unknown, redact: (text: string) => string): void {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current instanceof Error; depth++) {
    for (const field of ['message', 'stack'] as const) {
      const text = current[field];
      const clean = typeof text === 'string' ? redact(text) : text;
      if (clean === text) continue;
      try {
        Object.defineProperty(current, field, { value: clean, writable: true, configurable: true });
      } catch {
        // a frozen error: its text is what it is
      }
    }
    current = current.cause;
  }
}
