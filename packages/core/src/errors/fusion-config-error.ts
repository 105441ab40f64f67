import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.FusionConfigError';
const symbol = Symbol.for(marker);

/**
 * A fusion setting (the versioned JSON object that `zerda tune` writes and every hybrid entry
 * point reads) was refused: another version, an unknown key, a value of the wrong type or out of
 * range (a negative or non-finite weight, for example). The message names the key.
 */
export class FusionConfigError extends ZerdaError {
  private readonly [symbol] = true;
  /** The offending key, as a path: `version`, `weights.vector`, `guard.minSpread`; `''` is the object itself. */
  readonly key: string;
  readonly value: unknown;
  /** The file it was read from, where there is one. */
  readonly path: string | undefined;

  constructor({
    key,
    value,
    message,
    path,
    cause,
  }: {
    key: string;
    value?: unknown;
    message: string;
    path?: string;
    cause?: unknown;
  }) {
    const where = key === '' ? 'the fusion setting' : `fusion setting key '${key}'`;
    super(
      { message: `${path === undefined ? '' : `${path}: `}${where}: ${message}`, cause },
      'FusionConfigError',
    );
    this.key = key;
    this.value = value;
    this.path = path;
  }

  static override isInstance(error: unknown): error is FusionConfigError {
    return hasMarker(error, marker);
  }
}
