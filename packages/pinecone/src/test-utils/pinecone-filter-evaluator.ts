/*
 * An evaluator of Pinecone's NATIVE filter semantics, written from Pinecone's documentation, for
 * testing that the convention's translations select what Zerda's reference evaluator selects
 * (and for the loopback server's queries). Strict about form: a filter Pinecone would refuse (a
 * boolean in `$in`, an unknown operator, ...) throws, so a malformed translation fails the test
 * instead of passing by accident. Where Pinecone's behaviour changed across versions, an option
 * selects it, and the tests run the translations under every variant.
 */

export interface PineconeFilterSemantics {
  /**
   * Whether `$ne` / `$nin` match a record that lacks the field. Pinecone's answer changed in
   * 2024 (now: they do not); the convention must be right either way. Default false.
   */
  negationsMatchMissing?: boolean;
}

/** Thrown for a filter Pinecone would refuse. */
export class PineconeFilterFormError extends Error {}

function refuse(message: string, value: unknown): never {
  throw new PineconeFilterFormError(
    `Pinecone would refuse this filter: ${message} (${JSON.stringify(value)})`,
  );
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
  const storedValue = (field: string): unknown => {
    if (metadata == null || !Object.hasOwn(metadata, field)) return undefined;
    const value = metadata[field];
    return value === null ? undefined : value;
  };

  const evaluate = (node: unknown): boolean => {
    if (!isPlainObject(node)) refuse('a filter must be an object', node);
    return Object.keys(node).every((key) => {
      const operand = node[key];
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(operand) || operand.length === 0) refuse(`${key} takes a non-empty list`, node);
        const results = operand.map(evaluate);
        return key === '$and' ? results.every(Boolean) : results.some(Boolean);
      }
      if (key.startsWith('$')) refuse(`unknown logical operator ${key}`, node);
      const stored = storedValue(key);
      if (isScalar(operand)) return stored !== undefined && has(stored, operand);
      if (!isPlainObject(operand) || Object.keys(operand).length === 0) {
        refuse('a field takes a scalar or an object of operators', node);
      }
      return Object.entries(operand).every(([operator, value]) => {
        switch (operator) {
          case '$eq':
            if (!isScalar(value)) refuse('$eq takes a string, number or boolean', node);
            return stored !== undefined && has(stored, value);
          case '$ne':
            if (!isScalar(value)) refuse('$ne takes a string, number or boolean', node);
            return stored === undefined ? missingMatchesNegation : !has(stored, value);
          case '$gt':
          case '$gte':
          case '$lt':
          case '$lte': {
            if (typeof value !== 'number' || !Number.isFinite(value))
              refuse(`${operator} takes a number`, node);
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
              refuse(`${operator} takes a non-empty list of strings and numbers`, node);
            }
            if (stored === undefined) return operator === '$nin' && missingMatchesNegation;
            const any = value.some((element) => has(stored, element));
            return operator === '$in' ? any : !any;
          }
          case '$exists':
            if (typeof value !== 'boolean') refuse('$exists takes a boolean', node);
            return (stored !== undefined) === value;
          default:
            return refuse(`unknown operator ${operator}`, node);
        }
      });
    });
  };
  return evaluate(filter);
}
