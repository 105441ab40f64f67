import { FilterError } from '../errors/index.js';
import {
  andNode,
  conjunction,
  equalityNode,
  existsNode,
  inNode,
  isFilterNode,
  notNode,
  orNode,
  rangeNode,
} from './nodes.js';
import type { FilterNode, FilterScalar, RangeOp } from './types.js';

const rangeOps: Readonly<Record<string, RangeOp>> = { $gt: 'gt', $gte: 'gte', $lt: 'lt', $lte: 'lte' };
const fieldOperators = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists']);

/**
 * Validates a filter written in Zerda's language and parses it into a typed tree.
 *
 * - `{ field: value }` is equality, `{ field: [a, b] }` membership (`$in`), `{ field: { $op: v } }`
 *   an operator; several keys in one object, or several operators on one field, mean AND.
 * - Values are strings, finite numbers and booleans; `$gt $gte $lt $lte` take numbers only;
 *   `$in`/`$nin` take a list (`$in: []` matches nothing, `$nin: []` everything); `$exists` a boolean.
 * - `$and`/`$or` take a non-empty list of filters, `$not` one filter.
 * - `{}` means "no filter": it parses to `{ kind: 'and', children: [] }`, which matches every record.
 * - `id` is the chunk id and `docId` the chunk's document id (see `FilterRecord`).
 *
 * Anything else (unknown operator, wrong value type, `null`, NaN, a nested object as a value,
 * an empty `$and`, a field starting with `$`) is a `FilterError` whose `path` says where, for
 * example `$and[1].price.$gt`. A tree returned by `parseFilter` is returned as it is.
 */
export function parseFilter(input: unknown): FilterNode {
  if (isFilterNode(input)) return input;
  return parseObject(input, '');
}

/** Logical operators nest at most this deep (a deeper or cyclic filter is a FilterError, not a stack overflow). */
const MAX_FILTER_DEPTH = 64;

function parseObject(input: unknown, path: string, depth = 0): FilterNode {
  if (depth > MAX_FILTER_DEPTH) {
    throw new FilterError({
      path,
      value: undefined,
      message: `the filter nests $and, $or and $not more than ${MAX_FILTER_DEPTH} levels deep (or refers to itself)`,
    });
  }
  if (!isPlainObject(input)) {
    throw new FilterError({
      path,
      value: input,
      message: `a filter must be an object, got ${describeValue(input)}`,
    });
  }
  const parts: FilterNode[] = [];
  for (const key of Object.keys(input)) {
    const value = input[key];
    if (key === '$and' || key === '$or') parts.push(parseLogicalList(key, value, join(path, key), depth + 1));
    else if (key === '$not') parts.push(notNode(parseObject(value, join(path, key), depth + 1)));
    else if (key.startsWith('$')) {
      const hint = fieldOperators.has(key)
        ? ` ('${key}' applies to a field: { field: { ${key}: value } })`
        : ' (logical operators are $and, $or, $not)';
      throw new FilterError({ path: join(path, key), value, message: `unknown operator '${key}'${hint}` });
    } else if (key === '') {
      throw new FilterError({ path, value, message: 'a field name must not be empty' });
    } else parts.push(parseField(key, value, join(path, key)));
  }
  // One key stays itself; several (or none: "no filter") become an AND.
  return parts.length === 1 ? parts[0]! : andNode(parts);
}

function parseLogicalList(key: '$and' | '$or', value: unknown, path: string, depth: number): FilterNode {
  if (!Array.isArray(value)) {
    throw new FilterError({
      path,
      value,
      message: `${key} takes a list of filters, got ${describeValue(value)}`,
    });
  }
  if (value.length === 0) {
    throw new FilterError({ path, value, message: `${key} takes a non-empty list of filters` });
  }
  const children = value.map((child, index) => parseObject(child, `${path}[${index}]`, depth));
  return key === '$and' ? andNode(children) : orNode(children);
}

function parseField(field: string, condition: unknown, path: string): FilterNode {
  if (Array.isArray(condition)) return inNode(field, parseScalarList(condition, path), false);
  if (isPlainObject(condition)) return parseOperators(field, condition, path);
  return equalityNode(field, 'eq', parseScalar(condition, path, 'a field'));
}

function parseOperators(field: string, operators: Record<string, unknown>, path: string): FilterNode {
  const keys = Object.keys(operators);
  if (keys.length === 0) {
    throw new FilterError({
      path,
      value: operators,
      message:
        'an operator object needs at least one operator ($eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists)',
    });
  }
  const parts = keys.map((key): FilterNode => {
    const value = operators[key];
    const at = join(path, key);
    switch (key) {
      case '$eq':
      case '$ne':
        return equalityNode(field, key === '$eq' ? 'eq' : 'ne', parseScalar(value, at, key));
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        if (typeof value !== 'number' || !Number.isFinite(value)) {
          throw new FilterError({
            path: at,
            value,
            message: `${key} takes a finite number (range operators compare numbers only), got ${describeValue(value)}`,
          });
        }
        return rangeNode(field, rangeOps[key]!, value);
      case '$in':
      case '$nin':
        if (!Array.isArray(value)) {
          throw new FilterError({
            path: at,
            value,
            message: `${key} takes a list of values, got ${describeValue(value)}`,
          });
        }
        return inNode(field, parseScalarList(value, at), key === '$nin');
      case '$exists':
        if (typeof value !== 'boolean') {
          throw new FilterError({
            path: at,
            value,
            message: `$exists takes true or false, got ${describeValue(value)}`,
          });
        }
        return existsNode(field, value);
      default:
        throw new FilterError({
          path: at,
          value,
          message: key.startsWith('$')
            ? `unknown operator '${key}' (field operators are ${[...fieldOperators].join(', ')})`
            : `a nested object is not a filter value (operators start with '$'; nested fields are not supported)`,
        });
    }
  });
  return conjunction(parts);
}

function parseScalarList(values: readonly unknown[], path: string): FilterScalar[] {
  return values.map((value, index) => parseScalar(value, `${path}[${index}]`, 'a list element'));
}

function parseScalar(value: unknown, path: string, what: string): FilterScalar {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    throw new FilterError({
      path,
      value,
      message: `${what} value must be a finite number, got ${describeValue(value)}`,
    });
  }
  const hint =
    value === null || value === undefined ? ' (to test for a missing field use { $exists: false })' : '';
  throw new FilterError({
    path,
    value,
    message: `${what} value must be a string, a finite number or a boolean, got ${describeValue(value)}${hint}`,
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

const simpleName = /^[A-Za-z_$][\w$-]*$/;

/** `$and[1].price.$gt`; names that would be ambiguous in that notation are quoted. */
export function join(path: string, key: string): string {
  const part = simpleName.test(key) ? key : JSON.stringify(key);
  return path === '' ? part : `${path}.${part}`;
}

/** A short, readable account of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : `number ${value}`;
  if (typeof value === 'string') return `string ${truncate(JSON.stringify(value))}`;
  if (typeof value === 'boolean') return `boolean ${value}`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      return `an instance of ${(value as object).constructor?.name ?? 'a class'}`;
    }
    try {
      return `object ${truncate(JSON.stringify(value))}`;
    } catch {
      return 'an object';
    }
  }
  return typeof value;
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
