import { BackendError } from './backend-error.js';
import { hasMarker } from './zerda-error.js';

const marker = 'zerda.error.BatchWriteError';
const symbol = Symbol.for(marker);

/**
 * A write of several requests failed part-way: some batches were written, others were not.
 * `writtenIds` were confirmed by the backend; `failedIds` were not (refused, never sent because
 * the write stopped, or sent without an answer, in which case the backend may hold them anyway).
 * Upserts are idempotent, so writing `failedIds` again is safe. Both lists are in input order.
 */
export class BatchWriteError extends BackendError {
  private readonly [symbol] = true;
  /** Ids the backend confirmed as written. */
  readonly writtenIds: string[];
  /** Ids not confirmed as written. */
  readonly failedIds: string[];

  constructor({
    backend,
    operation,
    message,
    cause,
    retryable = false,
    writtenIds,
    failedIds,
  }: {
    backend: string;
    operation: string;
    message: string;
    cause?: unknown;
    retryable?: boolean;
    writtenIds: string[];
    failedIds: string[];
  }) {
    super({ backend, operation, message, cause, retryable });
    this.name = 'BatchWriteError';
    this.writtenIds = writtenIds;
    this.failedIds = failedIds;
  }

  static override isInstance(error: unknown): error is BatchWriteError {
    return hasMarker(error, marker);
  }
}
