import { IndexFormatError } from '../errors/index.js';
import type { DistanceMetric } from './driver.js';
import type { VectorQuantization } from './in-memory-vector-store.js';
import type { IvfIndexSnapshot } from './ivf-index.js';
import type { ArenaRegions } from './vector-arena.js';

/*
 * The in-memory store's vectors as one blob (little-endian): its arena's regions as they are in
 * memory, so a snapshot is written with one copy per region and restored with one copy per region,
 * with no quantising and no per-row work.
 *
 *   0   "ZERDAVEC" (8 bytes)
 *   8   u32 version (1)
 *   12  u32 dimension
 *   16  u32 count (rows)
 *   20  u32 stride (float32 values per row: the dimension rounded up to 4)
 *   24  u32 code stride (int8 codes per row: the dimension rounded up to 16; 0 when not quantised)
 *   28  u8 quantization (0 'none', 1 'int8', 2 'int8-only')
 *   29  u8 metric (0 'cosine', 1 'dot', 2 'l2')
 *   30  2 bytes zero
 *   32  the regions, each starting on a 16-byte boundary: float32 rows, count x stride ('none' and
 *       'int8'); int8 codes, count x code stride, then float32 scales, count ('int8' and
 *       'int8-only'); float64 squared norms, count.
 *   then, in version 2 only, the store's IVF index (see ivf-index.ts), on a 16-byte boundary:
 *       u32 lists, u32 trained rows, 8 bytes zero; float32 centroids, lists x dimension; int32
 *       list of each row, count. An image without an index is written as version 1, as before.
 *
 * Integrity against bit rot is the storage's job (the file storage checks a CRC-32 per blob); the
 * reader checks the structure, so a truncated, foreign or inconsistent image is an IndexFormatError.
 */
const MAGIC = Uint8Array.from([0x5a, 0x45, 0x52, 0x44, 0x41, 0x56, 0x45, 0x43]); // "ZERDAVEC"
export const ARENA_IMAGE_VERSION = 1;
/** The version of an image that carries an IVF index after its regions. */
export const ARENA_IMAGE_VERSION_WITH_INDEX = 2;
/** The header's length; the arena leaves as many bytes free at the start of its memory, so an image read there is in place. */
export const ARENA_IMAGE_HEADER_BYTES = 32;
const HEADER_BYTES = ARENA_IMAGE_HEADER_BYTES;
const QUANTIZATIONS: readonly VectorQuantization[] = ['none', 'int8', 'int8-only'];
const METRICS: readonly DistanceMetric[] = ['cosine', 'dot', 'l2'];

export interface ArenaImageLayout {
  dimension: number;
  count: number;
  stride: number;
  codeStride: number;
  quantization: VectorQuantization;
  metric: DistanceMetric;
}

export interface ArenaImage {
  layout: ArenaImageLayout;
  /** Views into the image's bytes (no copies). */
  regions: ArenaRegions;
  /** The IVF index saved with the vectors (copies, checked against the layout), version 2 only. */
  index?: IvfIndexSnapshot;
}

/** The IVF section's length for `lists` centroids over a layout. */
function indexSectionBytes(layout: ArenaImageLayout, lists: number): number {
  return 16 + align16(lists * layout.dimension * 4) + align16(layout.count * 4);
}

const align16 = (n: number) => Math.ceil(n / 16) * 16;

/** Where each region starts and the image's whole length, for a layout. */
function regionOffsets(layout: ArenaImageLayout) {
  const { count, stride, codeStride, quantization } = layout;
  let offset = HEADER_BYTES;
  const take = (bytes: number): { at: number; bytes: number } => {
    const at = offset;
    offset = align16(offset + bytes);
    return { at, bytes };
  };
  const vectors = quantization === 'int8-only' ? undefined : take(count * stride * 4);
  const codes = quantization === 'none' ? undefined : take(count * codeStride);
  const scales = quantization === 'none' ? undefined : take(count * 4);
  const norms = take(count * 8);
  return { vectors, codes, scales, norms, end: offset };
}

/**
 * One blob: the header, then each region copied once from `regions` (views of the arena's
 * memory), then the IVF index when given (version 2).
 */
export function encodeArenaImage(
  layout: ArenaImageLayout,
  regions: ArenaRegions,
  index?: IvfIndexSnapshot,
): Uint8Array {
  const offsets = regionOffsets(layout);
  const lists = index === undefined ? 0 : index.centroids.length / layout.dimension;
  const bytes = new Uint8Array(offsets.end + (index === undefined ? 0 : indexSectionBytes(layout, lists)));
  bytes.set(MAGIC, 0);
  const view = new DataView(bytes.buffer);
  view.setUint32(8, index === undefined ? ARENA_IMAGE_VERSION : ARENA_IMAGE_VERSION_WITH_INDEX, true);
  view.setUint32(12, layout.dimension, true);
  view.setUint32(16, layout.count, true);
  view.setUint32(20, layout.stride, true);
  view.setUint32(24, layout.codeStride, true);
  view.setUint8(28, QUANTIZATIONS.indexOf(layout.quantization));
  view.setUint8(29, METRICS.indexOf(layout.metric));
  const copy = (region: Uint8Array | undefined, at: { at: number; bytes: number } | undefined) => {
    if (at === undefined) return;
    if (region === undefined || region.byteLength !== at.bytes)
      throw new RangeError(
        `an arena region holds ${region?.byteLength ?? 0} bytes, the layout says ${at.bytes}`,
      );
    bytes.set(region, at.at);
  };
  copy(regions.vectors, offsets.vectors);
  copy(regions.codes, offsets.codes);
  copy(regions.scales, offsets.scales);
  copy(regions.norms, offsets.norms);
  if (index !== undefined) {
    view.setUint32(offsets.end, lists, true);
    view.setUint32(offsets.end + 4, index.trainedRows, true);
    const centroidsAt = offsets.end + 16;
    const assignmentsAt = centroidsAt + align16(lists * layout.dimension * 4);
    writeLittleEndian(bytes, centroidsAt, index.centroids);
    writeLittleEndian(bytes, assignmentsAt, index.assignments.subarray(0, layout.count));
  }
  return bytes;
}

/** Typed values as little-endian bytes at `at`. */
function writeLittleEndian(bytes: Uint8Array, at: number, values: Float32Array | Int32Array): void {
  if (littleEndian) {
    bytes.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), at);
    return;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  for (let i = 0; i < values.length; i++) {
    if (values instanceof Float32Array) view.setFloat32(at + i * 4, values[i]!, true);
    else view.setInt32(at + i * 4, values[i]!, true);
  }
}

/** A copy of `count` little-endian 4-byte values at `at`, as `Type`. */
function readLittleEndian<T extends Float32Array | Int32Array>(
  bytes: Uint8Array,
  at: number,
  count: number,
  Type: { new (length: number): T },
): T {
  const values = new Type(count);
  if (littleEndian) {
    new Uint8Array(values.buffer).set(bytes.subarray(at, at + count * 4));
    return values;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  for (let i = 0; i < count; i++) {
    values[i] =
      values instanceof Float32Array ? view.getFloat32(at + i * 4, true) : view.getInt32(at + i * 4, true);
  }
  return values;
}

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The layout and regions (views, no copies) of an image; a truncated, foreign or inconsistent one is an IndexFormatError. */
export function decodeArenaImage(bytes: Uint8Array, path: string): ArenaImage {
  const refuse = (message: string): never => {
    throw new IndexFormatError({ message: `The vector image ${message}`, path });
  };
  if (bytes.byteLength < HEADER_BYTES)
    refuse(`is too short (${bytes.byteLength} bytes) to be a Zerda vector image`);
  for (let i = 0; i < MAGIC.length; i++)
    if (bytes[i] !== MAGIC[i]) refuse('is not a Zerda vector image (bad magic)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version !== ARENA_IMAGE_VERSION && version !== ARENA_IMAGE_VERSION_WITH_INDEX)
    refuse(
      `is version ${version}, this version of Zerda reads ${ARENA_IMAGE_VERSION} and ${ARENA_IMAGE_VERSION_WITH_INDEX}`,
    );
  const quantization = QUANTIZATIONS[view.getUint8(28)];
  const metric = METRICS[view.getUint8(29)];
  if (quantization === undefined || metric === undefined)
    return refuse('names an unknown quantization or metric');
  const layout: ArenaImageLayout = {
    dimension: view.getUint32(12, true),
    count: view.getUint32(16, true),
    stride: view.getUint32(20, true),
    codeStride: view.getUint32(24, true),
    quantization,
    metric,
  };
  const { dimension, stride, codeStride } = layout;
  const expectedCodeStride = quantization === 'none' ? 0 : Math.ceil(dimension / 16) * 16;
  if (dimension === 0 || stride !== Math.ceil(dimension / 4) * 4 || codeStride !== expectedCodeStride) {
    refuse(`says dimension ${dimension} with row strides ${stride} and ${codeStride}, which do not fit`);
  }
  const offsets = regionOffsets(layout);
  let end = offsets.end;
  let index: IvfIndexSnapshot | undefined;
  if (version === ARENA_IMAGE_VERSION_WITH_INDEX) {
    if (bytes.byteLength < end + 16) refuse('is version 2 but too short to hold its IVF index');
    const lists = view.getUint32(end, true);
    const trainedRows = view.getUint32(end + 4, true);
    if (lists === 0) refuse('holds an IVF index of 0 lists');
    const centroidsAt = end + 16;
    const assignmentsAt = centroidsAt + align16(lists * dimension * 4);
    end += indexSectionBytes(layout, lists);
    if (bytes.byteLength === end) {
      index = {
        centroids: readLittleEndian(bytes, centroidsAt, lists * dimension, Float32Array),
        assignments: readLittleEndian(bytes, assignmentsAt, layout.count, Int32Array),
        trainedRows,
      };
      const bad = index.assignments.findIndex((list) => list < 0 || list >= lists);
      if (bad >= 0) refuse(`puts row ${bad} in IVF list ${index.assignments[bad]} of ${lists}`);
      if (!index.centroids.every(Number.isFinite)) refuse('holds an IVF centroid that is not finite');
    }
  }
  if (bytes.byteLength !== end) {
    refuse(
      `holds ${bytes.byteLength} bytes where ${layout.count} ${quantization} rows of dimension ${dimension} take ${end} (truncated or inconsistent)`,
    );
  }
  const region = (at: { at: number; bytes: number }) => bytes.subarray(at.at, at.at + at.bytes);
  const regions: ArenaRegions = { norms: region(offsets.norms) };
  if (offsets.vectors) regions.vectors = region(offsets.vectors);
  if (offsets.codes && offsets.scales) {
    regions.codes = region(offsets.codes);
    regions.scales = region(offsets.scales);
  }
  return index === undefined ? { layout, regions } : { layout, regions, index };
}

/**
 * The image's vectors as count x dimension float32 values (codes times scale where it keeps no
 * float32 rows): the slow way, for a store that cannot take the regions as they are.
 */
export function arenaImageVectors({ layout, regions }: ArenaImage): Float32Array {
  const { dimension, count, stride, codeStride } = layout;
  const out = new Float32Array(count * dimension);
  if (regions.vectors !== undefined) {
    const rows = float32View(regions.vectors);
    for (let row = 0; row < count; row++)
      out.set(rows.subarray(row * stride, row * stride + dimension), row * dimension);
    return out;
  }
  const codes = regions.codes as Uint8Array;
  const scales = float32View(regions.scales as Uint8Array);
  const signed = new Int8Array(codes.buffer, codes.byteOffset, codes.byteLength);
  for (let row = 0; row < count; row++) {
    const scale = scales[row] as number;
    for (let j = 0; j < dimension; j++)
      out[row * dimension + j] = (signed[row * codeStride + j] as number) * scale;
  }
  return out;
}

/** A float32 view of bytes, copied only when they are not 4-byte aligned. */
function float32View(bytes: Uint8Array): Float32Array {
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  return new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
}
