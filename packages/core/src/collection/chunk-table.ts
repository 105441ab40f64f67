import { IndexFormatError, InvalidArgumentError } from '../errors/index.js';
import type { Chunk, Metadata } from '../model/index.js';
import { crc32 } from '../util/crc32.js';
import type { BlobSource } from './storage.js';

/*
 * The collection snapshot's chunks as one binary table (little-endian), so opening reads them
 * without a JSON parse per chunk or re-validating what the collection validated when it added them.
 * Version 3, written since texts are read on demand, keeps the texts out of the table, in a blob of
 * their own ('chunk-texts': the texts in UTF-8, one after another):
 *
 *   0   "ZERDACHK" (8 bytes)
 *   8   u32 version (3; 2 and 1 are still read)
 *   12  u32 chunk count
 *   16  u32 string count (the docIds and metadata, not the texts)
 *   20  u32 string bytes
 *   24  u32 digest of the chunks' ids (FNV-1a over their UTF-16 code units, see idsDigest)
 *   28  u32 bytes of the texts blob
 *   32  u8 per chunk: bit 0 docId present, bit 1 metadata present, bit 2 text stored as JSON (it
 *       is not well-formed UTF-16); bit 7 of the first chunk's: the strings stored as JSON;
 *       padded with zeros to a multiple of 4
 *   ..  u32 per string: its length in UTF-16 code units
 *   ..  u32 per chunk: the offset in the texts blob where its text ends
 *   ..  u32 per chunk: the CRC-32 of its text's bytes
 *   ..  the strings, one after another in UTF-8: per chunk its docId (when present) and metadata
 *       as JSON (when present)
 *
 * Opening reads the table and leaves the texts blob where it is (a storage that reads ranges hands
 * it over unread): a chunk's text is read and decoded when it is read (a result, a reranker),
 * checked against its CRC-32 then, since no checksum over the whole blob is taken (a snapshot copies
 * the bytes and CRC-32s of unchanged texts as they are). So an open neither reads nor holds a
 * hundred megabytes of text it may never use, and every chunk object still has a string `text`.
 *
 * Versions 1 and 2 (still read) keep the texts among the strings: per chunk its id (version 1
 * only), text, docId and metadata; their header ends at 24 (version 1, no digest) or 28.
 *
 * The ids are not in the table (since version 2): the collection saves its chunks in the keyword
 * index's slot order, and the index holds the ids already, so the reader is given them (the
 * index's own strings, no second copy decoded) and checks them against the digest, which a table
 * saved beside another index does not match.
 *
 * Integrity against bit rot is the storage's job (the file storage checks a CRC-32 per blob read
 * whole); the reader checks the structure, so a truncated or foreign table is an IndexFormatError.
 */
const MAGIC = Uint8Array.from([0x5a, 0x45, 0x52, 0x44, 0x41, 0x43, 0x48, 0x4b]); // "ZERDACHK"
export const CHUNK_TABLE_VERSION = 3;
/** Version 2: the texts among the strings, decoded at open. */
const CHUNK_TABLE_VERSION_EAGER = 2;
/** Version 1: the ids stored with the chunks, no digest. */
const CHUNK_TABLE_VERSION_WITH_IDS = 1;
const headerBytes = (version: number) =>
  version === CHUNK_TABLE_VERSION_WITH_IDS ? 24 : version === CHUNK_TABLE_VERSION_EAGER ? 28 : 32;
const HAS_DOC_ID = 1;
const HAS_METADATA = 2;
/** Version 3: the chunk's text is in the texts blob as JSON (a lone surrogate has no UTF-8). */
const TEXT_AS_JSON = 4;
/** Set on the first chunk's flags when the strings are a JSON array (some string is not well-formed UTF-16). */
const STRINGS_AS_JSON = 128;

const align4 = (n: number) => (n + 3) & ~3;

/**
 * A table's strings in UTF-8, one after another, with their UTF-16 lengths. A lone surrogate would
 * become U+FFFD in UTF-8: such strings are kept as a JSON array instead, said by STRINGS_AS_JSON on
 * the first chunk's flags.
 */
function encodeStrings(
  strings: readonly string[],
  flags: Uint8Array,
): { lengths: Uint32Array; bytes: Uint8Array } {
  const lengths = new Uint32Array(strings.length);
  for (let i = 0; i < strings.length; i++) lengths[i] = (strings[i] as string).length;
  let joined = strings.join('');
  if (flags.length > 0 && !isWellFormed(joined)) {
    joined = JSON.stringify(strings);
    flags[0] = (flags[0] as number) | STRINGS_AS_JSON;
  }
  return { lengths, bytes: new TextEncoder().encode(joined) };
}

/** Appends a chunk's docId and metadata (as JSON) to `strings` where present; returns their flags. */
function pushOptionalStrings(chunk: Chunk, strings: string[]): number {
  let flag = 0;
  if (chunk.docId !== undefined) {
    strings.push(chunk.docId);
    flag |= HAS_DOC_ID;
  }
  if (chunk.metadata !== undefined) {
    strings.push(JSON.stringify(chunk.metadata));
    flag |= HAS_METADATA;
  }
  return flag;
}

/** The chunks as a table of `version` 2 or 1, kept for the tests of snapshots older versions wrote. */
export function encodeChunkTable(chunks: readonly Chunk[], version: 1 | 2): Uint8Array {
  const withIds = version === CHUNK_TABLE_VERSION_WITH_IDS;
  const count = chunks.length;
  const flags = new Uint8Array(align4(count));
  const strings: string[] = [];
  for (let i = 0; i < count; i++) {
    const chunk = chunks[i] as Chunk;
    if (withIds) strings.push(chunk.id);
    strings.push(chunk.text);
    flags[i] = pushOptionalStrings(chunk, strings);
  }
  const { lengths, bytes: text } = encodeStrings(strings, flags);
  const header = headerBytes(version);
  const lengthsAt = header + flags.byteLength;
  const textAt = lengthsAt + lengths.byteLength;
  const bytes = new Uint8Array(textAt + text.byteLength);
  bytes.set(MAGIC, 0);
  const view = new DataView(bytes.buffer);
  view.setUint32(8, version, true);
  view.setUint32(12, count, true);
  view.setUint32(16, strings.length, true);
  view.setUint32(20, text.byteLength, true);
  if (!withIds) view.setUint32(24, idsDigest(chunks.map((chunk) => chunk.id)), true);
  bytes.set(flags, header);
  bytes.set(new Uint8Array(lengths.buffer), lengthsAt);
  bytes.set(text, textAt);
  return bytes;
}

/**
 * The chunks as a table of the current version (the ids left out: the reader is given them, in this
 * order) and the blob of their texts. Chunks read from a table whose text is still the stored one
 * have their bytes and CRC-32 copied as they are, a run of consecutive ones at a time, rather than
 * decoded and encoded again.
 */
export function encodeChunks(chunks: readonly Chunk[]): { table: Uint8Array; texts: Uint8Array } {
  const count = chunks.length;
  const flags = new Uint8Array(align4(count));
  const strings: string[] = [];
  // Per chunk, its text to encode, or undefined where its stored bytes are copied.
  const plain: Array<string | undefined> = new Array(count);
  let estimate = 0;
  for (let i = 0; i < count; i++) {
    const chunk = chunks[i] as Chunk;
    let flag = 0;
    const stored = StoredChunk.place(chunk);
    if (stored !== undefined) {
      flag |= stored.texts.flag(stored.index) & TEXT_AS_JSON;
      estimate += stored.texts.byteLength(stored.index);
    } else {
      let text = chunk.text;
      // A lone surrogate would become U+FFFD in UTF-8: such a text is kept as JSON instead.
      if (!isWellFormed(text)) {
        text = JSON.stringify(text);
        flag |= TEXT_AS_JSON;
      }
      plain[i] = text;
      estimate += text.length + (text.length >> 3);
    }
    flags[i] = flag | pushOptionalStrings(chunk, strings);
  }
  const { lengths, bytes: stringBytes } = encodeStrings(strings, flags);
  const encoder = new TextEncoder();
  const ends = new Uint32Array(count);
  const crcs = new Uint32Array(count);
  let region = new Uint8Array(Math.max(64, estimate));
  let at = 0;
  const reserve = (bytes: number) => {
    if (at + bytes <= region.byteLength) return;
    const grown = new Uint8Array(Math.max(region.byteLength * 2, at + bytes));
    grown.set(region.subarray(0, at));
    region = grown;
  };
  for (let i = 0; i < count; ) {
    const text = plain[i];
    if (text === undefined) {
      // A run of chunks stored one after another in the same table: their bytes in one copy.
      const first = StoredChunk.place(chunks[i] as Chunk) as { texts: StoredTexts; index: number };
      let last = i;
      while (last + 1 < count && plain[last + 1] === undefined) {
        const next = StoredChunk.place(chunks[last + 1] as Chunk) as { texts: StoredTexts; index: number };
        if (next.texts !== first.texts || next.index !== first.index + (last + 1 - i)) break;
        last++;
      }
      reserve(first.texts.runBytes(first.index, first.index + (last - i)));
      at = first.texts.copyRun(first.index, first.index + (last - i), region, at, ends, crcs, i);
      i = last + 1;
    } else {
      let rest = text;
      reserve(rest.length);
      for (;;) {
        const { read, written } = encoder.encodeInto(rest, region.subarray(at));
        at += written;
        if (read === rest.length) break;
        rest = rest.slice(read);
        reserve(rest.length * 3);
      }
      crcs[i] = crc32(region.subarray(i === 0 ? 0 : (ends[i - 1] as number), at));
      ends[i] = at;
      i++;
    }
    if (at > 0xffffffff) {
      throw new InvalidArgumentError({
        argument: 'chunks',
        value: count,
        message: `their texts are more than 4 GiB of UTF-8, more than one chunk table holds (at chunk ${i})`,
      });
    }
  }
  const lengthsAt = 32 + flags.byteLength;
  const endsAt = lengthsAt + lengths.byteLength;
  const crcsAt = endsAt + ends.byteLength;
  const stringsAt = crcsAt + crcs.byteLength;
  const bytes = new Uint8Array(stringsAt + stringBytes.byteLength);
  bytes.set(MAGIC, 0);
  const view = new DataView(bytes.buffer);
  view.setUint32(8, CHUNK_TABLE_VERSION, true);
  view.setUint32(12, count, true);
  view.setUint32(16, strings.length, true);
  view.setUint32(20, stringBytes.byteLength, true);
  view.setUint32(24, idsDigest(chunks.map((chunk) => chunk.id)), true);
  view.setUint32(28, at, true);
  bytes.set(flags, 32);
  bytes.set(new Uint8Array(lengths.buffer), lengthsAt);
  bytes.set(new Uint8Array(ends.buffer), endsAt);
  bytes.set(new Uint8Array(crcs.buffer), crcsAt);
  bytes.set(stringBytes, stringsAt);
  return { table: bytes, texts: region.subarray(0, at) };
}

/** The table's format version (an IndexFormatError when it is not a chunk table at all). */
export function chunkTableVersion(bytes: Uint8Array, path: string): number {
  if (bytes.byteLength < 24) {
    throw new IndexFormatError({
      message: `The collection's chunk table is ${bytes.byteLength} bytes, too short (truncated)`,
      path,
    });
  }
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i])
      throw new IndexFormatError({ message: "The collection's chunk table has a wrong magic number", path });
  }
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(8, true);
}

/**
 * The chunks of a table. A table of version 2 or 3 takes its ids from `ids` (the keyword index's,
 * in its slot order: the order the table was written in), checked against the table's count and
 * digest; a version 1 table holds its own. A version 3 table reads its texts from `texts` (the
 * texts blob) when a chunk's text is read.
 */
export function decodeChunkTable(
  bytes: Uint8Array,
  path: string,
  ids?: readonly string[],
  texts?: BlobSource,
): Chunk[] {
  const version = chunkTableVersion(bytes, path);
  if (version === CHUNK_TABLE_VERSION) return decodeTable(bytes, path, ids, texts);
  if (version === CHUNK_TABLE_VERSION_EAGER || version === CHUNK_TABLE_VERSION_WITH_IDS)
    return decodeEagerTable(bytes, path, version, ids);
  throw new IndexFormatError({
    message: `The collection's chunk table is format version ${version}; this version of Zerda reads ${CHUNK_TABLE_VERSION_WITH_IDS} to ${CHUNK_TABLE_VERSION}`,
    path,
  });
}

/** A table of version 1 or 2: its texts among its strings, every string decoded now. */
function decodeEagerTable(
  bytes: Uint8Array,
  path: string,
  version: number,
  ids: readonly string[] | undefined,
): Chunk[] {
  const fail = failure(path);
  const withIds = version === CHUNK_TABLE_VERSION_WITH_IDS;
  const header = headerBytes(version);
  if (bytes.byteLength < header) fail(`is ${bytes.byteLength} bytes, too short (truncated)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(12, true);
  const stringCount = view.getUint32(16, true);
  const textBytes = view.getUint32(20, true);
  // Each chunk takes at least one byte of the table and each string four (which also keeps the
  // sums below far from overflowing).
  if (count + stringCount * 4 > bytes.byteLength) fail('has counts larger than the table (damaged)');
  const lengthsAt = header + align4(count);
  const textAt = lengthsAt + 4 * stringCount;
  if (textAt + textBytes !== bytes.byteLength) {
    fail(`is ${bytes.byteLength} bytes where its header says ${textAt + textBytes} (truncated or damaged)`);
  }
  if (!withIds) checkIds(ids, count, view.getUint32(24, true), fail);
  const flags = bytes.subarray(header, header + count);
  checkFlags(flags, withIds ? 2 : 1, HAS_DOC_ID | HAS_METADATA, stringCount, fail);
  const take = stringReader(bytes.subarray(textAt), uint32s(bytes, lengthsAt, stringCount), flags, fail);
  const chunks: Chunk[] = new Array(count);
  // Repeated ids are found by the caller, which matches the ids against the keyword index's.
  for (let i = 0; i < count; i++) {
    const flag = flags[i] as number;
    const id = withIds ? take() : ((ids as readonly string[])[i] as string);
    if (id.length === 0) fail(`has an empty id at chunk ${i}`);
    const chunk: Chunk = { id, text: take() };
    if ((flag & HAS_DOC_ID) !== 0) chunk.docId = take();
    if ((flag & HAS_METADATA) !== 0) chunk.metadata = parseMetadata(take(), i, fail);
    chunks[i] = chunk;
  }
  return chunks;
}

/** A table of version 3: its strings decoded, each chunk's `text` read from `texts` when read. */
function decodeTable(
  bytes: Uint8Array,
  path: string,
  ids: readonly string[] | undefined,
  source: BlobSource | undefined,
): Chunk[] {
  const fail = failure(path);
  if (bytes.byteLength < 32) fail(`is ${bytes.byteLength} bytes, too short (truncated)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(12, true);
  const stringCount = view.getUint32(16, true);
  const stringBytes = view.getUint32(20, true);
  const textBytes = view.getUint32(28, true);
  // Each chunk takes at least nine bytes of the table and each string four (which also keeps the
  // sums below far from overflowing).
  if (count * 9 + stringCount * 4 > bytes.byteLength) fail('has counts larger than the table (damaged)');
  const lengthsAt = 32 + align4(count);
  const endsAt = lengthsAt + 4 * stringCount;
  const crcsAt = endsAt + 4 * count;
  const stringsAt = crcsAt + 4 * count;
  if (stringsAt + stringBytes !== bytes.byteLength) {
    fail(
      `is ${bytes.byteLength} bytes where its header says ${stringsAt + stringBytes} (truncated or damaged)`,
    );
  }
  if (source === undefined) return fail("has its texts in a 'chunk-texts' blob, and there is none");
  const texts = source as BlobSource;
  if (texts.byteLength !== textBytes) {
    fail(
      `says its texts are ${textBytes} bytes, and the texts blob is ${texts.byteLength} (another save's, or damaged)`,
    );
  }
  const given = checkIds(ids, count, view.getUint32(24, true), fail);
  const flags = bytes.subarray(32, 32 + count);
  checkFlags(flags, 0, HAS_DOC_ID | HAS_METADATA | TEXT_AS_JSON, stringCount, fail);
  const ends = uint32s(bytes, endsAt, count);
  let previous = 0;
  for (let i = 0; i < count; i++) {
    const end = ends[i] as number;
    if (end < previous) fail(`has text offsets that go back at chunk ${i} (damaged)`);
    previous = end;
  }
  if (previous !== textBytes) fail('has text offsets that do not add up to its texts (damaged)');
  const take = stringReader(bytes.subarray(stringsAt), uint32s(bytes, lengthsAt, stringCount), flags, fail);
  const stored = new StoredTexts(texts, ends, uint32s(bytes, crcsAt, count), flags, path);
  const chunks: Chunk[] = new Array(count);
  // Repeated ids are found by the caller, which matches the ids against the keyword index's.
  for (let i = 0; i < count; i++) {
    const flag = flags[i] as number;
    const id = given[i] as string;
    if (id.length === 0) fail(`has an empty id at chunk ${i}`);
    // The rare text kept as JSON is checked now, so reading it later fails only on damage.
    if ((flag & TEXT_AS_JSON) !== 0 && typeof parseJsonText(stored.stored(i)) !== 'string') {
      fail(`holds the text of chunk ${i} as JSON that is not a string`);
    }
    const chunk: Chunk = new StoredChunk(id, stored, i);
    if ((flag & HAS_DOC_ID) !== 0) chunk.docId = take();
    if ((flag & HAS_METADATA) !== 0) chunk.metadata = parseMetadata(take(), i, fail);
    chunks[i] = chunk;
  }
  return chunks;
}

type Fail = (message: string, cause?: unknown) => never;

/** Throws an IndexFormatError about the table at `path`. */
function failure(path: string): Fail {
  return (message, cause) => {
    throw new IndexFormatError({ message: `The collection's chunk table ${message}`, path, cause });
  };
}

/** The ids a table of version 2 or 3 is given, checked against its count and its digest. */
function checkIds(
  ids: readonly string[] | undefined,
  count: number,
  digest: number,
  fail: Fail,
): readonly string[] {
  if (ids === undefined) return fail('leaves its ids to the keyword index, and none were given');
  if (ids.length !== count) fail(`holds ${count} chunks and the keyword index ${ids.length}`);
  if (idsDigest(ids) !== digest) {
    fail("does not match the keyword index's ids (saved beside another index, or damaged)");
  }
  return ids;
}

/** Checks each chunk's flags against `allowed`, and that they name `stringCount` strings (`perChunk` each, plus docId and metadata). */
function checkFlags(
  flags: Uint8Array,
  perChunk: number,
  allowed: number,
  stringCount: number,
  fail: Fail,
): void {
  let expected = 0;
  for (let i = 0; i < flags.length; i++) {
    const flag = (flags[i] as number) & ~(i === 0 ? STRINGS_AS_JSON : 0);
    if ((flag & ~allowed) !== 0) fail(`has unknown flags on chunk ${i}`);
    expected += perChunk + (flag & HAS_DOC_ID) + ((flag & HAS_METADATA) >> 1);
  }
  if (expected !== stringCount) fail('has a string count that does not match its chunks');
}

/**
 * The strings of a table (see encodeStrings) decoded at once and handed out in order by the
 * function returned, each sliced by its length.
 */
function stringReader(region: Uint8Array, lengths: Uint32Array, flags: Uint8Array, fail: Fail): () => string {
  let joined: string;
  try {
    joined = new TextDecoder('utf-8', { fatal: true }).decode(region);
  } catch (error) {
    return fail('holds strings that are not UTF-8', error);
  }
  let strings: string[] | undefined;
  if (flags.length > 0 && ((flags[0] as number) & STRINGS_AS_JSON) !== 0) {
    try {
      strings = JSON.parse(joined) as string[];
    } catch (error) {
      return fail('holds strings that are not valid JSON', error);
    }
    if (!Array.isArray(strings) || strings.length !== lengths.length)
      fail('has a string count that does not match');
  } else {
    let total = 0;
    for (let i = 0; i < lengths.length; i++) total += lengths[i] as number;
    if (total !== joined.length) fail('has string lengths that do not add up to its strings (damaged)');
  }
  let next = 0;
  let offset = 0;
  return () => {
    const at = next++;
    if (strings !== undefined) {
      const value = strings[at];
      return typeof value === 'string' ? value : fail(`has a string ${at} that is not a string`);
    }
    const value = joined.slice(offset, offset + (lengths[at] as number));
    offset += lengths[at] as number;
    return value;
  };
}

/** `count` u32s at `at` in `bytes`: a view where aligned, else a copy. */
function uint32s(bytes: Uint8Array, at: number, count: number): Uint32Array {
  return (bytes.byteOffset + at) % 4 === 0
    ? new Uint32Array(bytes.buffer, bytes.byteOffset + at, count)
    : new Uint32Array(bytes.slice(at, at + 4 * count).buffer);
}

const utf8 = new TextDecoder();

function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The texts of a version 3 table: each read, checked and decoded when asked for, never kept. */
class StoredTexts {
  readonly #source: BlobSource;
  readonly #ends: Uint32Array;
  readonly #crcs: Uint32Array;
  readonly #flags: Uint8Array;
  readonly #path: string;

  constructor(source: BlobSource, ends: Uint32Array, crcs: Uint32Array, flags: Uint8Array, path: string) {
    this.#source = source;
    this.#ends = ends;
    this.#crcs = crcs;
    this.#flags = flags;
    this.#path = path;
  }

  /** Chunk `index`'s text as stored (its JSON when flagged so). */
  stored(index: number): string {
    const start = index === 0 ? 0 : (this.#ends[index - 1] as number);
    const bytes = this.#source.read(start, (this.#ends[index] as number) - start);
    if (crc32(bytes) !== this.#crcs[index]) {
      throw new IndexFormatError({
        message: `The text of the collection's chunk ${index} does not match its checksum (the texts blob is damaged)`,
        path: this.#path,
      });
    }
    return utf8.decode(bytes);
  }

  text(index: number): string {
    const stored = this.stored(index);
    return ((this.#flags[index] as number) & TEXT_AS_JSON) === 0 ? stored : (JSON.parse(stored) as string);
  }

  flag(index: number): number {
    return this.#flags[index] as number;
  }

  byteLength(index: number): number {
    return this.runBytes(index, index);
  }

  /** Bytes of the texts `first` to `last`, stored one after another. */
  runBytes(first: number, last: number): number {
    return (this.#ends[last] as number) - (first === 0 ? 0 : (this.#ends[first - 1] as number));
  }

  /**
   * Copies the stored bytes of texts `first` to `last` into `target` at `at`, in reads of at most
   * COPY_PIECE bytes, and their ends (moved to `target`'s offsets) and CRC-32s into `ends` and
   * `crcs` from `slot` on. The bytes are not checked here: each keeps its CRC-32, so damage is
   * still found when its text is read. Returns the offset after the last byte.
   */
  copyRun(
    first: number,
    last: number,
    target: Uint8Array,
    at: number,
    ends: Uint32Array,
    crcs: Uint32Array,
    slot: number,
  ): number {
    const start = first === 0 ? 0 : (this.#ends[first - 1] as number);
    const length = this.runBytes(first, last);
    for (let done = 0; done < length; done += COPY_PIECE) {
      const piece = Math.min(COPY_PIECE, length - done);
      target.set(this.#source.read(start + done, piece), at + done);
    }
    for (let index = first; index <= last; index++) {
      ends[slot + index - first] = at + (this.#ends[index] as number) - start;
      crcs[slot + index - first] = this.#crcs[index] as number;
    }
    return at + length;
  }
}

/** The most a snapshot reads of a texts blob at once when it copies stored texts. */
const COPY_PIECE = 8 * 1024 * 1024;

/**
 * A chunk whose `text` is read from the texts blob each time it is read. `text` is an own,
 * enumerable accessor (spread, JSON and equality see a string, as on a plain chunk); setting it
 * keeps the value set. One accessor pair serves every chunk (each defined with the same
 * functions, so the chunks share one shape), and the table and slot are private fields.
 */
class StoredChunk {
  /** Undefined once a caller has set `text`. */
  #texts: StoredTexts | undefined;
  readonly #index: number;
  declare id: string;
  declare text: string;
  declare docId?: string;
  declare metadata?: Metadata;

  static readonly #accessor: PropertyDescriptor = {
    get(this: StoredChunk): string {
      return (this.#texts as StoredTexts).text(this.#index);
    },
    set(this: StoredChunk, value: string) {
      this.#texts = undefined;
      Object.defineProperty(this, 'text', { value, writable: true, enumerable: true, configurable: true });
    },
    enumerable: true,
    configurable: true,
  };

  constructor(id: string, texts: StoredTexts, index: number) {
    this.#texts = texts;
    this.#index = index;
    this.id = id;
    Object.defineProperty(this, 'text', StoredChunk.#accessor);
  }

  /** Where `chunk`'s text is stored, when it is a stored chunk whose text is still the stored one. */
  static place(chunk: Chunk): { texts: StoredTexts; index: number } | undefined {
    return chunk instanceof StoredChunk && chunk.#texts !== undefined
      ? { texts: chunk.#texts, index: chunk.#index }
      : undefined;
  }
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

/**
 * FNV-1a (32-bit) over the ids' UTF-16 code units, each id followed by a separator that no code
 * unit equals: enough to tell a table saved beside another index (not a defence against forgery).
 */
export function idsDigest(ids: readonly string[]): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as string;
    for (let j = 0; j < id.length; j++) hash = Math.imul(hash ^ id.charCodeAt(j), 0x01000193);
    hash = Math.imul(hash ^ 0x10000, 0x01000193);
  }
  return hash >>> 0;
}

/** String.prototype.isWellFormed where the runtime has it (Node 20+), else a scan for lone surrogates. */
function isWellFormed(text: string): boolean {
  const native = (text as { isWellFormed?: () => boolean }).isWellFormed;
  if (typeof native === 'function') return native.call(text);
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}
