import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.ChunkValidationError';
const symbol = Symbol.for(marker);

export interface ChunkProblem {
  /** Position of the chunk in the batch that was given. */
  index: number;
  /** The chunk's id where it had one. */
  id?: string;
  /** What was wrong with it. */
  reason: string;
}

/**
 * One or more chunks of a batch could not be accepted. Lists every bad chunk; the batch
 * was refused as a whole, so nothing of it was written.
 */
export class ChunkValidationError extends ZerdaError {
  private readonly [symbol] = true;
  readonly problems: ChunkProblem[];

  constructor({ problems, message, cause }: { problems: ChunkProblem[]; message?: string; cause?: unknown }) {
    super(
      {
        message: message ?? `${problems.length} invalid chunk(s), nothing was written: ${describe(problems)}`,
        cause,
      },
      'ChunkValidationError',
    );
    this.problems = problems;
  }

  static override isInstance(error: unknown): error is ChunkValidationError {
    return hasMarker(error, marker);
  }
}

function describe(problems: ChunkProblem[]): string {
  const shown = problems
    .slice(0, 5)
    .map((p) => `#${p.index}${p.id === undefined ? '' : ` (id '${p.id}')`}: ${p.reason}`);
  if (problems.length > 5) shown.push(`and ${problems.length - 5} more`);
  return shown.join('; ');
}
