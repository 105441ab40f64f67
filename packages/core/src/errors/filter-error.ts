import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.FilterError';
const symbol = Symbol.for(marker);

/**
 * A metadata filter was refused before any backend was called: `'invalid'` when it is not a
 * well-formed filter (unknown operator, wrong value type, malformed tree), `'unsupported'` when
 * strict mode forbids evaluating part of it client-side.
 */
export class FilterError extends ZerdaError {
  private readonly [symbol] = true;
  /** Where in the filter, for example `$and[1].price.$gt`; `''` is the filter itself. */
  readonly path: string;
  /** The offending value (for 'unsupported', the part that would be evaluated client-side). */
  readonly value: unknown;
  readonly reason: 'invalid' | 'unsupported';

  constructor({
    message,
    path,
    value,
    reason = 'invalid',
    cause,
  }: {
    message: string;
    path: string;
    value?: unknown;
    reason?: 'invalid' | 'unsupported';
    cause?: unknown;
  }) {
    const where = path === '' ? 'the filter root' : `'${path}'`;
    const lead = reason === 'invalid' ? 'Invalid filter' : 'Unsupported filter';
    super({ message: `${lead} at ${where}: ${message}`, cause }, 'FilterError');
    this.path = path;
    this.value = value;
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is FilterError {
    return hasMarker(error, marker);
  }
}
