import { type FilterConvention, FilterError, type FilterNode, type FilterScalar } from '@zerda/core';
import { pushNegations } from '@zerda/core/backend';

/** A Pinecone metadata filter (Mongo-like JSON). */
export type PineconeFilter = Record<string, unknown>;

export interface PineconeFilterConventionSettings {
  /** Metadata key holding each chunk's document id (its `docId`, else `metadata.docId`). Default 'docId'. */
  docIdKey?: string;
}

/** Pinecone refuses longer `$in` / `$nin` lists. */
const maxListLength = 10_000;
const operators = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists']);

/**
 * Pinecone's convention, `'pinecone'`: its Mongo-like language (`$eq $ne $gt $gte $lt $lte $in
 * $nin $exists $and $or`, no `$not`), with Zerda's semantics kept:
 * - Pinecone's `$ne` / `$nin` do not match a record without the field (since 2024), Zerda's do:
 *   they are sent as `$or: [{ f: { $ne: v } }, { f: { $exists: false } }]`, right either way.
 * - `$in` / `$nin` take strings and numbers only: booleans become `$eq` / `$ne`.
 * - Negations are pushed to the leaves; `$not` around a range stays client-side (it would have
 *   to match strings too), as do `id` (filters do not see record ids) and lists over 10,000.
 * - String lists: `$eq` / `$in` match when any element does, `$ne` / `$nin` when none does.
 * - `docId` reads `docIdKey`.
 */
export function createPineconeFilterConvention(
  settings: PineconeFilterConventionSettings = {},
): FilterConvention<PineconeFilter> {
  const docIdKey = settings.docIdKey ?? 'docId';
  const mapField = (field: string) => (field === 'id' ? undefined : field === 'docId' ? docIdKey : field);

  const toFilter = (node: FilterNode): PineconeFilter | undefined => {
    switch (node.kind) {
      case 'and':
      case 'or': {
        const parts = node.children.map(toFilter);
        if (parts.length === 0 || parts.some((part) => part === undefined)) return undefined;
        return node.kind === 'and' ? allOf(parts as PineconeFilter[]) : anyOf(parts as PineconeFilter[]);
      }
      case 'compare': {
        const field = mapField(node.field);
        if (field === undefined) return undefined;
        if (node.op === 'ne') return orMissing(field, leaf(field, '$ne', node.value));
        return leaf(field, `$${node.op}`, node.value);
      }
      case 'in': {
        const field = mapField(node.field);
        if (field === undefined || node.values.length === 0 || node.values.length > maxListLength)
          return undefined;
        return membership(field, node.values, node.negated);
      }
      case 'exists': {
        const field = mapField(node.field);
        return field === undefined ? undefined : leaf(field, '$exists', node.exists);
      }
      default:
        return undefined; // `$not` is left only around ranges and `{}`
    }
  };

  return Object.freeze({
    name: 'pinecone',
    canPushDown: (node: FilterNode) => toFilter(pushNegations(node)) !== undefined,
    translate(node: FilterNode): PineconeFilter {
      const filter = toFilter(pushNegations(node));
      if (filter !== undefined) return filter;
      throw new FilterError({
        path: '',
        value: node,
        reason: 'unsupported',
        message: 'this filter has no Pinecone form (check canPushDown first)',
      });
    },
    checkNative: (value: unknown) => problemOf(value, ''),
  });
}

/** Pinecone's convention with the defaults (the document id under metadata key `docId`). */
export const pineconeFilterConvention = createPineconeFilterConvention();

/** What is wrong with a hand-written Pinecone filter (its shape, not its values), or undefined. */
function problemOf(value: unknown, path: string): string | undefined {
  if (!isObject(value)) return `${path || 'the filter'} must be an object`;
  for (const [key, operand] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(operand) || operand.length === 0) return `${at} takes a non-empty list of filters`;
      const problem = operand.map((child, i) => problemOf(child, `${at}[${i}]`)).find(Boolean);
      if (problem) return problem;
    } else if (key.startsWith('$')) return `${at}: Pinecone has no logical operator ${key}`;
    else if (isObject(operand)) {
      const unknown = Object.keys(operand).find((operator) => !operators.has(operator));
      if (unknown !== undefined) return `${at}: Pinecone has no operator ${unknown}`;
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function leaf(field: string, operator: string, value: unknown): PineconeFilter {
  return { [field]: { [operator]: value } };
}

/** Zerda's negative operators also match a record without the field. */
function orMissing(field: string, present: PineconeFilter): PineconeFilter {
  return { $or: [present, leaf(field, '$exists', false)] };
}

function allOf(parts: readonly PineconeFilter[]): PineconeFilter {
  const flat = parts.flatMap((part) => (Array.isArray(part.$and) ? (part.$and as PineconeFilter[]) : [part]));
  return flat.length === 1 ? flat[0]! : { $and: flat };
}

function anyOf(parts: readonly PineconeFilter[]): PineconeFilter {
  const flat = parts.flatMap((part) => (Array.isArray(part.$or) ? (part.$or as PineconeFilter[]) : [part]));
  return flat.length === 1 ? flat[0]! : { $or: flat };
}

function membership(field: string, values: readonly FilterScalar[], negated: boolean): PineconeFilter {
  const ofType = (type: string) => [...new Set(values.filter((value) => typeof value === type))];
  // One type per list, so as not to depend on how Pinecone treats mixed lists.
  const parts = [ofType('string'), ofType('number')]
    .filter((list) => list.length > 0)
    .map((list) => leaf(field, negated ? '$nin' : '$in', list));
  for (const value of ofType('boolean')) parts.push(leaf(field, negated ? '$ne' : '$eq', value));
  return negated ? orMissing(field, allOf(parts)) : anyOf(parts);
}
