import {
  type FilterConvention,
  FilterError,
  type FilterNode,
  type FilterScalar,
  type RangeOp,
} from '@zerda/core';
import { isRangeNode, pushNegations } from '@zerda/core/backend';

/** A Chroma `where` filter: one key per object (a field or `$and` / `$or`). */
export type ChromaWhere = Record<string, unknown>;

export interface ChromaFilterConventionOptions {
  /**
   * The metadata key under which the store keeps each chunk's document id: the chunk's `docId`,
   * else its `metadata.docId` (the `docId` pseudo-field). Default `'docId'`.
   */
  docIdKey?: string;
  /**
   * True when the server stores string arrays natively and has `$contains` / `$not_contains`
   * (newer Chroma servers). Default false: the store must then not keep string arrays where
   * filters can see them, because `$eq` on a field holding one cannot mean "contains".
   */
  arrayMetadata?: boolean;
}

/**
 * Chroma's filter convention ('chroma'): Zerda filters as Chroma `where` objects. Chroma wants
 * one key per object (several fields become `$and`, equality is written `{ field: { $eq: v } }`),
 * `$and` / `$or` with at least two children (one child is unwrapped), `$in` / `$nin` lists that
 * are non-empty and of one type. A hand-written `where` (`nativeFilter(chromaFilterConvention,
 * where)`) must be an object; the server checks the rest.
 *
 * Semantics kept equal to Zerda's:
 * - Chroma's `$ne` / `$nin` match records without the key (since 0.5.12), as Zerda's do.
 * - Chroma has no `$not`: negations are pushed to the leaves (De Morgan); `$not` around a range
 *   comparison stays client-side. Chroma has no `$exists`: client-side.
 * - Chroma keeps integral numbers as ints and others as floats, and its local (SQLite) segment
 *   truncates a non-integral bound when comparing it with ints (int 2 matches `$eq: 2.5`,
 *   chroma-core/chroma#7491). Comparisons with a non-integral bound are therefore rewritten with
 *   integral helper bounds so that they select the same records with or without that bug
 *   (`$gte: 2.5` becomes `$and: [{ $gte: 2.5 }, { $ne: 2 }]`).
 * - `id` is not pushed (Chroma's `where` does not see ids); `docId` reads `docIdKey`.
 * - With `arrayMetadata`, string equality also tests `$contains` (and `$ne` also
 *   `$not_contains`), so string-array fields keep Zerda's "any element" semantics. This
 *   assumes, from Chroma's documentation, that `$eq` / `$in` never match an array value and
 *   that `$not_contains` is the complement of `$contains` (matching scalars and missing keys,
 *   as `$ne` does); check it against the server before turning the option on.
 */
export function createChromaFilterConvention(
  options: ChromaFilterConventionOptions = {},
): FilterConvention<ChromaWhere> {
  const docIdKey = options.docIdKey ?? 'docId';
  const arrays = options.arrayMetadata ?? false;

  const mapField = (field: string): string | undefined =>
    field === 'id' ? undefined : field === 'docId' ? docIdKey : field;

  const toWhere = (node: FilterNode): ChromaWhere | undefined => {
    switch (node.kind) {
      case 'and':
      case 'or': {
        if (node.children.length === 0) return undefined;
        const parts: ChromaWhere[] = [];
        for (const child of node.children) {
          const part = toWhere(child);
          if (part === undefined) return undefined;
          parts.push(part);
        }
        return node.kind === 'and' ? allOf(parts) : anyOf(parts);
      }
      case 'compare': {
        const field = mapField(node.field);
        if (field === undefined || !isPortable(node.value)) return undefined;
        if (isRangeNode(node)) return range(field, node.op, node.value);
        return equality(field, node.op, node.value, arrays);
      }
      case 'in': {
        const field = mapField(node.field);
        if (field === undefined || node.values.length === 0 || !node.values.every(isPortable))
          return undefined;
        return membership(field, node.values, node.negated, arrays);
      }
      default:
        // `$exists` and `$not` (left only around ranges and `{}`) have no Chroma form.
        return undefined;
    }
  };

  return Object.freeze({
    name: 'chroma',
    canPushDown: (node: FilterNode) => toWhere(pushNegations(node)) !== undefined,
    translate(node: FilterNode): ChromaWhere {
      const where = toWhere(pushNegations(node));
      if (where === undefined) {
        throw new FilterError({
          path: '',
          value: node,
          reason: 'unsupported',
          message: 'this filter has no Chroma where form (check canPushDown first)',
        });
      }
      return where;
    },
    checkNative(value: unknown): string | undefined {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        const got = Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value;
        return `expected a Chroma where object such as { year: { $gte: 2020 } }, got ${got}`;
      }
      return undefined;
    },
  });
}

/** Chroma's convention with the defaults (`docId` stored as metadata key `docId`, no arrays). */
export const chromaFilterConvention: FilterConvention<ChromaWhere> = createChromaFilterConvention();

// Integers beyond 2^53 are not exact in JavaScript and would not stay ints in Chroma.
function isPortable(value: FilterScalar): boolean {
  return typeof value !== 'number' || Math.abs(value) <= Number.MAX_SAFE_INTEGER;
}

function leaf(field: string, operator: string, value: unknown): ChromaWhere {
  return { [field]: { [operator]: value } };
}

function allOf(parts: readonly ChromaWhere[]): ChromaWhere {
  const flat = parts.flatMap((part) => (Array.isArray(part.$and) ? (part.$and as ChromaWhere[]) : [part]));
  return flat.length === 1 ? flat[0]! : { $and: flat };
}

function anyOf(parts: readonly ChromaWhere[]): ChromaWhere {
  const flat = parts.flatMap((part) => (Array.isArray(part.$or) ? (part.$or as ChromaWhere[]) : [part]));
  return flat.length === 1 ? flat[0]! : { $or: flat };
}

function isFraction(value: FilterScalar): value is number {
  return typeof value === 'number' && !Number.isInteger(value);
}

function equality(field: string, op: 'eq' | 'ne', value: FilterScalar, arrays: boolean): ChromaWhere {
  const base = leaf(field, op === 'eq' ? '$eq' : '$ne', value);
  if (typeof value === 'string' && arrays) {
    return op === 'eq'
      ? anyOf([base, leaf(field, '$contains', value)])
      : allOf([base, leaf(field, '$not_contains', value)]);
  }
  if (!isFraction(value)) return base;
  // An int can never equal a fraction; the helper bound (integral, so exact) removes the int
  // that a truncating server would wrongly match, or adds back the one it would wrongly drop.
  const truncated = Math.trunc(value) + 0; // + 0 turns -0 into 0
  return op === 'eq'
    ? allOf([base, leaf(field, '$ne', truncated)])
    : anyOf([base, leaf(field, '$eq', truncated)]);
}

function range(field: string, op: RangeOp, value: number): ChromaWhere {
  const base = leaf(field, `$${op}`, value);
  if (Number.isInteger(value)) return base;
  // For ints, `x > 2.5` is `x >= 3` and `x < 2.5` is `x <= 2`; each rewrite is exact for floats
  // and ints alike, whether or not the server truncates the fractional bound.
  switch (op) {
    case 'gt':
      return anyOf([base, leaf(field, '$gte', Math.ceil(value) + 0)]);
    case 'gte':
      return allOf([base, leaf(field, '$ne', Math.floor(value) + 0)]);
    case 'lt':
      return anyOf([base, leaf(field, '$lte', Math.floor(value) + 0)]);
    case 'lte':
      return allOf([base, leaf(field, '$ne', Math.ceil(value) + 0)]);
  }
}

function membership(
  field: string,
  values: readonly FilterScalar[],
  negated: boolean,
  arrays: boolean,
): ChromaWhere {
  const strings = unique(values.filter((value): value is string => typeof value === 'string'));
  const booleans = unique(values.filter((value): value is boolean => typeof value === 'boolean'));
  const integers = unique(
    values.filter((value): value is number => typeof value === 'number' && Number.isInteger(value)),
  );
  const fractions = unique(values.filter(isFraction));
  const parts: ChromaWhere[] = [];
  const list = negated ? '$nin' : '$in';
  // Chroma wants each list of one type.
  if (strings.length > 0) {
    parts.push(leaf(field, list, strings));
    if (arrays)
      for (const value of strings) parts.push(leaf(field, negated ? '$not_contains' : '$contains', value));
  }
  if (booleans.length > 0) parts.push(leaf(field, list, booleans));
  if (integers.length > 0) parts.push(leaf(field, list, integers));
  if (fractions.length > 0) {
    const truncated = unique(fractions.map((value) => Math.trunc(value) + 0));
    // As for $eq / $ne: exclude (or add back) the ints a truncating server would confuse.
    parts.push(
      negated
        ? anyOf([leaf(field, '$nin', fractions), leaf(field, '$in', truncated)])
        : allOf([leaf(field, '$in', fractions), leaf(field, '$nin', truncated)]),
    );
  }
  return negated ? allOf(parts) : anyOf(parts);
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
