/** Largest magnitude a float32 holds: Chroma keeps vectors as float32. */
const FLOAT32_MAX = 3.4028234663852886e38;

/** A JavaScript array or a numeric typed array. */
export function isNumberArray(input: unknown): input is ArrayLike<unknown> {
  if (Array.isArray(input)) return true;
  return (
    ArrayBuffer.isView(input) &&
    !(input instanceof DataView) &&
    !(input instanceof BigInt64Array) &&
    !(input instanceof BigUint64Array)
  );
}

/**
 * What is wrong with a vector (not an array of numbers, another length than `dimension`, a value
 * that is not finite or does not fit in float32), or undefined when it is usable.
 */
export function vectorProblem(input: unknown, dimension: number | undefined): string | undefined {
  if (!isNumberArray(input))
    return `the vector must be an array of numbers or a Float32Array, got ${describe(input)}`;
  if (input.length === 0) return 'the vector is empty';
  if (dimension !== undefined && input.length !== dimension) {
    return `the vector has ${input.length} dimensions, the store has ${dimension}`;
  }
  for (let i = 0; i < input.length; i++) {
    const value = input[i];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return `the vector holds ${describe(value)} at position ${i}; every value must be a finite number`;
    }
    if (Math.abs(value) > FLOAT32_MAX) return `the value ${value} at position ${i} does not fit in float32`;
  }
  return undefined;
}

/** True when every value is 0 (a zero vector has no direction, so no cosine similarity). */
export function isZeroVector(vector: ArrayLike<number>): boolean {
  for (let i = 0; i < vector.length; i++) if (vector[i] !== 0) return false;
  return true;
}

/** A plain number array, as the chromadb client sends it. */
export function toNumberArray(vector: ArrayLike<unknown>): number[] {
  return Array.from(vector as ArrayLike<number>);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  return typeof value;
}
