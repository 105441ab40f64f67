type TypedArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array | Float32Array;
type TypedArrayConstructor<T extends TypedArray> = { new (length: number): T };

/**
 * Returns `array` if it holds at least `needed` elements, otherwise a copy grown by doubling
 * (so appends stay amortised O(1)) with the new tail zeroed.
 */
export function ensureCapacity<T extends TypedArray>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  let capacity = Math.max(16, array.length);
  while (capacity < needed) capacity *= 2;
  const grown = new (array.constructor as TypedArrayConstructor<T>)(capacity);
  grown.set(array as never);
  return grown;
}
