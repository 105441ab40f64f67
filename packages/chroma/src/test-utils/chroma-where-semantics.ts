/*
 * Chroma's NATIVE `where` semantics, written from Chroma's documentation, for testing that the
 * convention's translations select what Zerda's reference evaluator selects. Strict about form:
 * a filter the real server would refuse (two keys in one object, a list of mixed types, ...)
 * throws, so a malformed translation fails the test instead of passing by accident.
 */

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

function refuse(message: string, value: unknown): never {
  throw new Error(`Chroma would refuse this filter: ${message} (${JSON.stringify(value)})`);
}

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
    if (!isPlainObject(node)) refuse('a where filter must be an object', node);
    const keys = Object.keys(node);
    if (keys.length !== 1) refuse('a where object must have exactly one key', node);
    const key = keys[0]!;
    const operand = node[key];
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(operand) || operand.length < 2) refuse(`${key} needs at least two filters`, node);
      const results = operand.map(evaluate);
      return key === '$and' ? results.every(Boolean) : results.some(Boolean);
    }
    if (key.startsWith('$')) refuse(`unknown logical operator ${key}`, node);
    const stored = storedValue(metadata, key);
    if (isScalar(operand)) return equal(stored, operand);
    if (!isPlainObject(operand) || Object.keys(operand).length !== 1) {
      refuse('a field takes a scalar or an object with exactly one operator', node);
    }
    const operator = Object.keys(operand)[0]!;
    const value = operand[operator];
    switch (operator) {
      case '$eq':
      case '$ne': {
        if (!isScalar(value)) refuse(`${operator} takes a scalar`, node);
        const result = equal(stored, value);
        return operator === '$eq' ? result : !result;
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        if (typeof value !== 'number' || !Number.isFinite(value)) refuse(`${operator} takes a number`, node);
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
          refuse(`${operator} takes a non-empty list of scalars`, node);
        }
        const kinds = new Set(
          value.map((element) =>
            typeof element === 'number' ? (Number.isInteger(element) ? 'int' : 'float') : typeof element,
          ),
        );
        if (kinds.size !== 1)
          refuse(`${operator} takes a list of one type (all ints, all floats, ...)`, node);
        const result = value.some((element) => equal(stored, element));
        return operator === '$in' ? result : !result;
      }
      case '$contains':
      case '$not_contains': {
        if (!isScalar(value)) refuse(`${operator} takes a scalar`, node);
        const result = Array.isArray(stored) && stored.some((element) => element === value);
        return operator === '$contains' ? result : !result;
      }
      default:
        return refuse(`unknown operator ${operator}`, node);
    }
  };
  return evaluate(where);
}
