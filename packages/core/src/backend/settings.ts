import { InvalidArgumentError } from '../errors/index.js';

/**
 * An environment variable, or undefined: read from `process.env` where there is one (Node, Bun,
 * Deno's Node compatibility), so code that reads settings also loads in browsers and edge runtimes.
 */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A setting taken from the options, else the environment, else a default, read when first asked
 * for (credentials are read lazily, at the first request, never at import or construction).
 * A required setting that has none of the three is an InvalidArgumentError naming both sources.
 */
export function lazySetting<T = string>(options: {
  /** The setting's name in the options, for messages (for example 'apiKey'). */
  name: string;
  /** What the user passed. */
  value: T | undefined;
  /** The environment variable to read when `value` is undefined. */
  env?: string;
  /** Turns the variable's text into the setting (default: the text itself). */
  parse?: (text: string) => T;
  defaultValue?: T;
  required?: boolean;
}): () => T | undefined {
  let resolved = false;
  let cached: T | undefined;
  return () => {
    if (resolved) return cached;
    const { name, value, env, parse, defaultValue, required } = options;
    const fromEnv = env === undefined ? undefined : readEnv(env);
    cached =
      value ?? (fromEnv === undefined ? undefined : parse ? parse(fromEnv) : (fromEnv as T)) ?? defaultValue;
    if (cached === undefined && required) {
      throw new InvalidArgumentError({
        argument: name,
        message: `no ${name} was given${env === undefined ? '' : ` and ${env} is not set in the environment`}`,
      });
    }
    resolved = true;
    return cached;
  };
}

/** Checks that each named setting is a positive integer when given; InvalidArgumentError naming the first that is not. */
export function checkPositiveIntegers(settings: Record<string, unknown>): void {
  for (const [argument, value] of Object.entries(settings)) {
    if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value > 0)) {
      throw new InvalidArgumentError({ argument, value, message: 'expected a positive integer' });
    }
  }
}
