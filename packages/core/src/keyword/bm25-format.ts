import { IndexFormatError } from '../errors/index.js';
import { crc32 } from '../util/crc32.js';

/** Typed arrays use the platform's byte order; the format is little-endian. */
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The on-disk form of a BM25 index (format version 1): a magic number, the version, a JSON header
 * describing typed sections, the sections (8-byte aligned, little-endian), and a CRC-32 of all
 * preceding bytes. Readers refuse anything that does not check out, with the reason.
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
}

const MAGIC = Uint8Array.from([0x5a, 0x45, 0x52, 0x44, 0x41, 0x42, 0x4d, 0x32]); // "ZERDABM2"
export const BM25_FORMAT_VERSION = 1;

type SectionName = Exclude<keyof BM25Snapshot, 'analyzer' | 'k1' | 'b'>;
const SECTIONS: Array<{ name: SectionName; kind: 'json' | 'u32' | 'u16' }> = [
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

interface Header {
  format: 'zerda-bm25';
  analyzer: string;
  k1: number;
  b: number;
  sections: Array<{ name: string; offset: number; byteLength: number }>;
}

const align8 = (n: number) => (n + 7) & ~7;

export function encodeSnapshot(snapshot: BM25Snapshot): Uint8Array {
  if (!littleEndian) throw new IndexFormatError({ message: 'Saving indexes needs a little-endian machine' });
  const encoder = new TextEncoder();
  const payloads = SECTIONS.map(({ name, kind }) => {
    const value = snapshot[name];
    if (kind === 'json') return encoder.encode(JSON.stringify(value));
    const array = value as Uint32Array | Uint16Array;
    return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  });
  // The header holds section offsets relative to the start of the data area.
  const sections: Header['sections'] = [];
  let offset = 0;
  SECTIONS.forEach(({ name }, i) => {
    const byteLength = (payloads[i] as Uint8Array).byteLength;
    sections.push({ name, offset, byteLength });
    offset = align8(offset + byteLength);
  });
  const header: Header = {
    format: 'zerda-bm25',
    analyzer: snapshot.analyzer,
    k1: snapshot.k1,
    b: snapshot.b,
    sections,
  };
  const headerBytes = encoder.encode(JSON.stringify(header));
  const dataStart = align8(16 + headerBytes.byteLength);
  const total = dataStart + offset + 4;
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  view.setUint32(8, BM25_FORMAT_VERSION, true);
  view.setUint32(12, headerBytes.byteLength, true);
  bytes.set(headerBytes, 16);
  sections.forEach((section, i) => {
    bytes.set(payloads[i] as Uint8Array, dataStart + section.offset);
  });
  view.setUint32(total - 4, crc32(bytes.subarray(0, total - 4)), true);
  return bytes;
}

export function decodeSnapshot(bytes: Uint8Array, path?: string): BM25Snapshot {
  const fail = (message: string, cause?: unknown): never => {
    throw new IndexFormatError({ message: `Not a readable Zerda BM25 index: ${message}`, path, cause });
  };
  if (bytes.byteLength < 20) fail(`the file is ${bytes.byteLength} bytes, too short to be an index`);
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) fail('wrong magic number (not a Zerda BM25 index file)');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version !== BM25_FORMAT_VERSION) {
    fail(`format version ${version}, this Zerda reads version ${BM25_FORMAT_VERSION}`);
  }
  const storedCrc = view.getUint32(bytes.byteLength - 4, true);
  if (crc32(bytes.subarray(0, bytes.byteLength - 4)) !== storedCrc)
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
  for (const { name, kind } of SECTIONS) {
    const section = header.sections.find((s) => s.name === name);
    if (!section) return fail(`section '${name}' is missing`);
    const start = dataStart + section.offset;
    const end = start + section.byteLength;
    if (!Number.isInteger(start) || start < dataStart || end > dataEnd)
      fail(`section '${name}' lies outside the file`);
    // A copy, aligned and detached from the input (a Node Buffer may be a view into a shared pool).
    const slice = new Uint8Array(bytes.subarray(start, end));
    if (kind === 'json') {
      try {
        decoded[name] = JSON.parse(new TextDecoder().decode(slice));
      } catch (error) {
        return fail(`section '${name}' is not valid JSON`, error);
      }
    } else {
      const width = kind === 'u32' ? 4 : 2;
      if (section.byteLength % width !== 0) fail(`section '${name}' has a partial element`);
      decoded[name] = kind === 'u32' ? new Uint32Array(slice.buffer) : new Uint16Array(slice.buffer);
    }
  }
  const snapshot = { analyzer: header.analyzer, k1: header.k1, b: header.b, ...decoded } as BM25Snapshot;
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
  if (new Set(s.ids).size !== documents) fail('duplicate document ids');
  if (s.lengths.length !== documents) fail('document lengths do not match the documents');
  if (s.documentFrequency.length !== terms || s.maxTf.length !== terms || s.minLength.length !== terms) {
    fail('term statistics do not match the vocabulary');
  }
  if (s.termStart.length !== s.segmentTerms.length + 1 || s.termStart[0] !== 0) fail('bad term offsets');
  if (s.termStart[s.termStart.length - 1] !== s.postDocs.length || s.postTfs.length !== s.postDocs.length) {
    fail('postings do not match the term offsets');
  }
  for (let i = 0; i < s.segmentTerms.length; i++) {
    const term = s.segmentTerms[i] as number;
    if (term >= terms || (i > 0 && term <= (s.segmentTerms[i - 1] as number)))
      fail('term ids out of order or range');
    const from = s.termStart[i] as number;
    const to = s.termStart[i + 1] as number;
    if (to < from) fail('term offsets decrease');
    if (to - from !== s.documentFrequency[term])
      fail(`document frequency of term ${term} disagrees with its postings`);
    for (let p = from; p < to; p++) {
      const doc = s.postDocs[p] as number;
      if (doc >= documents || (p > from && doc <= (s.postDocs[p - 1] as number)))
        fail('posting documents out of order or range');
    }
  }
}
