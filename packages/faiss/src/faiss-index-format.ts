/*
 * Reads (and, for two HNSW parameters, patches) FAISS's own serialisation of the index types this
 * package builds, as `write_index` produces it (FAISS 1.7.x; little-endian):
 *
 *   flat (IndexFlatIP 'IxFI', IndexFlatL2 'IxF2'):
 *     fourcc | header | u64 n = count * d | count * d float32
 *   HNSW over flat storage (IndexHNSWFlat 'IHNf'):
 *     fourcc | header | hnsw graph | the storage, itself a flat index as above
 *   header: i32 d | i64 ntotal | i64 dummy | i64 dummy | u8 is_trained | i32 metric
 *           (0 inner product, 1 L2; other metrics carry an f32 argument and are not used here)
 *   hnsw graph: five vectors (u64 length, then the elements): assign_probas (f64),
 *           cum_nneighbor_per_level (i32), levels (i32), offsets (u64), neighbors (i32); then
 *           i32 entry_point, max_level, efConstruction, efSearch, upper_beam.
 *
 * Why: faiss-node exposes neither the HNSW search and construction parameters nor a way to read
 * vectors back, and every FAISS exception outside the few calls it guards aborts the process.
 * Reading the layout here lets the store check a saved index completely before FAISS sees it,
 * set efSearch and efConstruction, and get the stored vectors back to rebuild an HNSW index
 * without its deleted entries. Anything unexpected is reported, never guessed at.
 */

export type FaissMetricCode = 'ip' | 'l2';

export interface FaissIndexLayout {
  /** 'flat' (IndexFlatIP / IndexFlatL2) or 'hnsw' (IndexHNSWFlat). */
  type: 'flat' | 'hnsw';
  metric: FaissMetricCode;
  dimension: number;
  /** Vectors stored (FAISS's ntotal), deleted HNSW entries included. */
  count: number;
  /** Byte offset of the count x dimension float32 values. */
  vectorsOffset: number;
  /** The HNSW graph's parameters, and where the two tunable ones are written. */
  hnsw?: {
    m: number;
    efConstruction: number;
    efSearch: number;
    efConstructionOffset: number;
    efSearchOffset: number;
  };
}

/** The buffer is not an index of a type and layout this package reads. */
export class FaissFormatProblem extends Error {
  override readonly name = 'FaissFormatProblem';
}

const MAX_DIMENSION = 1 << 20;

class Reader {
  readonly view: DataView;
  offset = 0;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  need(bytes: number, what: string): void {
    if (!(bytes >= 0) || this.offset + bytes > this.bytes.byteLength) {
      throw new FaissFormatProblem(`the index data ends inside ${what}`);
    }
  }

  fourcc(): string {
    this.need(4, 'a type code');
    const code = String.fromCharCode(...this.bytes.subarray(this.offset, this.offset + 4));
    this.offset += 4;
    return code;
  }

  i32(what: string): number {
    this.need(4, what);
    const value = this.view.getInt32(this.offset, true);
    this.offset += 4;
    return value;
  }

  u8(what: string): number {
    this.need(1, what);
    return this.view.getUint8(this.offset++);
  }

  /** A 64-bit count or size; beyond 2^53 is certainly corrupt. */
  u64(what: string): number {
    this.need(8, what);
    const value = this.view.getBigUint64(this.offset, true);
    this.offset += 8;
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new FaissFormatProblem(`${what} is out of range`);
    return Number(value);
  }

  /** Skips a serialised vector (u64 length, then length elements), returning its length. */
  skipVector(elementBytes: number, what: string): number {
    const length = this.u64(`the length of ${what}`);
    this.need(length * elementBytes, what);
    this.offset += length * elementBytes;
    return length;
  }
}

interface Header {
  dimension: number;
  count: number;
  metric: FaissMetricCode;
}

function readHeader(reader: Reader): Header {
  const dimension = reader.i32('the dimension');
  const count = reader.u64('the vector count');
  reader.u64('the header');
  reader.u64('the header');
  const trained = reader.u8('the header');
  const metricCode = reader.i32('the metric');
  if (!(dimension > 0 && dimension <= MAX_DIMENSION)) {
    throw new FaissFormatProblem(`the dimension ${dimension} is not valid`);
  }
  if (trained !== 1) throw new FaissFormatProblem('the index is not trained');
  if (metricCode !== 0 && metricCode !== 1) {
    throw new FaissFormatProblem(`metric ${metricCode} is not inner product (0) or L2 (1)`);
  }
  return { dimension, count, metric: metricCode === 0 ? 'ip' : 'l2' };
}

/** A flat index at the reader's position; returns the offset of its vectors. */
function readFlat(reader: Reader, header: Header | undefined): { header: Header; vectorsOffset: number } {
  const start = reader.offset;
  const code = reader.fourcc();
  if (code !== 'IxFI' && code !== 'IxF2') {
    throw new FaissFormatProblem(`expected a flat index (IxFI or IxF2) at byte ${start}, found '${code}'`);
  }
  const own = readHeader(reader);
  if ((code === 'IxFI') !== (own.metric === 'ip')) {
    throw new FaissFormatProblem(`the flat index type ${code} contradicts its metric`);
  }
  if (
    header &&
    (own.dimension !== header.dimension || own.count !== header.count || own.metric !== header.metric)
  ) {
    throw new FaissFormatProblem('the HNSW storage does not match the HNSW index');
  }
  const values = reader.u64('the number of stored values');
  if (values !== own.count * own.dimension) {
    throw new FaissFormatProblem(`${values} stored values for ${own.count} vectors of ${own.dimension}`);
  }
  reader.need(values * 4, 'the vectors');
  const vectorsOffset = reader.offset;
  reader.offset += values * 4;
  return { header: own, vectorsOffset };
}

/** The layout of a serialised flat or HNSW-flat index; a FaissFormatProblem for anything else. */
export function readIndexLayout(bytes: Uint8Array): FaissIndexLayout {
  const reader = new Reader(bytes);
  const code = reader.fourcc();
  let layout: FaissIndexLayout;
  if (code === 'IxFI' || code === 'IxF2') {
    reader.offset = 0;
    const { header, vectorsOffset } = readFlat(reader, undefined);
    layout = { type: 'flat', ...header, vectorsOffset };
  } else if (code === 'IHNf') {
    const header = readHeader(reader);
    reader.skipVector(8, 'assign_probas');
    const levelsStart = reader.offset;
    const levelCount = reader.skipVector(4, 'cum_nneighbor_per_level');
    const cumulative = (index: number) => reader.view.getInt32(levelsStart + 8 + index * 4, true);
    if (levelCount < 2 || cumulative(0) !== 0) throw new FaissFormatProblem('the HNSW levels are invalid');
    const m = levelCount > 2 ? cumulative(2) - cumulative(1) : cumulative(1) / 2;
    if (!(Number.isInteger(m) && m > 0 && cumulative(1) === 2 * m)) {
      throw new FaissFormatProblem('the HNSW neighbour counts are invalid');
    }
    if (reader.skipVector(4, 'levels') !== header.count) {
      throw new FaissFormatProblem('the HNSW graph does not have one level per vector');
    }
    reader.skipVector(8, 'offsets');
    reader.skipVector(4, 'neighbors');
    reader.i32('entry_point');
    reader.i32('max_level');
    const efConstructionOffset = reader.offset;
    const efConstruction = reader.i32('efConstruction');
    const efSearchOffset = reader.offset;
    const efSearch = reader.i32('efSearch');
    reader.i32('upper_beam');
    const { vectorsOffset } = readFlat(reader, header);
    layout = {
      type: 'hnsw',
      ...header,
      vectorsOffset,
      hnsw: { m, efConstruction, efSearch, efConstructionOffset, efSearchOffset },
    };
  } else {
    throw new FaissFormatProblem(`unsupported index type '${code}' (expected IxFI, IxF2 or IHNf)`);
  }
  if (reader.offset !== bytes.byteLength) {
    throw new FaissFormatProblem(`${bytes.byteLength - reader.offset} unexpected bytes after the index`);
  }
  return layout;
}

/** Sets efConstruction and efSearch in a serialised HNSW index, in place. */
export function setHnswParameters(
  bytes: Uint8Array,
  parameters: { efConstruction?: number; efSearch?: number },
): void {
  const layout = readIndexLayout(bytes);
  if (layout.hnsw === undefined) throw new FaissFormatProblem('not an HNSW index');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (parameters.efConstruction !== undefined) {
    view.setInt32(layout.hnsw.efConstructionOffset, parameters.efConstruction, true);
  }
  if (parameters.efSearch !== undefined) view.setInt32(layout.hnsw.efSearchOffset, parameters.efSearch, true);
}

/** The stored vectors, count x dimension, in label order (a copy). */
export function readVectors(
  bytes: Uint8Array,
  layout: FaissIndexLayout = readIndexLayout(bytes),
): Float32Array {
  const values = layout.count * layout.dimension;
  const vectors = new Float32Array(values);
  const source = bytes.subarray(layout.vectorsOffset, layout.vectorsOffset + values * 4);
  if (littleEndian) {
    new Uint8Array(vectors.buffer).set(source);
  } else {
    const view = new DataView(source.buffer, source.byteOffset, source.byteLength);
    for (let index = 0; index < values; index++) vectors[index] = view.getFloat32(index * 4, true);
  }
  return vectors;
}

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
