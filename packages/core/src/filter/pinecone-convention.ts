import { FilterError } from '../errors/index.js';
import type { FilterConvention } from './filter-convention.js';
import { pushNegations } from './normalize-filter.js';
import type { FilterNode, FilterScalar } from './types.js';

/** A Pinecone metadata filter (Mongo-like JSON). */
export type PineconeFilter = Record<string, unknown>;

export interface PineconeFilterConventionOptions {
  /**
   * The metadata key under which the store keeps each chunk's document id: the chunk's `docId`,
   * else its `metadata.docId` (the `docId` pseudo-field). Default `'docId'`.
   */
  docIdKey?: string;
}

/** Pinecone refuses longer `$in` / `$nin` lists. */
const maxListLength = 10_000;

/**
 * Pinecone's convention: option `filter`, Pinecone's Mongo-like language
 * (`$eq $ne $gt $gte $lt $lte $in $nin $exists $and $or`, no `$not`).
 *
 * Semantics kept equal to Zerda's:
 * - Pinecone's `$ne` / `$nin` do not match a record that lacks the field (Pinecone changed this
 *   in 2024), Zerda's do: they are sent as `$or: [{ f: { $ne: v } }, { f: { $exists: false } }]`,
 *   which is right under either behaviour.
 * - Pinecone's `$in` / `$nin` take strings and numbers only: booleans become `$eq` / `$ne`.
 * - No `$not`: negations are pushed to the leaves (De Morgan); `$not` around a range comparison
 *   stays client-side (it would also have to match strings, which no Pinecone operator says).
 * - String lists: Pinecone's `$eq` / `$in` match when any element matches, and its `$ne` /
 *   `$nin` (like MongoDB's) when none does, which is Zerda's rule.
 * - `id` is not pushed (a Pinecone filter does not see ids); `docId` reads `docIdKey`.
 */
export function createPineconeFilterConvention(
  options: PineconeFilterConventionOptions = {},
): FilterConvention {
  const docIdKey = options.docIdKey ?? 'docId';
  const mapField = (field: string): string | undefined =>
    field === 'id' ? undefined : field === 'docId' ? docIdKey : field;

  const toFilter = (node: FilterNode): PineconeFilter | undefined => {
    switch (node.kind) {
      case 'and':
      case 'or': {
        if (node.children.length === 0) return undefined;
        const parts: PineconeFilter[] = [];
        for (const child of node.children) {
          const part = toFilter(child);
          if (part === undefined) return undefined;
          parts.push(part);
        }
        return node.kind === 'and' ? allOf(parts) : anyOf(parts);
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
        // `$not` is left only around ranges and `{}`.
        return undefined;
    }
  };

  return Object.freeze({
    name: 'pinecone',
    option: 'filter',
    canPushDown: (node: FilterNode) => toFilter(pushNegations(node)) !== undefined,
    translate(node: FilterNode): PineconeFilter {
      const filter = toFilter(pushNegations(node));
      if (filter === undefined) {
        throw new FilterError({
          path: '',
          value: node,
          reason: 'unsupported',
          message: 'this filter has no Pinecone form (check canPushDown first)',
        });
      }
      return filter;
    },
  });
}

/** Pinecone's convention with the defaults (`docId` stored as metadata key `docId`). */
export const pineconeFilterConvention: FilterConvention = createPineconeFilterConvention();

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
  const strings = [...new Set(values.filter((value): value is string => typeof value === 'string'))];
  const numbers = [...new Set(values.filter((value): value is number => typeof value === 'number'))];
  const booleans = [...new Set(values.filter((value): value is boolean => typeof value === 'boolean'))];
  const parts: PineconeFilter[] = [];
  // One type per list, so as not to depend on how Pinecone treats mixed lists.
  if (strings.length > 0) parts.push(leaf(field, negated ? '$nin' : '$in', strings));
  if (numbers.length > 0) parts.push(leaf(field, negated ? '$nin' : '$in', numbers));
  for (const value of booleans) parts.push(leaf(field, negated ? '$ne' : '$eq', value));
  return negated ? orMissing(field, allOf(parts)) : anyOf(parts);
}
