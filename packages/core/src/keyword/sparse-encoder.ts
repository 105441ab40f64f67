import { IndexFormatError, InvalidArgumentError } from '../errors/index.js';
import { type Analyzer, defaultAnalyzer } from '../text/index.js';
import { crc32 } from '../util/crc32.js';
import type { SparseVector } from '../vector/driver.js';
import { DEFAULT_B, DEFAULT_K1 } from './bm25-index.js';

/**
 * Size of the term-id space. pgvector's `sparsevec` allows at most 1,000,000,000 dimensions and
 * Pinecone takes any uint32 index, so this is the largest space both accept.
 */
export const SPARSE_DIMENSION = 1_000_000_000;

/** How a term becomes an id; saved with the statistics and checked on load. */
export const SPARSE_TERM_ID_SCHEME = `murmur3-32/utf8/seed-0/mod-${SPARSE_DIMENSION}`;

/** Format name and version of `BM25SparseEncoder.save`. */
export const SPARSE_ENCODER_FORMAT = 'zerda-bm25-sparse';
export const SPARSE_ENCODER_FORMAT_VERSION = 1;

/** The index keeps term frequencies in 16 bits; the encoder saturates at the same value. */
const MAX_TF = 0xffff;
const MAGIC = Uint8Array.from([0x5a, 0x45, 0x52, 0x44, 0x41, 0x53, 0x50, 0x31]); // "ZERDASP1"

export interface BM25SparseEncoderOptions {
  /** Text analysis for documents and queries (default: `defaultAnalyzer`). */
  analyzer?: Analyzer;
  /** Term-frequency saturation (default 1.2, as `BM25Index`). */
  k1?: number;
  /** Length normalisation, 0 to 1 (default 0.75, as `BM25Index`). */
  b?: number;
}

export interface BM25SparseStats {
  /** Texts counted by `add` and not removed. */
  documentCount: number;
  /** Sum of their analysed lengths (terms, repeats included). */
  totalLength: number;
  /** totalLength / documentCount (0 when empty). */
  averageLength: number;
  /** Term ids held by at least one counted text. */
  terms: number;
}

/**
 * BM25 as a dot product of sparse vectors, for databases that rank by sparse dot product
 * (pgvector `sparsevec`, Pinecone sparse-dense), with exactly the scores of `BM25Index`:
 *
 *   score(q, d) = sum over terms t of  qtf(t) * idf(t)  *  (k1 + 1) * tf / (tf + k1 * (1 - b + b * dl / avgdl))
 *                                      \_ query side _/    \__________________ document side _______________/
 *
 * with idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)), tf capped at 65,535, dl the analysed length
 * and avgdl = totalLength / N, as the index computes them (no lossy length norms). Every
 * corpus-wide statistic but the average length is on the query side, which is encoded at query
 * time from the current statistics: so when the corpus grows or shrinks after documents were
 * encoded and stored, only their average length is stale. A stored term weight then differs from
 * a fresh one by a factor between 1 and avgdl(at encoding) / avgdl(now), so every stored score
 * is within that factor of the exact one; re-encoding the documents restores exactness. (CISI
 * indexed in ten growing slices, never re-encoded: largest score error 6%, nDCG@10 0.3987
 * against 0.4018 exact; see the `sparse-drift` bench suite.) Values are float32, as databases
 * store them: scores agree with the index's to about 1e-7 relative.
 *
 * Term ids: MurmurHash3 (x86, 32-bit, seed 0) of the analysed term's UTF-8 bytes (a lone
 * surrogate encoded as U+FFFD, as TextEncoder does), modulo 1,000,000,000: the same id on every
 * machine and process, with no vocabulary to keep or ship. Document frequencies are kept per id,
 * so the encoder is exact BM25 over hashed terms; it equals the index's BM25 unless two terms of
 * the corpus share an id. Expected colliding pairs among V distinct terms are about
 * V^2 / (2 * 10^9) (1.1% more, since 2^32 is not a multiple of 10^9): 0.05 for 10,000 terms,
 * 5 for 100,000, 500 for 1,000,000 (about 1,000 of the 1,000,000 terms share an id with
 * another, mostly rare terms, since most terms are rare). A query term absent from the corpus
 * matches a corpus term's id with probability V / 10^9.
 */
export class BM25SparseEncoder {
  readonly analyzer: Analyzer;
  readonly k1: number;
  readonly b: number;
  /** Size of the term-id space: every index is below it. */
  readonly dimension = SPARSE_DIMENSION;
  readonly termIdScheme = SPARSE_TERM_ID_SCHEME;

  private readonly frequencies = new DocumentFrequencies();
  private documentCount = 0;
  private totalLength = 0;
  /** Term ids of the text being encoded, reused between calls. */
  private termIdScratch = new Uint32Array(256);

  constructor(options: BM25SparseEncoderOptions = {}) {
    const { k1 = DEFAULT_K1, b = DEFAULT_B } = options;
    if (typeof k1 !== 'number' || !Number.isFinite(k1) || k1 < 0) {
      throw new InvalidArgumentError({ argument: 'k1', value: k1, message: 'must be a finite number >= 0' });
    }
    if (typeof b !== 'number' || !Number.isFinite(b) || b < 0 || b > 1) {
      throw new InvalidArgumentError({
        argument: 'b',
        value: b,
        message: 'must be a number between 0 and 1',
      });
    }
    this.analyzer = options.analyzer ?? defaultAnalyzer;
    this.k1 = k1;
    this.b = b;
  }

  get stats(): BM25SparseStats {
    return {
      documentCount: this.documentCount,
      totalLength: this.totalLength,
      averageLength: this.documentCount === 0 ? 0 : this.totalLength / this.documentCount,
      terms: this.frequencies.size,
    };
  }

  /** The id of an analysed term (pass terms the analyser produced, not raw text). */
  termId(term: string): number {
    if (typeof term !== 'string') {
      throw new InvalidArgumentError({ argument: 'term', value: term, message: 'must be a string' });
    }
    return hashTermId(term);
  }

  /**
   * Counts texts into the statistics (document count, document frequency per term id, total
   * length). All or nothing: a bad batch changes nothing.
   */
  add(texts: readonly string[]): void {
    checkTexts(texts);
    let applied = 0;
    try {
      for (; applied < texts.length; applied++) this.count(texts[applied] as string, 1);
    } catch (error) {
      // Only a throwing custom analyser gets here; undo the texts already counted.
      for (let i = 0; i < applied; i++) this.count(texts[i] as string, -1);
      throw error;
    }
  }

  /**
   * Undoes `add` for texts that were added. If that would make a statistic negative (a text that
   * was never added, or removed twice), throws InvalidArgumentError and changes nothing.
   */
  remove(texts: readonly string[]): void {
    checkTexts(texts);
    if (texts.length > this.documentCount) {
      throw new InvalidArgumentError({
        argument: 'texts',
        value: texts.length,
        message: `removing ${texts.length} texts, but only ${this.documentCount} are counted`,
      });
    }
    // Check the whole batch before changing anything: per id, how many texts of the batch hold it.
    const needed = new Map<number, number>();
    let length = 0;
    for (let i = 0; i < texts.length; i++) {
      const n = this.sortedTermIds(texts[i] as string);
      length += n;
      const ids = this.termIdScratch;
      for (let j = 0; j < n; j++) {
        const id = ids[j] as number;
        if (j > 0 && id === ids[j - 1]) continue;
        const count = (needed.get(id) ?? 0) + 1;
        if (count > this.frequencies.get(id)) throw this.notCounted(texts, i, id);
        needed.set(id, count);
      }
    }
    if (length > this.totalLength) {
      throw new InvalidArgumentError({
        argument: 'texts',
        value: length,
        message: `the texts hold ${length} terms, more than the ${this.totalLength} counted: they were not all added`,
      });
    }
    for (let i = 0; i < texts.length; i++) this.count(texts[i] as string, -1);
  }

  /** The document side of BM25 for a text, with the current average length (see the class comment). */
  encodeDocument(text: string): SparseVector {
    checkText(text, 'text');
    const n = this.sortedTermIds(text);
    return this.documentVector(n, this.averageLength());
  }

  /** `encodeDocument` for each text, with the same statistics. */
  encodeDocuments(texts: readonly string[]): SparseVector[] {
    checkTexts(texts);
    const averageLength = this.averageLength();
    const vectors: SparseVector[] = new Array(texts.length);
    for (let i = 0; i < texts.length; i++) {
      vectors[i] = this.documentVector(this.sortedTermIds(texts[i] as string), averageLength);
    }
    return vectors;
  }

  /**
   * `add` then `encodeDocuments` (each text encoded with statistics that include the whole
   * batch, as a BM25Index holding them would score it), analysing each text once.
   */
  addAndEncode(texts: readonly string[]): SparseVector[] {
    checkTexts(texts);
    const sorted: Uint32Array[] = new Array(texts.length);
    for (let i = 0; i < texts.length; i++) {
      const n = this.sortedTermIds(texts[i] as string);
      sorted[i] = this.termIdScratch.slice(0, n);
    }
    for (const ids of sorted) this.countIds(ids, ids.length, 1);
    const averageLength = this.averageLength();
    return sorted.map((ids) => documentVector(ids, ids.length, averageLength, this.k1, this.b));
  }

  /**
   * The query side: each distinct term's query frequency times its IDF under the current
   * statistics. Terms no counted text holds are left out (they would score 0).
   */
  encodeQuery(text: string): SparseVector {
    checkText(text, 'text');
    const n = this.sortedTermIds(text);
    const ids = this.termIdScratch;
    const count = this.documentCount;
    let distinct = 0;
    for (let i = 0; i < n; i++) {
      if ((i === 0 || ids[i] !== ids[i - 1]) && this.frequencies.get(ids[i] as number) > 0) distinct++;
    }
    const indices = new Uint32Array(distinct);
    const values = new Float32Array(distinct);
    let out = 0;
    for (let i = 0; i < n; ) {
      const id = ids[i] as number;
      let end = i + 1;
      while (end < n && ids[end] === id) end++;
      const df = this.frequencies.get(id);
      if (df > 0) {
        indices[out] = id;
        values[out] = (end - i) * Math.log(1 + (count - df + 0.5) / (df + 0.5));
        out++;
      }
      i = end;
    }
    return { indices, values };
  }

  /**
   * The statistics in a compact binary form: "ZERDASP1", format version (u32), a JSON header
   * (format name, analyser name, term-id scheme, k1, b, document count, total length, term count),
   * then ascending term ids (u32) and their document frequencies (u32), 8-byte aligned and
   * little-endian, then a CRC-32 of everything before it.
   */
  save(): Uint8Array {
    const ids = this.frequencies.sortedIds();
    const header: SavedHeader = {
      format: SPARSE_ENCODER_FORMAT,
      analyzer: this.analyzer.name,
      termIdScheme: this.termIdScheme,
      k1: this.k1,
      b: this.b,
      documentCount: this.documentCount,
      totalLength: this.totalLength,
      terms: ids.length,
    };
    const headerBytes = new TextEncoder().encode(JSON.stringify(header));
    const dataStart = align8(16 + headerBytes.byteLength);
    const total = dataStart + ids.length * 8 + 4;
    const bytes = new Uint8Array(total);
    const view = new DataView(bytes.buffer);
    bytes.set(MAGIC, 0);
    view.setUint32(8, SPARSE_ENCODER_FORMAT_VERSION, true);
    view.setUint32(12, headerBytes.byteLength, true);
    bytes.set(headerBytes, 16);
    const frequenciesStart = dataStart + ids.length * 4;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      view.setUint32(dataStart + i * 4, id, true);
      view.setUint32(frequenciesStart + i * 4, this.frequencies.get(id), true);
    }
    view.setUint32(total - 4, crc32(bytes.subarray(0, total - 4)), true);
    return bytes;
  }

  /**
   * Reads statistics written by `save`. The analyser must be the one they were counted with
   * (compared by name, as indexes and collections do) and the term-id scheme this encoder's:
   * otherwise, or if the bytes are truncated or corrupt, throws IndexFormatError.
   */
  static load(bytes: Uint8Array, options: { analyzer?: Analyzer; path?: string } = {}): BM25SparseEncoder {
    const path = options.path;
    const fail = (message: string, cause?: unknown): never => {
      throw new IndexFormatError({
        message: `Not readable BM25 sparse-encoder statistics: ${message}`,
        path,
        cause,
      });
    };
    if (!(bytes instanceof Uint8Array)) return fail('expected the bytes as a Uint8Array');
    if (bytes.byteLength < 20) fail(`${bytes.byteLength} bytes, too short to hold statistics`);
    for (let i = 0; i < MAGIC.length; i++) {
      if (bytes[i] !== MAGIC[i]) fail('wrong magic number (not saved by BM25SparseEncoder)');
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const version = view.getUint32(8, true);
    if (version !== SPARSE_ENCODER_FORMAT_VERSION) {
      fail(`format version ${version}, this Zerda reads version ${SPARSE_ENCODER_FORMAT_VERSION}`);
    }
    if (crc32(bytes.subarray(0, bytes.byteLength - 4)) !== view.getUint32(bytes.byteLength - 4, true)) {
      fail('checksum mismatch (the bytes are corrupt or truncated)');
    }
    const headerLength = view.getUint32(12, true);
    if (16 + headerLength > bytes.byteLength - 4) fail('header length beyond the end of the bytes');
    let header: SavedHeader;
    try {
      header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + headerLength))) as SavedHeader;
    } catch (error) {
      return fail('unreadable header', error);
    }
    if (header === null || typeof header !== 'object' || header.format !== SPARSE_ENCODER_FORMAT) {
      fail(`header format ${JSON.stringify(header?.format)}, expected '${SPARSE_ENCODER_FORMAT}'`);
    }
    const analyzer = options.analyzer ?? defaultAnalyzer;
    if (header.analyzer !== analyzer.name) {
      fail(`the statistics were counted with analyser '${header.analyzer}' but '${analyzer.name}' was given`);
    }
    if (header.termIdScheme !== SPARSE_TERM_ID_SCHEME) {
      fail(
        `the statistics use term-id scheme '${header.termIdScheme}' but this encoder uses '${SPARSE_TERM_ID_SCHEME}'`,
      );
    }
    const { documentCount, totalLength, terms } = header;
    for (const [name, value] of [
      ['documentCount', documentCount],
      ['totalLength', totalLength],
      ['terms', terms],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < 0) fail(`${name} ${JSON.stringify(value)} is not a count`);
    }
    const dataStart = align8(16 + headerLength);
    if (dataStart + terms * 8 !== bytes.byteLength - 4) {
      fail(`${terms} terms do not fit the ${bytes.byteLength - 4 - dataStart} bytes of data`);
    }
    let encoder: BM25SparseEncoder;
    try {
      encoder = new BM25SparseEncoder({ analyzer, k1: header.k1, b: header.b });
    } catch (error) {
      return fail(`bad settings k1=${String(header.k1)} b=${String(header.b)}`, error);
    }
    const frequenciesStart = dataStart + terms * 4;
    let previous = -1;
    for (let i = 0; i < terms; i++) {
      const id = view.getUint32(dataStart + i * 4, true);
      const df = view.getUint32(frequenciesStart + i * 4, true);
      if (id <= previous || id >= SPARSE_DIMENSION) fail(`term id ${id} out of order or range`);
      if (df === 0 || df > documentCount)
        fail(`term id ${id} has document frequency ${df} of ${documentCount} texts`);
      encoder.frequencies.set(id, df);
      previous = id;
    }
    if (terms > 0 && documentCount === 0) fail('terms without texts');
    encoder.documentCount = documentCount;
    encoder.totalLength = totalLength;
    return encoder;
  }

  /** As the index: avgdl falls back to 1 when there is nothing to average. */
  private averageLength(): number {
    return this.totalLength / this.documentCount || 1;
  }

  /** Analyses a text into `termIdScratch`, sorted; returns how many ids (the analysed length). */
  private sortedTermIds(text: string): number {
    const terms = this.analyzer.analyze(text);
    const n = terms.length;
    if (this.termIdScratch.length < n)
      this.termIdScratch = new Uint32Array(Math.max(n, this.termIdScratch.length * 2));
    const ids = this.termIdScratch;
    for (let i = 0; i < n; i++) ids[i] = hashTermId(terms[i] as string);
    // Numeric in-place sort of a view: equal ids become runs (term frequencies), ascending as a SparseVector needs.
    ids.subarray(0, n).sort();
    return n;
  }

  private documentVector(n: number, averageLength: number): SparseVector {
    return documentVector(this.termIdScratch, n, averageLength, this.k1, this.b);
  }

  /** Adds (sign 1) or takes away (sign -1) one text's statistics. */
  private count(text: string, sign: 1 | -1): void {
    const n = this.sortedTermIds(text); // first: it may replace the scratch array
    this.countIds(this.termIdScratch, n, sign);
  }

  private countIds(ids: Uint32Array, n: number, sign: 1 | -1): void {
    for (let i = 0; i < n; i++) {
      const id = ids[i] as number;
      if (i > 0 && id === ids[i - 1]) continue;
      if (sign === 1) this.frequencies.increment(id);
      else this.frequencies.decrement(id);
    }
    this.documentCount += sign;
    this.totalLength += sign * n;
  }

  /** The error for removing `texts[index]`, which holds a term id no (other) counted text holds. */
  private notCounted(texts: readonly string[], index: number, id: number): InvalidArgumentError {
    const term = this.analyzer.analyze(texts[index] as string).find((t) => hashTermId(t) === id);
    return new InvalidArgumentError({
      argument: `texts[${index}]`,
      value: texts[index],
      message: `holds the term '${term}' (id ${id}), whose document frequency would go below 0: the text was not added, or was removed already`,
    });
  }
}

interface SavedHeader {
  format: string;
  analyzer: string;
  termIdScheme: string;
  k1: number;
  b: number;
  documentCount: number;
  totalLength: number;
  terms: number;
}

const align8 = (n: number) => (n + 7) & ~7;

/** The document vector of sorted term ids: (k1 + 1) * tf / (tf + k1 * (1 - b + b * dl / avgdl)) per distinct id. */
function documentVector(
  ids: Uint32Array,
  n: number,
  averageLength: number,
  k1: number,
  b: number,
): SparseVector {
  let distinct = 0;
  for (let i = 0; i < n; i++) if (i === 0 || ids[i] !== ids[i - 1]) distinct++;
  const indices = new Uint32Array(distinct);
  const values = new Float32Array(distinct);
  // The same expression as the index's norm, so the float64 values agree bit for bit before rounding.
  const norm = k1 * (1 - b + (b * n) / averageLength);
  const saturation = k1 + 1;
  let out = 0;
  for (let i = 0; i < n; ) {
    const id = ids[i] as number;
    let end = i + 1;
    while (end < n && ids[end] === id) end++;
    const tf = Math.min(end - i, MAX_TF);
    indices[out] = id;
    values[out] = (saturation * tf) / (tf + norm);
    out++;
    i = end;
  }
  return { indices, values };
}

function checkText(text: unknown, argument: string): void {
  if (typeof text !== 'string') {
    throw new InvalidArgumentError({
      argument,
      value: text,
      message: `must be a string, got ${typeof text}`,
    });
  }
}

function checkTexts(texts: unknown): asserts texts is readonly string[] {
  if (!Array.isArray(texts)) {
    throw new InvalidArgumentError({
      argument: 'texts',
      value: texts,
      message: `expected an array of strings, got ${texts === null ? 'null' : typeof texts}`,
    });
  }
  for (let i = 0; i < texts.length; i++) checkText(texts[i], `texts[${i}]`);
}

/**
 * Document frequency per term id: an open-addressing table (linear probing, Fibonacci hashing,
 * backward-shift deletion so removals leave no tombstones) over two typed arrays.
 */
class DocumentFrequencies {
  private static readonly EMPTY = 0xffffffff; // never an id: ids are below SPARSE_DIMENSION
  private keys = new Uint32Array(1024).fill(DocumentFrequencies.EMPTY);
  private counts = new Uint32Array(1024);
  private shift = 32 - 10;
  /** Ids with a frequency above 0. */
  size = 0;

  get(id: number): number {
    const { keys, counts } = this;
    const mask = keys.length - 1;
    for (let slot = this.home(id); ; slot = (slot + 1) & mask) {
      const key = keys[slot] as number;
      if (key === id) return counts[slot] as number;
      if (key === DocumentFrequencies.EMPTY) return 0;
    }
  }

  set(id: number, count: number): void {
    const slot = this.find(id);
    this.counts[slot] = count;
  }

  increment(id: number): void {
    const slot = this.find(id);
    this.counts[slot] = (this.counts[slot] as number) + 1;
  }

  /** Takes one from an id's frequency (which must be above 0), deleting the entry at 0. */
  decrement(id: number): void {
    const { keys, counts } = this;
    const mask = keys.length - 1;
    let slot = this.home(id);
    while (keys[slot] !== id) {
      if (keys[slot] === DocumentFrequencies.EMPTY) throw new Error(`term id ${id} has no frequency`);
      slot = (slot + 1) & mask;
    }
    const count = (counts[slot] as number) - 1;
    if (count > 0) {
      counts[slot] = count;
      return;
    }
    // Backward shift: pull later entries of the probe run into the hole when their home allows.
    let hole = slot;
    for (let next = (hole + 1) & mask; keys[next] !== DocumentFrequencies.EMPTY; next = (next + 1) & mask) {
      const home = this.home(keys[next] as number);
      if (((next - home) & mask) >= ((next - hole) & mask)) {
        keys[hole] = keys[next] as number;
        counts[hole] = counts[next] as number;
        hole = next;
      }
    }
    keys[hole] = DocumentFrequencies.EMPTY;
    counts[hole] = 0;
    this.size--;
  }

  /** Every id with a frequency, ascending. */
  sortedIds(): Uint32Array {
    const ids = new Uint32Array(this.size);
    let out = 0;
    for (let slot = 0; slot < this.keys.length; slot++) {
      const key = this.keys[slot] as number;
      if (key !== DocumentFrequencies.EMPTY) ids[out++] = key;
    }
    return ids.sort();
  }

  private home(id: number): number {
    return Math.imul(id, 0x9e3779b1) >>> this.shift;
  }

  /** The slot of `id`, inserting it with count 0 if absent. */
  private find(id: number): number {
    const mask = this.keys.length - 1;
    let slot = this.home(id);
    for (;;) {
      const key = this.keys[slot] as number;
      if (key === id) return slot;
      if (key === DocumentFrequencies.EMPTY) break;
      slot = (slot + 1) & mask;
    }
    if ((this.size + 1) * 2 > this.keys.length) {
      this.grow();
      return this.find(id);
    }
    this.keys[slot] = id;
    this.counts[slot] = 0;
    this.size++;
    return slot;
  }

  private grow(): void {
    const { keys, counts } = this;
    this.keys = new Uint32Array(keys.length * 2).fill(DocumentFrequencies.EMPTY);
    this.counts = new Uint32Array(keys.length * 2);
    this.shift--;
    const mask = this.keys.length - 1;
    for (let old = 0; old < keys.length; old++) {
      const key = keys[old] as number;
      if (key === DocumentFrequencies.EMPTY) continue;
      let slot = this.home(key);
      while (this.keys[slot] !== DocumentFrequencies.EMPTY) slot = (slot + 1) & mask;
      this.keys[slot] = key;
      this.counts[slot] = counts[old] as number;
    }
  }
}

/** UTF-8 bytes of the term being hashed, reused (a term's UTF-8 form is at most 3 bytes per UTF-16 unit). */
let utf8Scratch = new Uint8Array(256);

/** The term id of an analysed term: murmur3_32(UTF-8 bytes, seed 0) mod SPARSE_DIMENSION. */
export function hashTermId(term: string): number {
  return murmur3Utf8(term, 0) % SPARSE_DIMENSION;
}

/** MurmurHash3 x86 32-bit of a string's UTF-8 bytes, unsigned. Allocates nothing per call. */
export function murmur3Utf8(text: string, seed: number): number {
  // ASCII (most terms of most corpora): the UTF-16 units are the bytes, so hash them directly.
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const length = text.length;
  const blocks = length & ~3;
  let h = seed | 0;
  for (let i = 0; i < blocks; i += 4) {
    const a = text.charCodeAt(i);
    const b = text.charCodeAt(i + 1);
    const c = text.charCodeAt(i + 2);
    const d = text.charCodeAt(i + 3);
    if ((a | b | c | d) >= 0x80) return murmur3NonAscii(text, seed);
    let k = a | (b << 8) | (c << 16) | (d << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = length & 3;
  if (tail > 0) {
    let k = 0;
    for (let i = length - 1; i >= blocks; i--) {
      const unit = text.charCodeAt(i);
      if (unit >= 0x80) return murmur3NonAscii(text, seed);
      k = (k << 8) | unit;
    }
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  return fmix(h ^ length);
}

/** The general case: the text's UTF-8 bytes into a reused buffer, then hashed. */
function murmur3NonAscii(text: string, seed: number): number {
  if (utf8Scratch.length < text.length * 3) utf8Scratch = new Uint8Array(text.length * 6);
  const bytes = utf8Scratch;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      bytes[n++] = code;
      continue;
    }
    if (code < 0x800) {
      bytes[n++] = 0xc0 | (code >>> 6);
      bytes[n++] = 0x80 | (code & 0x3f);
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const low = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (code <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
        const point = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        bytes[n++] = 0xf0 | (point >>> 18);
        bytes[n++] = 0x80 | ((point >>> 12) & 0x3f);
        bytes[n++] = 0x80 | ((point >>> 6) & 0x3f);
        bytes[n++] = 0x80 | (point & 0x3f);
        i++;
        continue;
      }
      code = 0xfffd;
    }
    bytes[n++] = 0xe0 | (code >>> 12);
    bytes[n++] = 0x80 | ((code >>> 6) & 0x3f);
    bytes[n++] = 0x80 | (code & 0x3f);
  }
  return murmur3Bytes(bytes, n, seed);
}

function murmur3Bytes(bytes: Uint8Array, length: number, seed: number): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed | 0;
  const blocks = length & ~3;
  for (let i = 0; i < blocks; i += 4) {
    let k =
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = length & 3;
  if (tail > 0) {
    let k = bytes[blocks] as number;
    if (tail > 1) k |= (bytes[blocks + 1] as number) << 8;
    if (tail > 2) k |= (bytes[blocks + 2] as number) << 16;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  return fmix(h ^ length);
}

/** murmur3's finaliser: every input bit affects every output bit. Unsigned. */
function fmix(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
