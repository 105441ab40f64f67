// The filter language: one Mongo-style language, parsed and validated once, with one reference
// semantics, and the conventions through which each backend takes the part it can evaluate.

export { compileFilter, evaluateFilter, readField } from './evaluate-filter.js';
export {
  type FilterConvention,
  isNativeFilter,
  type NativeFilter,
  nativeFilter,
} from './filter-convention.js';
export { isFilterNode } from './nodes.js';
export { parseFilter } from './parse-filter.js';
export {
  type FilterTarget,
  type ResolvedFilter,
  type ResolveFilterOptions,
  resolveFilter,
} from './resolve-filter.js';
export { filterFields, serializeFilter } from './serialize-filter.js';
export type {
  AndNode,
  CompareNode,
  CompareOp,
  EqualityNode,
  EqualityOp,
  ExistsNode,
  FieldCondition,
  FieldFilter,
  FieldNode,
  FieldOperators,
  FilterInput,
  FilterNode,
  FilterRecord,
  FilterScalar,
  InNode,
  LogicalFilter,
  NotNode,
  OrNode,
  RangeNode,
  RangeOp,
} from './types.js';
export { zerdaFilterConvention } from './zerda-convention.js';
