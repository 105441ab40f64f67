import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.InvalidArgumentError';
const symbol = Symbol.for(marker);

/** A call was made with an argument that cannot be used (for example `k = 0`). */
export class InvalidArgumentError extends ZerdaError {
  private readonly [symbol] = true;
  /** The name of the argument that was wrong. */
  readonly argument: string;
  readonly value: unknown;

  constructor({
    argument,
    value,
    message,
    cause,
  }: { argument: string; value?: unknown; message: string; cause?: unknown }) {
    super({ message: `Invalid argument '${argument}': ${message}`, cause }, 'InvalidArgumentError');
    this.argument = argument;
    this.value = value;
  }

  static override isInstance(error: unknown): error is InvalidArgumentError {
    return hasMarker(error, marker);
  }
}
