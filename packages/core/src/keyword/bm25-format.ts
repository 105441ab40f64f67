import { IndexFormatError } from '../errors/index.js';
import { crc32 } from '../util/crc32.js';
import { BLOCK_SHIFT, BLOCK_SIZE } from './segment.js';

/** Typed arrays use the platform's byte order; the format is little-endian. */
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The on-disk form of a BM25 index (format version 3): a magic number, the version, a JSON header
 * describing typed sections, the sections (8-byte aligned, little-endian), and a CRC-32 of all
 * preceding bytes. Readers refuse anything that does not check out, with the reason. Version 2
 * adds the postings' block-max metadata (see `PostingBlocks`), so that opening an index adopts it
 * instead of recomputing it from every posting; version 3 adds each block's exact bound at the
 * average length it was built with (`blockMinNormPerTf`, and `blockPerLength` in the header).
 * Version 1 and 2 files are still read (with the bounds rebuilt, or loose, respectively).
 */
export interface BM25Snapshot {
  analyzer: string;
  k1: number;
  b: number;
  ids: string[];
  vocabulary: string[];
  lengths: Uint32Array;
  documentFrequency: Uint32Array;
  maxTf: Uint16Array;
  minLength: Uint32Array;
  segmentTerms: Uint32Array;
  termStart: Uint32Array;
  postDocs: Uint32Array;
  postTfs: Uint16Array;
  /** Block-max metadata of the postings (absent in version 1 files: the reader rebuilds it). */
  blockFirst?: Uint32Array;
  blockLastDoc?: Uint32Array;
  blockMaxTf?: Uint16Array;
  blockMinLengthPerTf?: Float32Array;
  /** Exact block bounds at `blockPerLength` (absent before version 3: the loose bound is used). */
  blockMinNormPerTf?: Float32Array;
  blockPerLength?: number;
}

const MAGIC = Uint8Array.from([0x5a, 0x45, 0x52, 0x44, 0x41, 0x42, 0x4d, 0x32]); // "ZERDABM2"
export const BM25_FORMAT_VERSION = 3;
/** Versions this reader accepts. */
const READABLE_VERSIONS = [1, 2, 3];
type FormatVersion = 1 | 2 | 3;

type SectionName = Exclude<keyof BM25Snapshot, 'analyzer' | 'k1' | 'b' | 'blockPerLength'>;
type SectionKind = 'json' | 'u32' | 'u16' | 'f32';
const SECTIONS_V1: Array<{ name: SectionName; kind: SectionKind }> = [
  { name: 'ids', kind: 'json' },
  { name: 'vocabulary', kind: 'json' },
  { name: 'lengths', kind: 'u32' },
  { name: 'documentFrequency', kind: 'u32' },
  { name: 'maxTf', kind: 'u16' },
  { name: 'minLength', kind: 'u32' },
  { name: 'segmentTerms', kind: 'u32' },
  { name: 'termStart', kind: 'u32' },
  { name: 'postDocs', kind: 'u32' },
  { name: 'postTfs', kind: 'u16' },
];
const SECTIONS_V2: Array<{ name: SectionName; kind: SectionKind }> = [
  ...SECTIONS_V1,
  { name: 'blockFirst', kind: 'u32' },
  { name: 'blockLastDoc', kind: 'u32' },
  { name: 'blockMaxTf', kind: 'u16' },
  { name: 'blockMinLengthPerTf', kind: 'f32' },
];
const SECTIONS_V3: Array<{ name: SectionName; kind: SectionKind }> = [
  ...SECTIONS_V2,
  { name: 'blockMinNormPerTf', kind: 'f32' },
];
const sectionsOf = (version: number) =>
  version === 1 ? SECTIONS_V1 : version === 2 ? SECTIONS_V2 : SECTIONS_V3;
const ELEMENT_BYTES = { u32: 4, u16: 2, f32: 4 } as const;

interface Header {
  format: 'zerda-bm25';
  analyzer: string;
  k1: number;
  b: number;
  /** Version 3: the norm's factor per unit of length the exact block bounds were taken at. */
  blockPerLength?: number;
  sections: Array<{ name: string; offset: number; byteLength: number }>;
}

const align8 = (n: number) => (n + 7) & ~7;

/** Writes the current version (older versions exist for tests of old files). */
export function encodeSnapshot(
  snapshot: BM25Snapshot,
  version: FormatVersion = BM25_FORMAT_VERSION,
): Uint8Array {
  if (!littleEndian) throw new IndexFormatError({ message: 'Saving indexes needs a little-endian machine' });
  const encoder = new TextEncoder();
  const layout = sectionsOf(version);
  const payloads = layout.map(({ name, kind }) => {
    const value = snapshot[name];
    if (kind === 'json') return encoder.encode(JSON.stringify(value));
    if (value === undefined) throw new Error(`encodeSnapshot: section '${name}' is missing`);
    const array = value as Uint32Array | Uint16Array | Float32Array;
    return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  });
  // The header holds section offsets relative to the start of the data area.
  const sections: Header['sections'] = [];
  let offset = 0;
  layout.forEach(({ name }, i) => {
    const byteLength = (payloads[i] as Uint8Array).byteLength;
    sections.push({ name, offset, byteLength });
    offset = align8(offset + byteLength);
  });
  const header: Header = {
    format: 'zerda-bm25',
    analyzer: snapshot.analyzer,
    k1: snapshot.k1,
    b: snapshot.b,
    ...(version >= 3 ? { blockPerLength: snapshot.blockPerLength ?? 0 } : {}),
    sections,
  };
  const headerBytes = encoder.encode(JSON.stringify(header));
  const dataStart = align8(16 + headerBytes.byteLength);
  const total = dataStart + offset + 4;
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  view.setUint32(8, version, true);
  view.setUint32(12, headerBytes.byteLength, true);
  bytes.set(headerBytes, 16);
  sections.forEach((section, i) => {
    bytes.set(payloads[i] as Uint8Array, dataStart + section.offset);
  });
  view.setUint32(total - 4, crc32(bytes.subarray(0, total - 4)), true);
  return bytes;
}

/** How `decodeSnapshot` may treat its input. */
export interface DecodeOptions {
  /**
   * The bytes are the caller's to give away: aligned sections become views into them instead of
   * copies, and the index may change them. Never for bytes someone else still holds.
   */
  adopt?: boolean;
  /** The bytes were already checked against a checksum (a collection storage's): the file's own is skipped. */
  verified?: boolean;
}

export function decodeSnapshot(bytes: Uint8Array, path?: string, options: DecodeOptions = {}): BM25Snapshot {
  const fail = (message: string, cause?: unknown): never => {
    throw new IndexFormatError({ message: `Not a readable Zerda BM25 index: ${message}`, path, cause });
  };
  if (bytes.byteLength < 20) fail(`the file is ${bytes.byteLength} bytes, too short to be an index`);
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) fail('wrong magic number (not a Zerda BM25 index file)');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (!READABLE_VERSIONS.includes(version)) {
    fail(
      `format version ${version}, this Zerda reads versions ${READABLE_VERSIONS.slice(0, -1).join(', ')} and ${READABLE_VERSIONS.at(-1)}`,
    );
  }
  const storedCrc = view.getUint32(bytes.byteLength - 4, true);
  if (options.verified !== true && crc32(bytes.subarray(0, bytes.byteLength - 4)) !== storedCrc)
    fail('checksum mismatch (the file is corrupt or truncated)');
  const headerLength = view.getUint32(12, true);
  if (16 + headerLength > bytes.byteLength - 4) fail('header length beyond the end of the file');
  let header: Header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + headerLength))) as Header;
  } catch (error) {
    return fail('unreadable header', error);
  }
  if (header.format !== 'zerda-bm25' || !Array.isArray(header.sections))
    fail('header is not a BM25 index header');
  const dataStart = align8(16 + headerLength);
  const dataEnd = bytes.byteLength - 4;
  const decoded: Partial<Record<SectionName, unknown>> = {};
  for (const { name, kind } of sectionsOf(version)) {
    const section = header.sections.find((s) => s.name === name);
    if (!section) return fail(`section '${name}' is missing`);
    const start = dataStart + section.offset;
    const end = start + section.byteLength;
    if (!Number.isInteger(start) || start < dataStart || end > dataEnd)
      fail(`section '${name}' lies outside the file`);
    // A copy, aligned and detached from the input (a Node Buffer may be a view into a shared pool),
    // unless the input is given away and the section is aligned for its elements.
    const bytesOfSection = bytes.subarray(start, end);
    const slice =
      options.adopt === true && bytesOfSection.byteOffset % 4 === 0
        ? bytesOfSection
        : new Uint8Array(bytesOfSection);
    if (kind === 'json') {
      try {
        decoded[name] = JSON.parse(new TextDecoder().decode(slice));
      } catch (error) {
        return fail(`section '${name}' is not valid JSON`, error);
      }
    } else {
      if (section.byteLength % ELEMENT_BYTES[kind] !== 0) fail(`section '${name}' has a partial element`);
      const { buffer, byteOffset } = slice;
      const length = slice.byteLength / ELEMENT_BYTES[kind];
      decoded[name] =
        kind === 'u32'
          ? new Uint32Array(buffer, byteOffset, length)
          : kind === 'u16'
            ? new Uint16Array(buffer, byteOffset, length)
            : new Float32Array(buffer, byteOffset, length);
    }
  }
  const snapshot = { analyzer: header.analyzer, k1: header.k1, b: header.b, ...decoded } as BM25Snapshot;
  if (version >= 3) snapshot.blockPerLength = header.blockPerLength as number;
  validateSnapshot(snapshot, fail);
  return snapshot;
}

/** Structural checks, so a file that passes the checksum but lies about its shape is still refused. */
function validateSnapshot(s: BM25Snapshot, fail: (message: string) => never): void {
  if (typeof s.analyzer !== 'string' || !Number.isFinite(s.k1) || !Number.isFinite(s.b)) fail('bad settings');
  if (!Array.isArray(s.ids) || !s.ids.every((id) => typeof id === 'string'))
    fail('document ids are not strings');
  if (!Array.isArray(s.vocabulary) || !s.vocabulary.every((t) => typeof t === 'string'))
    fail('terms are not strings');
  const documents = s.ids.length;
  const terms = s.vocabulary.length;
  // Duplicate ids are refused by BM25Index.deserialize, on the id map it builds anyway.
  if (s.lengths.length !== documents) fail('document lengths do not match the documents');
  const { segmentTerms, termStart, postDocs, documentFrequency } = s;
  if (documentFrequency.length !== terms || s.maxTf.length !== terms || s.minLength.length !== terms) {
    fail('term statistics do not match the vocabulary');
  }
  if (termStart.length !== segmentTerms.length + 1 || termStart[0] !== 0) fail('bad term offsets');
  if (termStart[termStart.length - 1] !== postDocs.length || s.postTfs.length !== postDocs.length) {
    fail('postings do not match the term offsets');
  }
  let previousTerm = -1;
  for (let i = 0; i < segmentTerms.length; i++) {
    const term = segmentTerms[i] as number;
    if (term >= terms || term <= previousTerm) fail('term ids out of order or range');
    previousTerm = term;
    const from = termStart[i] as number;
    const to = termStart[i + 1] as number;
    if (to < from) fail('term offsets decrease');
    if (to - from !== documentFrequency[term])
      fail(`document frequency of term ${term} disagrees with its postings`);
    // One pass over the postings: ascending within a term and below the document count.
    let previousDoc = -1;
    let p = from;
    for (; p < to; p++) {
      const doc = postDocs[p] as number;
      if (doc <= previousDoc) break;
      previousDoc = doc;
    }
    if (p < to || previousDoc >= documents) fail('posting documents out of order or range');
  }
  if (s.blockFirst !== undefined) validateBlocks(s, fail);
}

/**
 * The block metadata must have one block per BLOCK_SIZE postings of each term and documents in
 * range; its bounds are trusted (the checksum guards them), since checking them would mean
 * recomputing them, which is what saving them avoids.
 */
function validateBlocks(s: BM25Snapshot, fail: (message: string) => never): void {
  const { blockFirst, blockLastDoc, blockMaxTf, blockMinLengthPerTf, termStart } = s;
  if (!blockFirst || !blockLastDoc || !blockMaxTf || !blockMinLengthPerTf) fail('block sections missing');
  const termCount = termStart.length - 1;
  if (blockFirst.length !== termCount + 1 || blockFirst[0] !== 0) fail('bad block offsets');
  for (let i = 0; i < termCount; i++) {
    const postings = (termStart[i + 1] as number) - (termStart[i] as number);
    if (
      (blockFirst[i + 1] as number) - (blockFirst[i] as number) !==
      (postings + BLOCK_SIZE - 1) >>> BLOCK_SHIFT
    )
      fail(`block offsets of term position ${i} disagree with its postings`);
  }
  const blockCount = blockFirst[termCount] as number;
  if (
    blockLastDoc.length !== blockCount ||
    blockMaxTf.length !== blockCount ||
    blockMinLengthPerTf.length !== blockCount ||
    (s.blockMinNormPerTf !== undefined && s.blockMinNormPerTf.length !== blockCount)
  ) {
    fail('block metadata does not match the block offsets');
  }
  if (
    s.blockMinNormPerTf !== undefined &&
    (typeof s.blockPerLength !== 'number' || !(s.blockPerLength >= 0) || !Number.isFinite(s.blockPerLength))
  ) {
    fail('the exact block bounds have no valid length factor');
  }
  const documents = s.ids.length;
  for (let block = 0; block < blockCount; block++) {
    if ((blockLastDoc[block] as number) >= documents) fail('block documents out of range');
  }
}
