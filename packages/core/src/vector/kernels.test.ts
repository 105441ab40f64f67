import { describe, expect, it } from 'vitest';
import { seededRandom } from './__tests__/clustered-data.js';
import {
  createScanKernels,
  LinearMemory,
  resolveKernelKind,
  sharedKernelsSupported,
  wasmSimdSupported,
} from './kernels/kernels.js';

const dimensions = [
  1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 383, 384, 385, 768, 1536,
];
// 'wasm-shared': the kernels compiled over a shared memory (for scans split over threads), which
// wabt cannot validate: the runtime does, here, and they must give what the plain ones give.
const kinds = ['wasm', 'wasm-shared', 'js'] as const;

/** The reference: a plain dot product in float64. */
function dot(a: ArrayLike<number>, b: ArrayLike<number>, length: number): number {
  let sum = 0;
  for (let j = 0; j < length; j++) sum += a[j]! * b[j]!;
  return sum;
}

function setup(kind: (typeof kinds)[number], bytes: number) {
  const memory =
    kind === 'wasm-shared' ? new LinearMemory('wasm', bytes, true) : new LinearMemory(kind, bytes);
  return { memory, kernels: createScanKernels(memory) };
}

describe('scan kernels', () => {
  it('runs WebAssembly SIMD on Node 20, over plain and shared memories', () => {
    expect(wasmSimdSupported()).toBe(true);
    expect(sharedKernelsSupported()).toBe(true);
    expect(new LinearMemory('wasm', 64, true).buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(resolveKernelKind('auto')).toBe('wasm');
    expect(resolveKernelKind('js')).toBe('js');
  });

  describe.each(kinds)('%s', (kind) => {
    it.each(dimensions)('float32 dot products equal a plain dot product at dimension %i', (dimension) => {
      const random = seededRandom(dimension);
      const stride = Math.ceil(dimension / 4) * 4;
      const rows = 37;
      // Layout: rows, then the query, then the output; 16-byte aligned.
      const query = rows * stride * 4;
      const out = query + stride * 4;
      const list = out + rows * 4;
      const { memory, kernels } = setup(kind, list + rows * 4);
      const f32 = new Float32Array(memory.buffer);
      for (let row = 0; row < rows; row++) {
        for (let j = 0; j < dimension; j++) f32[row * stride + j] = random() * 2 - 1;
      }
      for (let j = 0; j < dimension; j++) f32[query / 4 + j] = random() * 2 - 1;
      kernels.dotF32All(query, 0, rows, stride, out);
      const scores = new Float32Array(memory.buffer, out, rows);
      for (let row = 0; row < rows; row++) {
        const expected = dot(f32.subarray(row * stride), f32.subarray(query / 4), dimension);
        expect(scores[row]).toBeCloseTo(expected, 4);
      }
      // The list variant scores the rows it is given, in that order (three groups of 16 or fewer,
      // each touched before it is scored).
      const order = [5, 0, 36, 5, 12, ...Array.from({ length: 32 }, (_, index) => (index * 17 + 3) % rows)];
      new Int32Array(memory.buffer, list, order.length).set(order);
      kernels.dotF32List(query, 0, list, order.length, stride, out);
      const listed = new Float32Array(memory.buffer, out, order.length);
      order.forEach((row, index) => {
        expect(listed[index]).toBeCloseTo(
          dot(f32.subarray(row * stride), f32.subarray(query / 4), dimension),
          4,
        );
      });
      // A shorter list reads its own rows and writes its own scores only.
      const before = Array.from(listed);
      new Int32Array(memory.buffer, list + 12, order.length - 3).fill(1);
      kernels.dotF32List(query, 0, list, 3, stride, out);
      expect(Array.from(listed.subarray(3))).toEqual(before.slice(3));
    });

    it.each(dimensions)(
      'int8 dot products are exact integers times the scale at dimension %i',
      (dimension) => {
        const random = seededRandom(1000 + dimension);
        const stride = Math.ceil(dimension / 16) * 16;
        const rows = 29;
        const scales = rows * stride;
        // The query block (see ScanKernels.dotI8All): 7-bit codes as int16, then plus 64 as bytes.
        const query = scales + rows * 4;
        const out = query + stride * 3;
        const sums = out + rows * 4;
        const list = sums + rows * 4;
        // A float32 query for re-scoring from the codes: `floats` values (a multiple of 4), then a
        // NaN that a kernel reading past them would turn every score into.
        const floats = Math.ceil(dimension / 4) * 4;
        const floatQuery = list + rows * 4;
        const { memory, kernels } = setup(kind, floatQuery + floats * 4 + 64);
        const codes = new Int8Array(memory.buffer, 0, rows * stride);
        const scale = new Float32Array(memory.buffer, scales, rows);
        const q = new Int16Array(memory.buffer, query, stride);
        const code = () => Math.floor(random() * 255) - 127;
        for (let row = 0; row < rows; row++) {
          for (let j = 0; j < dimension; j++) codes[row * stride + j] = code();
          scale[row] = row % 3 === 0 ? 1 : 0.5 + row / 64;
        }
        for (let j = 0; j < dimension; j++) q[j] = Math.floor(random() * 127) - 63;
        // Extremes: the largest magnitudes must not overflow.
        for (let j = 0; j < dimension; j++) codes[j] = -127;
        q[0] = 63;
        q[dimension - 1] = -63;
        const offsetCodes = new Uint8Array(memory.buffer, query + stride * 2, stride);
        for (let j = 0; j < stride; j++) offsetCodes[j] = q[j]! + 64;
        kernels.codeSums?.(0, rows, stride, sums);
        kernels.dotI8All(query, 0, rows, stride, scales, out, sums);
        const scores = new Float32Array(memory.buffer, out, rows);
        for (let row = 0; row < rows; row++) {
          const expected = Math.fround(dot(codes.subarray(row * stride), q, dimension) * scale[row]!);
          expect(scores[row]).toBe(expected);
        }
        // Two groups of rows (16, then 13) for the list kernels.
        const order = [3, 3, 0, 28, ...Array.from({ length: 25 }, (_, index) => (index * 11 + 1) % rows)];
        new Int32Array(memory.buffer, list, order.length).set(order);
        kernels.dotI8List(query, 0, list, order.length, stride, scales, out);
        const listed = new Float32Array(memory.buffer, out, order.length);
        order.forEach((row, index) => {
          expect(listed[index]).toBe(
            Math.fround(dot(codes.subarray(row * stride), q, dimension) * scale[row]!),
          );
        });
        const f = new Float32Array(memory.buffer, floatQuery, floats + 1);
        for (let j = 0; j < dimension; j++) f[j] = random() * 2 - 1;
        f[floats] = Number.NaN;
        kernels.dotF32I8List(floatQuery, 0, list, order.length, floats, stride, scales, out);
        order.forEach((row, index) => {
          const terms = codes.subarray(row * stride, row * stride + dimension);
          const expected = dot(terms, f, dimension) * scale[row]!;
          // Float32 sums: within a float32 rounding per term of the exact value.
          const magnitude = terms.reduce((sum, c, j) => sum + Math.abs(c * f[j]!), 0) * scale[row]!;
          expect(Math.abs(listed[index]! - expected)).toBeLessThanOrEqual(1e-6 * magnitude + 1e-6);
        });
        // A shorter list reads its own rows and writes its own scores only.
        const before = Array.from(listed);
        new Int32Array(memory.buffer, list + 12, order.length - 3).fill(1);
        kernels.dotF32I8List(floatQuery, 0, list, 3, floats, stride, scales, out);
        expect(Array.from(listed.subarray(3))).toEqual(before.slice(3));
      },
    );

    it('finds the first score at least a threshold, from any position, NaN and ties included', () => {
      const random = seededRandom(77);
      // An odd offset of whole floats and lengths around the 16-score steps.
      const at = 4 * 7;
      for (const count of [0, 1, 15, 16, 17, 31, 32, 33, 200]) {
        const { memory, kernels } = setup(kind, at + count * 4 + 64);
        const scores = new Float32Array(memory.buffer, at, count);
        for (let i = 0; i < count; i++) {
          // Few distinct values, so the threshold often equals a score; some NaN and infinities.
          const pick = Math.floor(random() * 12);
          scores[i] = pick === 0 ? Number.NaN : pick === 1 ? -Infinity : pick === 2 ? Infinity : pick - 6;
        }
        // A float beyond `count` that would match must not be seen.
        new Float32Array(memory.buffer)[at / 4 + count] = Infinity;
        for (let from = 0; from <= count; from++) {
          for (const threshold of [-Infinity, -3, 0, 0.5, 4, 5, Infinity]) {
            let expected = from;
            while (expected < count && !(scores[expected]! >= threshold)) expected++;
            expect(kernels.firstAtLeast(at, from, count, threshold)).toBe(expected);
          }
        }
      }
    });

    it('keeps its contents when the memory grows', () => {
      const { memory, kernels } = setup(kind, 64);
      new Float32Array(memory.buffer).set([1, 2, 3, 4, 1, 1, 1, 1]);
      memory.growTo(1 << 20);
      expect(memory.byteLength).toBeGreaterThanOrEqual(1 << 20);
      kernels.dotF32All(16, 0, 1, 4, 32);
      expect(new Float32Array(memory.buffer)[8]).toBe(10);
    });
  });
});
