import { hasMarker, ZerdaError } from '../errors/zerda-error.js';

const marker = 'zerda.error.DatasetError';
const symbol = Symbol.for(marker);

/**
 * An evaluation file (corpus, queries, judgments or a run) is missing or malformed.
 * The message names the file and, for a bad line, its 1-based line number.
 */
export class DatasetError extends ZerdaError {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: the brand is read through `Symbol.for` by isInstance
  private readonly [symbol] = true;
  /** The file (or folder) that was refused. */
  readonly path: string;
  /** The 1-based line number of the offending line, where there is one. */
  readonly line: number | undefined;

  constructor({
    message,
    path,
    line,
    cause,
  }: { message: string; path: string; line?: number; cause?: unknown }) {
    super({ message: `${line === undefined ? path : `${path}:${line}`}: ${message}`, cause }, 'DatasetError');
    this.path = path;
    this.line = line;
  }

  static override isInstance(error: unknown): error is DatasetError {
    return hasMarker(error, marker);
  }
}
