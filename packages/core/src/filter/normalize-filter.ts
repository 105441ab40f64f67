import { andNode, disjunction, equalityNode, existsNode, inNode, notNode } from './nodes.js';
import type { FilterNode } from './types.js';

/*
 * Rewrites that keep Zerda's semantics exactly (see evaluate-filter.ts), used to split a filter
 * and to let conventions without `$not` push negations down.
 */

/**
 * Pushes `not` down to the leaves (De Morgan), using the exact identities of Zerda's semantics:
 * not $eq = $ne, not $in = $nin, not $exists b = $exists !b. A `not` stays only around range
 * comparisons (not $gt 5 also matches strings and missing fields, which no range expresses)
 * and around `{}`.
 */
export function pushNegations(node: FilterNode): FilterNode {
  switch (node.kind) {
    case 'and':
      return andNode(node.children.map(pushNegations));
    case 'or':
      return disjunctionOf(node.children.map(pushNegations));
    case 'not':
      return negate(node.child);
    default:
      return node;
  }
}

function negate(node: FilterNode): FilterNode {
  switch (node.kind) {
    case 'not':
      return pushNegations(node.child);
    case 'and':
      if (node.children.length === 0) return notNode(node);
      return disjunctionOf(node.children.map(negate));
    case 'or':
      return andNode(node.children.map(negate));
    case 'compare':
      if (node.op === 'eq') return equalityNode(node.field, 'ne', node.value);
      if (node.op === 'ne') return equalityNode(node.field, 'eq', node.value);
      return notNode(node);
    case 'in':
      return inNode(node.field, node.values, !node.negated);
    case 'exists':
      return existsNode(node.field, !node.exists);
  }
}

function disjunctionOf(children: FilterNode[]): FilterNode {
  // An OR of nothing is never produced: the parser refuses `$or: []`.
  return children.length === 0 ? notNode(andNode([])) : disjunction(children);
}

/**
 * Flattens nested AND/OR, drops `{}` inside an AND, turns an OR with a `{}` branch into `{}`,
 * removes double negation and single-child wrappers.
 */
export function simplifyFilter(node: FilterNode): FilterNode {
  switch (node.kind) {
    case 'and': {
      const children: FilterNode[] = [];
      for (const child of node.children.map(simplifyFilter)) {
        if (child.kind === 'and') children.push(...child.children);
        else children.push(child);
      }
      return children.length === 1 ? children[0]! : andNode(children);
    }
    case 'or': {
      const children: FilterNode[] = [];
      for (const child of node.children.map(simplifyFilter)) {
        if (isMatchAll(child)) return child;
        if (child.kind === 'or') children.push(...child.children);
        else children.push(child);
      }
      return disjunction(children);
    }
    case 'not': {
      const child = simplifyFilter(node.child);
      return child.kind === 'not' ? child.child : notNode(child);
    }
    default:
      return node;
  }
}

/** True for `{}`: the AND of nothing, which matches every record. */
export function isMatchAll(node: FilterNode): boolean {
  return node.kind === 'and' && node.children.length === 0;
}

/** The conjuncts of a simplified tree: the root AND's children, or the root alone. */
export function conjunctsOf(node: FilterNode): readonly FilterNode[] {
  return node.kind === 'and' ? node.children : [node];
}
