import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './io.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** What `parseCommandArgs` returns for a set of options: typed values and the positionals. */
export type ParsedCommandArgs<T extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
>;

/**
 * `node:util` parseArgs in strict mode, with its errors turned into UsageErrors that carry the
 * command's help.
 */
export function parseCommandArgs<T extends Options>(
  argv: string[],
  options: T,
  help: string,
): ParsedCommandArgs<T> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/su, '.'), help);
  }
}

/** A finite number from a flag, within [min, max]. */
export function readNumber(
  value: string | undefined,
  flag: string,
  help: string,
  { min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY, integer = false } = {},
): number | undefined {
  if (value === undefined) return undefined;
  const number = value.trim() === '' ? Number.NaN : Number(value);
  const range = `${min === Number.NEGATIVE_INFINITY ? '' : `>= ${min}`}${
    min !== Number.NEGATIVE_INFINITY && max !== Number.POSITIVE_INFINITY ? ' and ' : ''
  }${max === Number.POSITIVE_INFINITY ? '' : `<= ${max}`}`;
  if (!Number.isFinite(number) || (integer && !Number.isInteger(number)) || number < min || number > max) {
    throw new UsageError(
      `--${flag} must be ${integer ? 'an integer' : 'a number'}${range ? ` ${range}` : ''}, got '${value}'`,
      help,
    );
  }
  return number;
}

/** Nearest-rank percentile of `values` (0 when empty). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}
