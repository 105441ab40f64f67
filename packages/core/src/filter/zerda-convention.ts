import { FilterError } from '../errors/index.js';
import type { FilterConvention } from './filter-convention.js';
import { parseFilter } from './parse-filter.js';
import { serializeFilter } from './serialize-filter.js';
import type { FilterInput } from './types.js';

/**
 * Zerda's own convention, for drivers that evaluate filters with core's reference evaluator
 * (the in-memory store): the whole language; the native form is the canonical filter JSON of
 * `serializeFilter` (the driver parses it back with `parseFilter`, or compiles it).
 */
export const zerdaFilterConvention: FilterConvention<FilterInput> = Object.freeze({
  name: 'zerda',
  canPushDown: () => true,
  translate: serializeFilter,
  checkNative(value: unknown): string | undefined {
    try {
      parseFilter(value as FilterInput);
      return undefined;
    } catch (error) {
      if (FilterError.isInstance(error)) return error.message;
      throw error;
    }
  },
});
