import type {
  AndNode,
  CompareNode,
  EqualityNode,
  EqualityOp,
  ExistsNode,
  FilterNode,
  FilterScalar,
  InNode,
  NotNode,
  OrNode,
  RangeNode,
  RangeOp,
} from './types.js';

// Nodes made here are frozen and remembered, so that `resolveFilter` can tell a parsed tree
// from a user filter that happens to have fields named `kind` or `children`.
const madeHere = new WeakSet<object>();

function register<T extends FilterNode>(node: T): T {
  Object.freeze(node);
  madeHere.add(node);
  return node;
}

/** True for trees returned by `parseFilter` (and the filter module's own transformations). */
export function isFilterNode(value: unknown): value is FilterNode {
  return typeof value === 'object' && value !== null && madeHere.has(value);
}

export function andNode(children: readonly FilterNode[]): AndNode {
  return register({ kind: 'and', children: Object.freeze([...children]) });
}

export function orNode(children: readonly FilterNode[]): OrNode {
  return register({ kind: 'or', children: Object.freeze([...children]) });
}

export function notNode(child: FilterNode): NotNode {
  return register({ kind: 'not', child });
}

export function equalityNode(field: string, op: EqualityOp, value: FilterScalar): EqualityNode {
  return register({ kind: 'compare', field, op, value });
}

export function rangeNode(field: string, op: RangeOp, value: number): RangeNode {
  return register({ kind: 'compare', field, op, value });
}

export function inNode(field: string, values: readonly FilterScalar[], negated: boolean): InNode {
  return register({ kind: 'in', field, values: Object.freeze([...values]), negated });
}

export function existsNode(field: string, exists: boolean): ExistsNode {
  return register({ kind: 'exists', field, exists });
}

/** Narrows a comparison to a range comparison (whose value is a number). */
export function isRangeNode(node: CompareNode): node is RangeNode {
  return node.op !== 'eq' && node.op !== 'ne';
}

/** AND of the given nodes without a needless wrapper: one node stays itself. */
export function conjunction(nodes: readonly FilterNode[]): FilterNode {
  return nodes.length === 1 ? nodes[0]! : andNode(nodes);
}

/** OR of the given nodes without a needless wrapper. */
export function disjunction(nodes: readonly FilterNode[]): FilterNode {
  return nodes.length === 1 ? nodes[0]! : orNode(nodes);
}
