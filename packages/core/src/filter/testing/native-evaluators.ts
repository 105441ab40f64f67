import { readField } from '../evaluate-filter.js';
import { matchesDocIdFilter } from '../faiss-convention.js';
import type { FilterRecord } from '../types.js';

/*
 * Small evaluators of each backend's NATIVE filter semantics, written from the backends' own
 * documentation, for testing that a convention's translation selects what Zerda's reference
 * evaluator selects. They are strict about form: a filter the real backend would refuse (two
 * keys in a Chroma object, a boolean in a Pinecone `$in`, ...) throws, so a malformed
 * translation fails the test instead of passing by accident.
 *
 * Where a backend's behaviour is uncertain or has changed across versions, an option selects
 * it, and the tests run the translations under every variant.
 */

/** Metadata as a backend stores it: the record's metadata plus its document id under `docIdKey`. */
export function toStoredMetadata(record: FilterRecord, docIdKey = 'docId'): Record<string, unknown> {
  const stored: Record<string, unknown> = { ...record.metadata };
  const docId = readField(record, 'docId');
  if (docId != null) stored[docIdKey] = docId;
  return stored;
}

function storedValue(metadata: Readonly<Record<string, unknown>> | undefined, field: string): unknown {
  if (metadata == null || !Object.hasOwn(metadata, field)) return undefined;
  const value = metadata[field];
  return value === null ? undefined : value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isScalar(value: unknown): value is string | number | boolean {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

class NativeFormError extends Error {}

function refuse(backend: string, message: string, value: unknown): never {
  throw new NativeFormError(`${backend} would refuse this filter: ${message} (${JSON.stringify(value)})`);
}

// ---------------------------------------------------------------------------------------------
// Chroma `where`
// ---------------------------------------------------------------------------------------------

export interface ChromaWhereSemantics {
  /**
   * Reproduce chroma-core/chroma#7491: the local (SQLite) segment truncates a non-integral
   * bound when comparing it with int-stored values (int 2 matches `$eq: 2.5`, `$in: [2.5]`,
   * `$gte: 2.5`). Integral JavaScript numbers are stored as ints. Default false.
   */
  truncateFractionalBoundsForInts?: boolean;
}

/**
 * Chroma's `where` semantics (Chroma >= 0.5.12, 1.x): one key per object; `$and` / `$or` with
 * at least two children; a field takes a scalar (`$eq`) or an object with exactly one operator;
 * `$eq $ne` take a scalar, `$gt $gte $lt $lte` a number, `$in $nin` a non-empty list of one type,
 * `$contains $not_contains` a scalar. Types never match across (a string is not the number 5,
 * a boolean is not a number). Scalar operators never match an array value. `$ne`, `$nin` and
 * `$not_contains` are the complements of `$eq`, `$in` and `$contains`, so they match records
 * without the key. `$contains` matches an array value holding the element.
 */
export function evaluateChromaWhere(
  where: unknown,
  metadata: Readonly<Record<string, unknown>> | undefined,
  semantics: ChromaWhereSemantics = {},
): boolean {
  const truncate = semantics.truncateFractionalBoundsForInts ?? false;
  const bound = (stored: unknown, value: unknown): unknown =>
    truncate &&
    typeof stored === 'number' &&
    Number.isInteger(stored) &&
    typeof value === 'number' &&
    !Number.isInteger(value)
      ? Math.trunc(value)
      : value;
  const equal = (stored: unknown, value: unknown): boolean =>
    stored !== undefined &&
    !Array.isArray(stored) &&
    typeof stored === typeof value &&
    stored === bound(stored, value);

  const evaluate = (node: unknown): boolean => {
    if (!isPlainObject(node)) refuse('Chroma', 'a where filter must be an object', node);
    const keys = Object.keys(node);
    if (keys.length !== 1) refuse('Chroma', 'a where object must have exactly one key', node);
    const key = keys[0]!;
    const operand = node[key];
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(operand) || operand.length < 2)
        refuse('Chroma', `${key} needs at least two filters`, node);
      const results = operand.map(evaluate);
      return key === '$and' ? results.every(Boolean) : results.some(Boolean);
    }
    if (key.startsWith('$')) refuse('Chroma', `unknown logical operator ${key}`, node);
    const stored = storedValue(metadata, key);
    if (isScalar(operand)) return equal(stored, operand);
    if (!isPlainObject(operand) || Object.keys(operand).length !== 1) {
      refuse('Chroma', 'a field takes a scalar or an object with exactly one operator', node);
    }
    const operator = Object.keys(operand)[0]!;
    const value = operand[operator];
    switch (operator) {
      case '$eq':
      case '$ne': {
        if (!isScalar(value)) refuse('Chroma', `${operator} takes a scalar`, node);
        const result = equal(stored, value);
        return operator === '$eq' ? result : !result;
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        if (typeof value !== 'number' || !Number.isFinite(value))
          refuse('Chroma', `${operator} takes a number`, node);
        if (typeof stored !== 'number') return false;
        const limit = bound(stored, value) as number;
        if (operator === '$gt') return stored > limit;
        if (operator === '$gte') return stored >= limit;
        if (operator === '$lt') return stored < limit;
        return stored <= limit;
      }
      case '$in':
      case '$nin': {
        if (!Array.isArray(value) || value.length === 0 || !value.every(isScalar)) {
          refuse('Chroma', `${operator} takes a non-empty list of scalars`, node);
        }
        const kinds = new Set(
          value.map((element) =>
            typeof element === 'number' ? (Number.isInteger(element) ? 'int' : 'float') : typeof element,
          ),
        );
        if (kinds.size !== 1)
          refuse('Chroma', `${operator} takes a list of one type (all ints, all floats, ...)`, node);
        const result = value.some((element) => equal(stored, element));
        return operator === '$in' ? result : !result;
      }
      case '$contains':
      case '$not_contains': {
        if (!isScalar(value)) refuse('Chroma', `${operator} takes a scalar`, node);
        const result = Array.isArray(stored) && stored.some((element) => element === value);
        return operator === '$contains' ? result : !result;
      }
      default:
        return refuse('Chroma', `unknown operator ${operator}`, node);
    }
  };
  return evaluate(where);
}

// ---------------------------------------------------------------------------------------------
// Pinecone `filter`
// ---------------------------------------------------------------------------------------------

export interface PineconeFilterSemantics {
  /**
   * Whether `$ne` / `$nin` match a record that lacks the field. Pinecone's answer changed in
   * 2024 (now: they do not); the conventions must be right either way. Default false.
   */
  negationsMatchMissing?: boolean;
}

/**
 * Pinecone's filter semantics: an object's keys are ANDed; `$and` / `$or` take a non-empty list;
 * a field takes a scalar (`$eq`) or an object of operators (ANDed). `$eq $ne` take a string,
 * number or boolean; `$gt $gte $lt $lte` a number; `$in $nin` a non-empty list of strings and
 * numbers (no booleans); `$exists` a boolean. A list-of-strings value takes on each of its values:
 * `$eq` / `$in` match when any element does, `$ne` / `$nin` when none does. Range operators match
 * numbers only. Numbers are 64-bit floats.
 */
export function evaluatePineconeFilter(
  filter: unknown,
  metadata: Readonly<Record<string, unknown>> | undefined,
  semantics: PineconeFilterSemantics = {},
): boolean {
  const missingMatchesNegation = semantics.negationsMatchMissing ?? false;
  const has = (stored: unknown, value: unknown): boolean =>
    Array.isArray(stored) ? stored.includes(value) : stored === value;

  const evaluate = (node: unknown): boolean => {
    if (!isPlainObject(node)) refuse('Pinecone', 'a filter must be an object', node);
    return Object.keys(node).every((key) => {
      const operand = node[key];
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(operand) || operand.length === 0)
          refuse('Pinecone', `${key} takes a non-empty list`, node);
        const results = operand.map(evaluate);
        return key === '$and' ? results.every(Boolean) : results.some(Boolean);
      }
      if (key.startsWith('$')) refuse('Pinecone', `unknown logical operator ${key}`, node);
      const stored = storedValue(metadata, key);
      if (isScalar(operand)) return stored !== undefined && has(stored, operand);
      if (!isPlainObject(operand) || Object.keys(operand).length === 0) {
        refuse('Pinecone', 'a field takes a scalar or an object of operators', node);
      }
      return Object.entries(operand).every(([operator, value]) => {
        switch (operator) {
          case '$eq':
            if (!isScalar(value)) refuse('Pinecone', '$eq takes a string, number or boolean', node);
            return stored !== undefined && has(stored, value);
          case '$ne':
            if (!isScalar(value)) refuse('Pinecone', '$ne takes a string, number or boolean', node);
            return stored === undefined ? missingMatchesNegation : !has(stored, value);
          case '$gt':
          case '$gte':
          case '$lt':
          case '$lte': {
            if (typeof value !== 'number' || !Number.isFinite(value))
              refuse('Pinecone', `${operator} takes a number`, node);
            if (typeof stored !== 'number') return false;
            if (operator === '$gt') return stored > value;
            if (operator === '$gte') return stored >= value;
            if (operator === '$lt') return stored < value;
            return stored <= value;
          }
          case '$in':
          case '$nin': {
            if (
              !Array.isArray(value) ||
              value.length === 0 ||
              !value.every((element) => typeof element === 'string' || typeof element === 'number')
            ) {
              refuse('Pinecone', `${operator} takes a non-empty list of strings and numbers`, node);
            }
            if (stored === undefined) return operator === '$nin' && missingMatchesNegation;
            const any = value.some((element) => has(stored, element));
            return operator === '$in' ? any : !any;
          }
          case '$exists':
            if (typeof value !== 'boolean') refuse('Pinecone', '$exists takes a boolean', node);
            return (stored !== undefined) === value;
          default:
            return refuse('Pinecone', `unknown operator ${operator}`, node);
        }
      });
    });
  };
  return evaluate(filter);
}

// ---------------------------------------------------------------------------------------------
// FAISS `docIdFilter`
// ---------------------------------------------------------------------------------------------

/** The FAISS store's native filter: an allow-list of document ids (see `faissFilterConvention`). */
export function evaluateDocIdFilter(allowed: unknown, record: FilterRecord): boolean {
  if (!Array.isArray(allowed) || !allowed.every((id) => typeof id === 'string')) {
    refuse('FAISS', 'docIdFilter takes a list of document ids', allowed);
  }
  return matchesDocIdFilter(allowed as string[], record);
}
