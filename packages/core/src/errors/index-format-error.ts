import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.IndexFormatError';
const symbol = Symbol.for(marker);

/** A saved index could not be read: corrupt, truncated, of another format or another version. */
export class IndexFormatError extends ZerdaError {
  private readonly [symbol] = true;
  /** The file that was refused, where there was one. */
  readonly path: string | undefined;

  constructor({ message, path, cause }: { message: string; path?: string; cause?: unknown }) {
    super({ message: path === undefined ? message : `${message} (${path})`, cause }, 'IndexFormatError');
    this.path = path;
  }

  static override isInstance(error: unknown): error is IndexFormatError {
    return hasMarker(error, marker);
  }
}
