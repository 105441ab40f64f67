import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.BackendError';
const symbol = Symbol.for(marker);

/**
 * A vector database (or another outside service) failed: unreachable, timed out, or refused the
 * request. The backend's own error is kept as `cause`.
 */
export class BackendError extends ZerdaError {
  private readonly [symbol] = true;
  /** The backend's name, for example 'chroma'. */
  readonly backend: string;
  /** What was being done, for example 'search' or 'add'. */
  readonly operation: string;
  /** True when trying again later may succeed (timeouts, 429, 5xx, connection failures). */
  readonly retryable: boolean;

  constructor({
    backend,
    operation,
    message,
    cause,
    retryable = false,
  }: { backend: string; operation: string; message: string; cause?: unknown; retryable?: boolean }) {
    super({ message: `${backend} ${operation} failed: ${message}`, cause }, 'BackendError');
    this.backend = backend;
    this.operation = operation;
    this.retryable = retryable;
  }

  static override isInstance(error: unknown): error is BackendError {
    return hasMarker(error, marker);
  }
}
