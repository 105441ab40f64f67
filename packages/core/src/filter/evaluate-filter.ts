import { isRangeNode } from './nodes.js';
import type { CompareOp, FilterNode, FilterRecord, FilterScalar, RangeOp } from './types.js';

/*
 * Zerda's filter semantics, defined once. Every convention's translation must select exactly
 * what these functions select (the property tests check it).
 *
 * Reading a field: `id` is the record id; `docId` is `record.docId`, or `metadata.docId` when the
 * record has none; any other field is the metadata's own property. `undefined` and `null` are
 * "missing".
 *
 * | condition            | field missing | scalar value s          | string-array value xs          |
 * |----------------------|---------------|-------------------------|--------------------------------|
 * | `$eq v`              | false         | s === v                 | some element === v             |
 * | `$ne v`              | TRUE          | s !== v                 | no element === v               |
 * | `$gt/$gte/$lt/$lte v`| false         | s is a number and s op v| false                          |
 * | `$in [..]`           | false         | s is in the list        | some element is in the list    |
 * | `$nin [..]`          | TRUE          | s is not in the list    | no element is in the list      |
 * | `$exists b`          | b === false   | b === true              | b === true                     |
 *
 * So: a comparison on a field the record lacks does not match, except the negative ones
 * (`$ne`, `$nin`) which match it, as in MongoDB; `$ne` is exactly `$not: { $eq }` and `$nin`
 * exactly `$not: { $in }`. Types are compared strictly: `5` never equals `'5'` (so `$eq` is
 * false and `$ne` true across types). Range operators only ever match numbers. `$in: []`
 * matches nothing and `$nin: []` everything. `{}` (an AND of nothing) matches everything.
 */

type FieldReader = (record: FilterRecord) => unknown;

/** The value a filter sees for `field` on `record` (see the pseudo-fields `id` and `docId`). */
export function readField(record: FilterRecord, field: string): unknown {
  if (field === 'id') return record.id;
  if (field === 'docId') return record.docId ?? metadataValue(record, 'docId');
  return metadataValue(record, field);
}

function metadataValue(record: FilterRecord, field: string): unknown {
  const metadata = record.metadata;
  // Own properties only: a field named 'constructor' must not find Object.prototype's.
  return metadata != null && Object.hasOwn(metadata, field) ? metadata[field] : undefined;
}

function fieldReader(field: string): FieldReader {
  if (field === 'id') return (record) => record.id;
  if (field === 'docId') return (record) => record.docId ?? metadataValue(record, 'docId');
  return (record) => metadataValue(record, field);
}

function equals(actual: unknown, expected: FilterScalar): boolean {
  if (Array.isArray(actual)) return actual.includes(expected);
  return actual === expected;
}

function inRange(actual: unknown, op: RangeOp, bound: number): boolean {
  if (typeof actual !== 'number') return false;
  switch (op) {
    case 'gt':
      return actual > bound;
    case 'gte':
      return actual >= bound;
    case 'lt':
      return actual < bound;
    case 'lte':
      return actual <= bound;
  }
}

function isMember(actual: unknown, values: ReadonlySet<unknown>): boolean {
  if (actual == null) return false;
  if (Array.isArray(actual)) return actual.some((element) => values.has(element));
  return values.has(actual);
}

/** Whether `record` matches the filter (the reference semantics, written above). */
export function evaluateFilter(node: FilterNode, record: FilterRecord): boolean {
  switch (node.kind) {
    case 'and':
      return node.children.every((child) => evaluateFilter(child, record));
    case 'or':
      return node.children.some((child) => evaluateFilter(child, record));
    case 'not':
      return !evaluateFilter(node.child, record);
    case 'compare': {
      const actual = readField(record, node.field);
      if (isRangeNode(node)) return inRange(actual, node.op, node.value);
      return node.op === 'eq' ? equals(actual, node.value) : !equals(actual, node.value);
    }
    case 'in': {
      const member = isMember(readField(record, node.field), new Set(node.values));
      return node.negated ? !member : member;
    }
    case 'exists':
      return (readField(record, node.field) != null) === node.exists;
  }
}

/**
 * Compiles the filter once into a predicate with the same semantics as `evaluateFilter`, for
 * scanning many records: field readers, value sets and range tests are built up front.
 */
export function compileFilter(node: FilterNode): (record: FilterRecord) => boolean {
  switch (node.kind) {
    case 'and': {
      const children = node.children.map(compileFilter);
      if (children.length === 0) return () => true;
      if (children.length === 1) return children[0]!;
      if (children.length === 2) {
        const [first, second] = children as [Predicate, Predicate];
        return (record) => first(record) && second(record);
      }
      return (record) => {
        for (const child of children) if (!child(record)) return false;
        return true;
      };
    }
    case 'or': {
      const children = node.children.map(compileFilter);
      if (children.length === 1) return children[0]!;
      return (record) => {
        for (const child of children) if (child(record)) return true;
        return false;
      };
    }
    case 'not': {
      const child = compileFilter(node.child);
      return (record) => !child(record);
    }
    case 'compare':
      return compileCompare(fieldReader(node.field), node.op, node.value);
    case 'in': {
      const read = fieldReader(node.field);
      const values = new Set<unknown>(node.values);
      return node.negated
        ? (record) => !isMember(read(record), values)
        : (record) => isMember(read(record), values);
    }
    case 'exists': {
      const read = fieldReader(node.field);
      return node.exists ? (record) => read(record) != null : (record) => read(record) == null;
    }
  }
}

type Predicate = (record: FilterRecord) => boolean;

function compileCompare(read: FieldReader, op: CompareOp, value: FilterScalar): Predicate {
  switch (op) {
    case 'eq':
      return (record) => equals(read(record), value);
    case 'ne':
      return (record) => !equals(read(record), value);
    case 'gt':
      return (record) => {
        const actual = read(record);
        return typeof actual === 'number' && actual > (value as number);
      };
    case 'gte':
      return (record) => {
        const actual = read(record);
        return typeof actual === 'number' && actual >= (value as number);
      };
    case 'lt':
      return (record) => {
        const actual = read(record);
        return typeof actual === 'number' && actual < (value as number);
      };
    case 'lte':
      return (record) => {
        const actual = read(record);
        return typeof actual === 'number' && actual <= (value as number);
      };
  }
}
