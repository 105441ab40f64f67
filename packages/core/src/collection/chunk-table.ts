import { IndexFormatError } from '../errors/index.js';
import type { Chunk, Metadata } from '../model/index.js';

/*
 * The collection snapshot's chunks as one binary table (little-endian), so opening reads them
 * without a JSON parse per chunk or re-validating what the collection validated when it added them:
 *
 *   0   "ZERDACHK" (8 bytes)
 *   8   u32 version (1)
 *   12  u32 chunk count
 *   16  u32 string count
 *   20  u32 string bytes
 *   24  u8 per chunk: bit 0 docId present, bit 1 metadata present, bit 7 strings stored as JSON;
 *       padded with zeros to a multiple of 4
 *   ..  u32 per string: its length in UTF-16 code units
 *   ..  the strings, one after another in UTF-8: per chunk its id, text, docId (when present) and
 *       metadata as JSON (when present)
 *
 * Integrity against bit rot is the storage's job (the file storage checks a CRC-32 per blob); the
 * reader checks the structure, so a truncated or foreign table is an IndexFormatError.
 */
const MAGIC = Uint8Array.from([0x5a, 0x45, 0x52, 0x44, 0x41, 0x43, 0x48, 0x4b]); // "ZERDACHK"
export const CHUNK_TABLE_VERSION = 1;
const HEADER_BYTES = 24;
const HAS_DOC_ID = 1;
const HAS_METADATA = 2;
/** Set on the first chunk's flags when the strings are a JSON array (some string is not well-formed UTF-16). */
const STRINGS_AS_JSON = 128;

const align4 = (n: number) => (n + 3) & ~3;

export function encodeChunkTable(chunks: readonly Chunk[]): Uint8Array {
  const count = chunks.length;
  const flags = new Uint8Array(align4(count));
  const strings: string[] = [];
  for (let i = 0; i < count; i++) {
    const chunk = chunks[i] as Chunk;
    strings.push(chunk.id, chunk.text);
    let flag = 0;
    if (chunk.docId !== undefined) {
      strings.push(chunk.docId);
      flag |= HAS_DOC_ID;
    }
    if (chunk.metadata !== undefined) {
      strings.push(JSON.stringify(chunk.metadata));
      flag |= HAS_METADATA;
    }
    flags[i] = flag;
  }
  const lengths = new Uint32Array(strings.length);
  for (let i = 0; i < strings.length; i++) lengths[i] = (strings[i] as string).length;
  let joined = strings.join('');
  // A lone surrogate would become U+FFFD in UTF-8: such tables keep their strings as JSON instead.
  if (count > 0 && !isWellFormed(joined)) {
    joined = JSON.stringify(strings);
    flags[0] = (flags[0] as number) | STRINGS_AS_JSON;
  }
  const text = new TextEncoder().encode(joined);
  const lengthsAt = HEADER_BYTES + flags.byteLength;
  const textAt = lengthsAt + lengths.byteLength;
  const bytes = new Uint8Array(textAt + text.byteLength);
  bytes.set(MAGIC, 0);
  const view = new DataView(bytes.buffer);
  view.setUint32(8, CHUNK_TABLE_VERSION, true);
  view.setUint32(12, count, true);
  view.setUint32(16, strings.length, true);
  view.setUint32(20, text.byteLength, true);
  bytes.set(flags, HEADER_BYTES);
  bytes.set(new Uint8Array(lengths.buffer), lengthsAt);
  bytes.set(text, textAt);
  return bytes;
}

export function decodeChunkTable(bytes: Uint8Array, path: string): Chunk[] {
  const fail = (message: string, cause?: unknown): never => {
    throw new IndexFormatError({ message: `The collection's chunk table ${message}`, path, cause });
  };
  if (bytes.byteLength < HEADER_BYTES) fail(`is ${bytes.byteLength} bytes, too short (truncated)`);
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) fail('has a wrong magic number');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version !== CHUNK_TABLE_VERSION) {
    fail(`is format version ${version}; this version of Zerda reads ${CHUNK_TABLE_VERSION}`);
  }
  const count = view.getUint32(12, true);
  const stringCount = view.getUint32(16, true);
  const textBytes = view.getUint32(20, true);
  const lengthsAt = HEADER_BYTES + align4(count);
  const textAt = lengthsAt + stringCount * 4;
  if (textAt + textBytes !== bytes.byteLength) {
    fail(`is ${bytes.byteLength} bytes where its header says ${textAt + textBytes} (truncated or damaged)`);
  }
  const flags = bytes.subarray(HEADER_BYTES, HEADER_BYTES + count);
  let expectedStrings = 0;
  for (let i = 0; i < count; i++) {
    const flag = (flags[i] as number) & ~(i === 0 ? STRINGS_AS_JSON : 0);
    if ((flag & ~(HAS_DOC_ID | HAS_METADATA)) !== 0) fail(`has unknown flags on chunk ${i}`);
    expectedStrings += 2 + (flag & HAS_DOC_ID) + ((flag & HAS_METADATA) >> 1);
  }
  if (expectedStrings !== stringCount) fail('has a string count that does not match its chunks');
  // Aligned in a table written by encodeChunkTable; copied when the bytes sit at an odd offset.
  const lengths =
    (bytes.byteOffset + lengthsAt) % 4 === 0
      ? new Uint32Array(bytes.buffer, bytes.byteOffset + lengthsAt, stringCount)
      : new Uint32Array(bytes.slice(lengthsAt, textAt).buffer);
  let total = 0;
  for (let i = 0; i < stringCount; i++) total += lengths[i] as number;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(textAt));
  } catch (error) {
    return fail('holds text that is not UTF-8', error);
  }
  let strings: string[] | undefined;
  if (count > 0 && ((flags[0] as number) & STRINGS_AS_JSON) !== 0) {
    try {
      strings = JSON.parse(text) as string[];
    } catch (error) {
      return fail('holds strings that are not valid JSON', error);
    }
    if (!Array.isArray(strings) || strings.length !== stringCount)
      fail('has a string count that does not match');
  }
  if (strings === undefined && total !== text.length) {
    fail('has string lengths that do not add up to its text (damaged)');
  }
  let offset = 0;
  let next = 0;
  const take = (): string => {
    const at = next++;
    if (strings !== undefined) {
      const value = strings[at];
      return typeof value === 'string' ? value : fail(`has a string ${at} that is not a string`);
    }
    const length = lengths[at] as number;
    const value = text.slice(offset, offset + length);
    offset += length;
    return value;
  };
  const chunks: Chunk[] = new Array(count);
  // Repeated ids are found by the caller, which matches the ids against the keyword index's.
  for (let i = 0; i < count; i++) {
    const flag = flags[i] as number;
    const id = take();
    if (id.length === 0) fail(`has an empty id at chunk ${i}`);
    const chunk: Chunk = { id, text: take() };
    if ((flag & HAS_DOC_ID) !== 0) chunk.docId = take();
    if ((flag & HAS_METADATA) !== 0) chunk.metadata = parseMetadata(take(), i, fail);
    chunks[i] = chunk;
  }
  return chunks;
}

function parseMetadata(
  json: string,
  index: number,
  fail: (message: string, cause?: unknown) => never,
): Metadata {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return fail(`holds metadata of chunk ${index} that is not valid JSON`, error);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return fail(`holds metadata of chunk ${index} that is not an object`);
  }
  return value as Metadata;
}

/** String.prototype.isWellFormed where the runtime has it (Node 20+), else a scan for lone surrogates. */
function isWellFormed(text: string): boolean {
  const native = (text as { isWellFormed?: () => boolean }).isWellFormed;
  if (typeof native === 'function') return native.call(text);
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}
