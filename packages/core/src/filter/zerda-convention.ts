import type { FilterConvention } from './filter-convention.js';
import { serializeFilter } from './serialize-filter.js';

/**
 * Zerda's own convention, for stores that evaluate filters with core's reference evaluator
 * (the in-memory store): option `filter`, the whole language, native form = the canonical
 * filter JSON of `serializeFilter` (the store parses it back with `parseFilter`).
 */
export const zerdaFilterConvention: FilterConvention = Object.freeze({
  name: 'zerda',
  option: 'filter',
  canPushDown: () => true,
  translate: serializeFilter,
});
