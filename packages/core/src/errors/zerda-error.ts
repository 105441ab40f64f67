const marker = 'zerda.error';
const symbol = Symbol.for(marker);

export interface ZerdaErrorOptions {
  message: string;
  cause?: unknown;
}

/**
 * Base of every error Zerda throws. Checks use `ZerdaError.isInstance(e)` rather than
 * `instanceof`, because a brand (`Symbol.for`) survives two installed copies of core.
 */
export class ZerdaError extends Error {
  private readonly [symbol] = true;

  constructor({ message, cause }: ZerdaErrorOptions, name = 'ZerdaError') {
    super(message, cause === undefined ? undefined : { cause });
    this.name = name;
  }

  static isInstance(error: unknown): error is ZerdaError {
    return hasMarker(error, marker);
  }
}

/** True when `error` carries the brand `Symbol.for(markerName)`. */
export function hasMarker(error: unknown, markerName: string): boolean {
  const brand = Symbol.for(markerName);
  return (
    error != null &&
    typeof error === 'object' &&
    brand in error &&
    (error as Record<symbol, unknown>)[brand] === true
  );
}
