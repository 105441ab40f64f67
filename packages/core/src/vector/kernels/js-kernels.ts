// Plain JavaScript versions of the WebAssembly kernels, used where WebAssembly SIMD is not
// available. Same arguments (byte offsets into the same memory layout), same results up to
// float rounding order.

/** Typed views over one buffer, all starting at byte 0. */
export interface MemoryViews {
  f32: Float32Array;
  i32: Int32Array;
  i16: Int16Array;
  i8: Int8Array;
}

export function createViews(buffer: ArrayBuffer): MemoryViews {
  return {
    f32: new Float32Array(buffer),
    i32: new Int32Array(buffer),
    i16: new Int16Array(buffer),
    i8: new Int8Array(buffer),
  };
}

/** query . row, over `stride` floats, four partial sums (as the SIMD kernel does). */
function dotF32(f32: Float32Array, q: number, p: number, stride: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  // stride is a multiple of 4: the rows are padded with zeros.
  for (let j = 0; j < stride; j += 4) {
    s0 += f32[p + j]! * f32[q + j]!;
    s1 += f32[p + j + 1]! * f32[q + j + 1]!;
    s2 += f32[p + j + 2]! * f32[q + j + 2]!;
    s3 += f32[p + j + 3]! * f32[q + j + 3]!;
  }
  return s0 + s1 + s2 + s3;
}

export function dotF32AllJs(
  views: MemoryViews,
  query: number,
  base: number,
  count: number,
  stride: number,
  out: number,
): void {
  const { f32 } = views;
  const q = query >>> 2;
  let p = base >>> 2;
  const o = out >>> 2;
  for (let row = 0; row < count; row++, p += stride) f32[o + row] = dotF32(f32, q, p, stride);
}

export function dotF32ListJs(
  views: MemoryViews,
  query: number,
  base: number,
  list: number,
  count: number,
  stride: number,
  out: number,
): void {
  const { f32, i32 } = views;
  const q = query >>> 2;
  const b = base >>> 2;
  const l = list >>> 2;
  const o = out >>> 2;
  for (let j = 0; j < count; j++) f32[o + j] = dotF32(f32, q, b + i32[l + j]! * stride, stride);
}

function dotI8(i8: Int8Array, i16: Int16Array, q: number, p: number, strideBytes: number): number {
  let sum = 0;
  for (let j = 0; j < strideBytes; j++) sum += i8[p + j]! * i16[q + j]!;
  return sum;
}

export function dotI8AllJs(
  views: MemoryViews,
  query: number,
  base: number,
  count: number,
  strideBytes: number,
  scales: number,
  out: number,
): void {
  const { f32, i16, i8 } = views;
  const q = query >>> 1;
  const s = scales >>> 2;
  const o = out >>> 2;
  let p = base;
  for (let row = 0; row < count; row++, p += strideBytes) {
    f32[o + row] = dotI8(i8, i16, q, p, strideBytes) * f32[s + row]!;
  }
}

export function dotI8ListJs(
  views: MemoryViews,
  query: number,
  base: number,
  list: number,
  count: number,
  strideBytes: number,
  scales: number,
  out: number,
): void {
  const { f32, i32, i16, i8 } = views;
  const q = query >>> 1;
  const s = scales >>> 2;
  const l = list >>> 2;
  const o = out >>> 2;
  for (let j = 0; j < count; j++) {
    const row = i32[l + j]!;
    f32[o + j] = dotI8(i8, i16, q, base + row * strideBytes, strideBytes) * f32[s + row]!;
  }
}

/** The float32 query (at float index `q`) . the int8 codes at byte `p`, over `stride` values. */
function dotF32I8(f32: Float32Array, i8: Int8Array, q: number, p: number, stride: number): number {
  let sum = 0;
  for (let j = 0; j < stride; j++) sum += f32[q + j]! * i8[p + j]!;
  return sum;
}

export function dotF32I8ListJs(
  views: MemoryViews,
  query: number,
  base: number,
  list: number,
  count: number,
  stride: number,
  strideBytes: number,
  scales: number,
  out: number,
): void {
  const { f32, i32, i8 } = views;
  const q = query >>> 2;
  const s = scales >>> 2;
  const l = list >>> 2;
  const o = out >>> 2;
  for (let j = 0; j < count; j++) {
    const row = i32[l + j]!;
    f32[o + j] = dotF32I8(f32, i8, q, base + row * strideBytes, stride) * f32[s + row]!;
  }
}

export function firstAtLeastJs(
  views: MemoryViews,
  scores: number,
  from: number,
  count: number,
  threshold: number,
): number {
  const { f32 } = views;
  const s = scores >>> 2;
  let i = from;
  while (i < count && !(f32[s + i]! >= threshold)) i++;
  return i;
}
