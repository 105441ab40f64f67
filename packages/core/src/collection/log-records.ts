import { IndexFormatError } from '../errors/index.js';
import { type Chunk, normalizeChunks } from '../model/index.js';

/** What a collection's log holds: an intent before each write, then what the write did. */
export type LogRecord =
  | { t: 'intent'; seq: number; ids: string[] }
  | { t: 'add'; seq: number; chunks: Chunk[]; vectors?: Float32Array[] }
  | { t: 'delete'; seq: number; ids: string[] };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * One record as bytes: a u32 (little-endian) length, that many bytes of JSON, then, for an add to a
 * store that keeps nothing across restarts, the vectors' float32 bytes one after another (no text
 * encoding of numbers: the log stays close to the size of the data).
 */
export function encodeRecord(record: LogRecord): Uint8Array {
  const vectors = record.t === 'add' ? record.vectors : undefined;
  const json = encoder.encode(
    JSON.stringify(vectors === undefined ? record : { ...record, vectors: vectors.length }),
  );
  const width = vectors?.[0]?.length ?? 0;
  const bytes = new Uint8Array(4 + json.byteLength + (vectors?.length ?? 0) * width * 4);
  new DataView(bytes.buffer).setUint32(0, json.byteLength, true);
  bytes.set(json, 4);
  if (vectors !== undefined) {
    const tail = new Uint8Array(bytes.buffer, 4 + json.byteLength);
    vectors.forEach((vector, index) => {
      tail.set(new Uint8Array(vector.buffer, vector.byteOffset, width * 4), index * width * 4);
    });
  }
  return bytes;
}

export function decodeRecord(bytes: Uint8Array, location: string): LogRecord {
  const fail = (): never => {
    throw new IndexFormatError({ message: 'A collection log record is damaged', path: location });
  };
  if (bytes.byteLength < 4) return fail();
  const jsonLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (4 + jsonLength > bytes.byteLength) return fail();
  let value: { t?: unknown; seq?: unknown; ids?: unknown; chunks?: unknown; vectors?: unknown };
  try {
    value = JSON.parse(decoder.decode(bytes.subarray(4, 4 + jsonLength)));
  } catch (error) {
    throw new IndexFormatError({
      message: 'A collection log record is not valid JSON',
      path: location,
      cause: error,
    });
  }
  if (typeof value?.seq !== 'number') return fail();
  const seq = value.seq;
  const ids = (): string[] =>
    Array.isArray(value.ids) && value.ids.every((id) => typeof id === 'string')
      ? (value.ids as string[])
      : fail();
  switch (value.t) {
    case 'intent':
      return { t: 'intent', seq, ids: ids() };
    case 'delete':
      return { t: 'delete', seq, ids: ids() };
    case 'add': {
      if (!Array.isArray(value.chunks)) return fail();
      const chunks = normalizeChunks(value.chunks);
      if (value.vectors === undefined) return { t: 'add', seq, chunks };
      const tail = bytes.subarray(4 + jsonLength);
      const count = value.vectors;
      if (count !== chunks.length || (count > 0 && tail.byteLength % (count * 4) !== 0)) return fail();
      // Copied out so each vector is aligned and owns its memory.
      const all = new Float32Array(new Uint8Array(tail).buffer);
      const width = count === 0 ? 0 : all.length / count;
      return {
        t: 'add',
        seq,
        chunks,
        vectors: chunks.map((_, i) => all.subarray(i * width, (i + 1) * width)),
      };
    }
    default:
      return fail();
  }
}
