import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.AbortedError';
const symbol = Symbol.for(marker);

/** The operation was cancelled through its AbortSignal. */
export class AbortedError extends ZerdaError {
  private readonly [symbol] = true;

  constructor({ message = 'The operation was aborted', cause }: { message?: string; cause?: unknown } = {}) {
    super({ message, cause }, 'AbortedError');
  }

  static override isInstance(error: unknown): error is AbortedError {
    return hasMarker(error, marker);
  }
}

/** Throws an AbortedError (with the signal's reason as cause) if the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError({ cause: signal.reason });
}
