import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.RetrievalError';
const symbol = Symbol.for(marker);

/** Every branch of a hybrid query failed; `failures` says why each one did. */
export class RetrievalError extends ZerdaError {
  private readonly [symbol] = true;
  readonly failures: Array<{ branch: string; error: unknown }>;

  constructor({
    failures,
    message,
  }: { failures: Array<{ branch: string; error: unknown }>; message?: string }) {
    super(
      {
        message:
          message ??
          `Every retrieval branch failed: ${failures.map((f) => `${f.branch}: ${f.error instanceof Error ? f.error.message : String(f.error)}`).join('; ')}`,
        cause: failures[0]?.error,
      },
      'RetrievalError',
    );
    this.failures = failures;
  }

  static override isInstance(error: unknown): error is RetrievalError {
    return hasMarker(error, marker);
  }
}
