import { IndexFormatError, InvalidArgumentError } from '../errors/index.js';
import { normalizeChunksWithPlaces } from '../model/normalize-chunk.js';
import { type Analyzer, defaultAnalyzer, TermKeys } from '../text/index.js';
import { StringTermKeys } from '../text/term-cache.js';
import { ensureCapacity } from '../util/growable.js';
import { type BM25Snapshot, type DecodeOptions, decodeSnapshot, encodeSnapshot } from './bm25-format.js';
import { type QueryTerms, ScoringScratch, type ScoringView, scoreTopK } from './scorer.js';
import {
  BuildScratch,
  buildBlocks,
  documentTerms,
  findSegment,
  mergeSegments,
  type NormParts,
  type PostingBlocks,
  type Segment,
  SegmentBuilder,
} from './segment.js';

export interface BM25Options {
  /** Text analysis for documents and queries (default: `defaultAnalyzer`). */
  analyzer?: Analyzer;
  /** Term-frequency saturation (default 1.2, chosen by measurement on the CISI and Cranfield collections). */
  k1?: number;
  /** Length normalisation, 0 to 1 (default 0.75). */
  b?: number;
}

export interface BM25Document {
  id: string;
  text: string;
}

export interface BM25Hit {
  id: string;
  /** Textbook BM25: sum over query terms of qtf * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)). */
  score: number;
}

export interface BM25SearchOptions {
  /** Documents for which this returns false are left out (evaluated once per matching document). */
  accept?: (id: string) => boolean;
  /** Score every posting instead of pruning with MaxScore (same top-k, slower; the reference). */
  exhaustive?: boolean;
}

export interface BM25Stats {
  documents: number;
  terms: number;
  postings: number;
  segments: number;
  averageLength: number;
  /** Bytes held by the index's typed arrays (strings and maps not counted). */
  arrayBytes: number;
}

export const DEFAULT_K1 = 1.2;
export const DEFAULT_B = 0.75;
/** Slack on MaxScore upper bounds so that floating-point rounding can never prune a true hit. */
const BOUND_SLACK = 1 + 1e-9;
/** How many segments of one size tier accumulate before they are merged. */
const MERGE_FACTOR = 8;
const sizeTier = (documents: number) => Math.floor(Math.log(Math.max(1, documents)) / Math.log(MERGE_FACTOR));

/**
 * A BM25 inverted index, built once and never rescanned per query. Terms get integer ids; postings,
 * lengths and norms live in typed arrays; documents are added, replaced and removed by id without
 * a rebuild (new documents form small segments merged in the background of later writes, removals
 * are tombstones with exact statistics). Every method is synchronous, so a query always sees the
 * index between two whole writes: never half of a batch.
 */
export class BM25Index {
  readonly analyzer: Analyzer;
  readonly k1: number;
  readonly b: number;

  // Vocabulary: term string <-> integer id, with per-term statistics.
  private readonly termIds = new Map<string, number>();
  private readonly terms: string[] = [];
  private documentFrequency: Uint32Array = new Uint32Array(64);
  private maxTf: Uint16Array = new Uint16Array(64);
  private minLength: Uint32Array = new Uint32Array(64).fill(0xffffffff);

  // Documents: external id <-> slot (slots are never reused until `optimize` renumbers them).
  private slotOf = new Map<string, number>();
  private ids: Array<string | undefined> = [];
  private lengths: Uint32Array = new Uint32Array(64);
  private norms = new Float64Array(64);
  private slotCount = 0;
  private liveCount = 0;
  private totalLength = 0;
  private normsDirty = false;

  private segments: Segment[] = [];
  private readonly buildScratch = new BuildScratch();
  /** The keys of the text being added, and term id + 1 per key of `keySpace` (0: not yet). */
  private readonly termKeys = new TermKeys();
  /** Keys for the terms of an analyser without `analyzeKeys`, made on first use. */
  private stringKeys: StringTermKeys | undefined;
  private idOfKey = new Int32Array(0);
  private keySpace = 0;
  /** The term ids of the document being added, reused from one document to the next. */
  private docTermIds = new Uint32Array(256);
  private readonly scoringScratch = new ScoringScratch();
  /** What queries read, rebuilt with the norms after every write. */
  private view: ScoringView | undefined;

  constructor(options: BM25Options = {}) {
    const { k1 = DEFAULT_K1, b = DEFAULT_B } = options;
    if (!Number.isFinite(k1) || k1 < 0) {
      throw new InvalidArgumentError({ argument: 'k1', value: k1, message: 'must be a finite number >= 0' });
    }
    if (!Number.isFinite(b) || b < 0 || b > 1) {
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

  /** Number of documents in the index. */
  get size(): number {
    return this.liveCount;
  }

  has(id: string): boolean {
    return this.slotOf.has(id);
  }

  /**
   * The slot a document is kept in, or undefined. An index read by `deserialize` and not written
   * since has its documents in slots 0 .. size-1, in `documentIds()` order, which lets a caller
   * find its own per-document data by this map rather than keep a second one.
   */
  slot(id: string): number | undefined {
    return this.slotOf.get(id);
  }

  /**
   * Adds documents, replacing any with the same id. The batch is validated first (ids, texts,
   * duplicates within the batch): a bad batch throws ChunkValidationError and changes nothing.
   */
  add(documents: Iterable<BM25Document>): void {
    const { chunks: batch, placeOf } = normalizeChunksWithPlaces(documents);
    if (batch.length === 0) return;
    // Analyse before touching documents or postings, so that a failure leaves the index as it was
    // (new vocabulary entries are harmless: a term no live document holds is never scored). Term
    // strings are turned into ids document by document, and each document's distinct terms go
    // straight into the segment being built: the batch's strings and token ids never pile up.
    const builder = new SegmentBuilder(this.slotCount, batch.length, this.buildScratch);
    try {
      for (const document of batch) {
        const tokenCount = this.analyseTermIds(document.text);
        builder.addDocument(this.docTermIds, tokenCount, this.terms.length);
      }
    } catch (error) {
      builder.abandon();
      throw error;
    }

    const replaced = batch.filter((document) => this.slotOf.has(document.id)).map((document) => document.id);
    // Not compacted: that would renumber the slots the builder numbered its documents from.
    if (replaced.length > 0) this.remove(replaced, { compact: false });

    const docStart = builder.docStart;
    this.ensureDocCapacity(docStart + batch.length);
    // An index with no slots (never written to, or emptied and optimised) numbers the batch from
    // slot 0, so the batch's map of places is its map of slots: taken as it is rather than built
    // again (a map of 100,000 ids takes about 60 ms to build).
    const adopted = docStart === 0;
    if (adopted) this.slotOf = placeOf;
    for (let i = 0; i < batch.length; i++) {
      const slot = docStart + i;
      const id = (batch[i] as BM25Document).id;
      const length = builder.lengths[i] as number;
      this.ids[slot] = id;
      if (!adopted) this.slotOf.set(id, slot);
      this.lengths[slot] = length;
      this.totalLength += length;
    }
    this.slotCount += batch.length;
    this.liveCount += batch.length;

    const segment = builder.finish(
      this.lengths,
      // Already sized to the vocabulary by termId.
      { documentFrequency: this.documentFrequency, maxTf: this.maxTf, minLength: this.minLength },
      this.normParts(),
    );
    this.segments.push(segment);
    this.mergeTail();
    this.normsDirty = true;
  }

  /** Removes documents by id; unknown ids are ignored. Returns how many were removed. */
  remove(ids: Iterable<string>, options: { compact?: boolean } = {}): number {
    let removed = 0;
    for (const id of idList(ids)) {
      const slot = this.slotOf.get(id);
      if (slot === undefined) continue;
      const segment = this.segments[findSegment(this.segments, slot)] as Segment;
      const local = slot - segment.docStart;
      const { start, terms, at } = documentTerms(segment, local);
      for (let f = start[at] as number, end = start[at + 1] as number; f < end; f++) {
        const term = terms[f] as number;
        this.documentFrequency[term] = (this.documentFrequency[term] as number) - 1;
      }
      this.slotOf.delete(id);
      this.ids[slot] = undefined;
      this.totalLength -= this.lengths[slot] as number;
      this.liveCount--;
      removed++;
    }
    if (removed > 0) {
      this.normsDirty = true;
      // Tombstoned postings cost scan time; renumber once they are half of the slots.
      if (options.compact !== false && this.slotCount - this.liveCount > Math.max(1024, this.liveCount)) {
        this.optimize();
      }
    }
    return removed;
  }

  /** Merges every segment into one and renumbers documents densely, dropping removed ones. */
  optimize(): void {
    if (this.segments.length === 0) return;
    const renumber = new Int32Array(this.slotCount).fill(-1);
    const ids: Array<string | undefined> = [];
    const lengths = new Uint32Array(Math.max(64, this.liveCount));
    let next = 0;
    for (let slot = 0; slot < this.slotCount; slot++) {
      const id = this.ids[slot];
      if (id === undefined) continue;
      renumber[slot] = next;
      ids[next] = id;
      lengths[next] = this.lengths[slot] as number;
      this.slotOf.set(id, next);
      next++;
    }
    const merged = mergeSegments(
      this.segments,
      (doc) => this.ids[doc] !== undefined,
      lengths,
      this.normParts(),
      renumber,
    );
    this.segments = merged.docCount > 0 ? [merged] : [];
    this.ids = ids;
    this.lengths = lengths;
    this.norms = new Float64Array(lengths.length);
    this.slotCount = next;
    // Build scratch remembers slots; the numbering has changed.
    this.buildScratch.forgetSlots();
    this.normsDirty = true;
  }

  /** The top k documents for a query, best first. An empty or all-stop-word query has no hits. */
  search(query: string, k: number, options: BM25SearchOptions = {}): BM25Hit[] {
    return this.searchWithCount(query, k, options).hits;
  }

  /** Like `search`, with the number of matching documents (a lower bound when pruning skipped some). */
  searchWithCount(
    query: string,
    k: number,
    options: BM25SearchOptions = {},
  ): { hits: BM25Hit[]; matched: number } {
    if (typeof query !== 'string') {
      throw new InvalidArgumentError({ argument: 'query', value: query, message: 'must be a string' });
    }
    if (!Number.isInteger(k) || k <= 0) {
      throw new InvalidArgumentError({
        argument: 'k',
        value: k,
        message: `must be a positive integer, got ${String(k)}`,
      });
    }
    if (this.liveCount === 0) return { hits: [], matched: 0 };
    const scratch = this.scoringScratch;
    this.queryTerms(query, scratch.query);
    if (scratch.query.count === 0) return { hits: [], matched: 0 };
    const accept = options.accept;
    const ids = this.ids;
    // No more hits than document slots: the heap need not be larger.
    const matched = scoreTopK(this.scoringView(), Math.min(k, this.slotCount), scratch, {
      prune: !options.exhaustive,
      // A removed document keeps its postings until compaction, and no id: never offer it.
      accept: accept
        ? (doc) => {
            const id = ids[doc];
            return id !== undefined && accept(id);
          }
        : undefined,
    });
    return {
      hits: scratch.heap.sorted().map(({ doc, score }) => ({ id: ids[doc] as string, score })),
      matched,
    };
  }

  stats(): BM25Stats {
    let postings = 0;
    let arrayBytes =
      this.documentFrequency.byteLength +
      this.maxTf.byteLength +
      this.minLength.byteLength +
      this.lengths.byteLength +
      this.norms.byteLength;
    for (const segment of this.segments) {
      postings += segment.postDocs.length;
      for (const array of [
        segment.terms,
        segment.termStart,
        segment.postDocs,
        segment.postTfs,
        segment.blocks.first,
        segment.blocks.lastDoc,
        segment.blocks.maxTf,
        segment.blocks.minLengthPerTf,
        segment.blocks.minNormPerTf,
        segment.blocks.factors,
      ]) {
        arrayBytes += array.byteLength;
      }
      // The forward index holds only the ranges removals have reached so far.
      const forward = segment.forward;
      if (forward) {
        arrayBytes += forward.termFirstDoc.byteLength;
        for (const range of forward.ranges)
          arrayBytes += (range?.start.byteLength ?? 0) + (range?.terms.byteLength ?? 0);
      }
      // And dense term frequencies only of the frequent terms queries have looked up so far.
      for (const tfs of segment.dense?.values() ?? []) arrayBytes += tfs.byteLength;
    }
    return {
      documents: this.liveCount,
      terms: this.terms.length,
      postings,
      segments: this.segments.length,
      averageLength: this.liveCount === 0 ? 0 : this.totalLength / this.liveCount,
      arrayBytes,
    };
  }

  /** The index in its compact, versioned binary format (removed documents left out). */
  serialize(): Uint8Array {
    return encodeSnapshot(this.snapshot());
  }

  /**
   * An index from `serialize`'s bytes. The analyser must be the one the index was built with
   * (compared by name): a different one would silently mismatch query and index terms. `adopt`: the
   * bytes are given to the index, which keeps views into them rather than copies (never for bytes
   * anything else still uses). `verified`: they were checked against a checksum already (a
   * collection storage's), so the file's own is not checked.
   */
  static deserialize(
    bytes: Uint8Array,
    options: { analyzer?: Analyzer; path?: string } & DecodeOptions = {},
  ): BM25Index {
    const snapshot = decodeSnapshot(bytes, options.path, options);
    const analyzer = options.analyzer ?? defaultAnalyzer;
    if (analyzer.name !== snapshot.analyzer) {
      throw new IndexFormatError({
        message: `The index was built with analyser '${snapshot.analyzer}' but '${analyzer.name}' was given`,
        path: options.path,
      });
    }
    const index = new BM25Index({ analyzer, k1: snapshot.k1, b: snapshot.b });
    index.restore(snapshot);
    // Checked on the id map restore builds anyway, rather than on a set of its own while decoding.
    if (index.slotOf.size !== snapshot.ids.length) {
      throw new IndexFormatError({
        message: 'Not a readable Zerda BM25 index: duplicate document ids',
        path: options.path,
      });
    }
    return index;
  }

  private snapshot(): BM25Snapshot {
    const renumber = new Int32Array(this.slotCount).fill(-1);
    const ids: string[] = [];
    const lengths = new Uint32Array(this.liveCount);
    for (let slot = 0; slot < this.slotCount; slot++) {
      const id = this.ids[slot];
      if (id === undefined) continue;
      renumber[slot] = ids.length;
      lengths[ids.length] = this.lengths[slot] as number;
      ids.push(id);
    }
    const only = this.segments[0];
    // One segment with no removed documents (an index opened and saved unchanged) is written as
    // it is; otherwise the segments are merged into one.
    const merged =
      only && this.segments.length === 1 && this.liveCount === this.slotCount
        ? only
        : this.segments.length > 0
          ? mergeSegments(
              this.segments,
              (doc) => this.ids[doc] !== undefined,
              lengths,
              this.normParts(),
              renumber,
            )
          : {
              terms: new Uint32Array(0),
              termStart: new Uint32Array(1),
              postDocs: new Uint32Array(0),
              postTfs: new Uint16Array(0),
              blocks: buildBlocks(
                new Uint32Array(1),
                new Uint32Array(0),
                new Uint16Array(0),
                lengths,
                this.normParts(),
              ),
            };
    const termCount = this.terms.length;
    return {
      analyzer: this.analyzer.name,
      k1: this.k1,
      b: this.b,
      ids,
      vocabulary: this.terms,
      lengths,
      documentFrequency: this.documentFrequency.slice(0, termCount),
      maxTf: this.maxTf.slice(0, termCount),
      minLength: this.minLength.slice(0, termCount),
      segmentTerms: merged.terms,
      termStart: merged.termStart,
      postDocs: merged.postDocs,
      postTfs: merged.postTfs,
      blockFirst: merged.blocks.first,
      blockLastDoc: merged.blocks.lastDoc,
      blockMaxTf: merged.blocks.maxTf,
      blockMinLengthPerTf: merged.blocks.minLengthPerTf,
      blockMinNormPerTf: merged.blocks.minNormPerTf,
      blockPerLength: merged.blocks.builtPerLength,
    };
  }

  private restore(snapshot: BM25Snapshot): void {
    snapshot.vocabulary.forEach((term, id) => {
      this.terms.push(term);
      this.termIds.set(term, id);
    });
    const termCount = snapshot.vocabulary.length;
    this.documentFrequency = ensureCapacity(snapshot.documentFrequency, termCount);
    this.maxTf = ensureCapacity(snapshot.maxTf, termCount);
    this.minLength = ensureCapacity(snapshot.minLength, termCount);
    const documents = snapshot.ids.length;
    // The decoded list is adopted: nothing else holds it.
    this.ids = snapshot.ids;
    for (let slot = 0; slot < documents; slot++) this.slotOf.set(snapshot.ids[slot] as string, slot);
    this.lengths = ensureCapacity(snapshot.lengths, documents);
    this.norms = new Float64Array(Math.max(64, documents));
    this.slotCount = documents;
    this.liveCount = documents;
    this.totalLength = snapshot.lengths.reduce((sum, length) => sum + length, 0);
    if (documents > 0) {
      const { segmentTerms, termStart, postDocs, postTfs } = snapshot;
      // The decoded arrays are adopted as they are; the forward index waits until a removal needs it.
      this.segments = [
        {
          docStart: 0,
          docCount: documents,
          terms: segmentTerms,
          termStart,
          postDocs,
          postTfs,
          blocks:
            restoredBlocks(snapshot) ??
            buildBlocks(termStart, postDocs, postTfs, this.lengths, this.normParts()),
        },
      ];
    }
    this.normsDirty = true;
  }

  /** Ids of the documents in the index, in insertion order. */
  *documentIds(): IterableIterator<string> {
    for (let slot = 0; slot < this.slotCount; slot++) {
      const id = this.ids[slot];
      if (id !== undefined) yield id;
    }
  }

  /** The analysed query as weighted terms; terms the index has never seen are dropped. */
  private queryTerms(query: string, out: QueryTerms): void {
    // First pass: distinct term ids with their query frequency (kept in `weights` meanwhile).
    out.count = 0;
    for (const term of this.analyzer.analyze(query)) {
      const id = this.termIds.get(term);
      if (id === undefined || this.documentFrequency[id] === 0) continue;
      const at = out.indexOf(id);
      if (at < 0) out.push(id, 1, 0);
      else out.weights[at] = (out.weights[at] as number) + 1;
    }
    const count = this.liveCount;
    const averageLength = this.totalLength / count || 1;
    const { k1, b } = this;
    for (let i = 0; i < out.count; i++) {
      const term = out.terms[i] as number;
      const queryFrequency = out.weights[i] as number;
      const df = this.documentFrequency[term] as number;
      const idf = Math.log(1 + (count - df + 0.5) / (df + 0.5));
      const weight = queryFrequency * idf * (k1 + 1);
      const tf = this.maxTf[term] as number;
      const shortest = this.minLength[term] as number;
      out.weights[i] = weight;
      out.upperBounds[i] =
        ((weight * tf) / (tf + k1 * (1 - b + (b * shortest) / averageLength))) * BOUND_SLACK;
    }
    out.sortForScoring();
  }

  private scoringView(): ScoringView {
    if (this.normsDirty) {
      // Recomputed once per write, not per query: norms depend on the average length.
      const { k1, b, lengths, norms, ids } = this;
      const averageLength = this.averageLength();
      for (let slot = 0; slot < this.slotCount; slot++) {
        // A removed document's norm is infinite, so its postings contribute exactly 0.
        norms[slot] =
          ids[slot] === undefined
            ? Number.POSITIVE_INFINITY
            : k1 * (1 - b + (b * (lengths[slot] as number)) / averageLength);
      }
      this.normsDirty = false;
      this.view = {
        segments: this.segments,
        norms,
        slotCount: this.slotCount,
        ids,
        lengthFreeNorm: k1 * (1 - b),
        normPerLength: (k1 * b) / averageLength,
      };
    }
    return this.view as ScoringView;
  }

  /** The live documents' average length (1 for an empty index, whose norms nothing reads). */
  private averageLength(): number {
    return this.totalLength / this.liveCount || 1;
  }

  /** The norm's parts at the current average length, which new blocks take their exact bounds at. */
  private normParts(): NormParts {
    return { lengthFree: this.k1 * (1 - this.b), perLength: (this.k1 * this.b) / this.averageLength() };
  }

  /**
   * Analyses a text into `docTermIds` (its tokens' term ids, in order), adding new terms to the
   * vocabulary; returns how many tokens it has.
   */
  private analyseTermIds(text: string): number {
    const analyzer = this.analyzer;
    // The analyser's keys (or, for an analyser with only `analyze`, keys given to its terms here)
    // are mapped to term ids by an array: no string is made or hashed in a Map per token.
    const out = this.termKeys;
    if (analyzer.analyzeKeys !== undefined) {
      analyzer.analyzeKeys(text, out);
    } else {
      this.stringKeys ??= new StringTermKeys();
      this.stringKeys.keysOf(analyzer.analyze(text), out);
    }
    if (out.space !== this.keySpace) {
      this.idOfKey.fill(0);
      this.keySpace = out.space;
    }
    const count = out.count;
    const keys = out.keys;
    if (this.docTermIds.length < count) this.docTermIds = new Uint32Array(count * 2);
    const ids = this.docTermIds;
    let idOfKey = this.idOfKey;
    for (let i = 0; i < count; i++) {
      const key = keys[i] as number;
      if (key >= idOfKey.length) {
        idOfKey = ensureCapacity(idOfKey, key + 1);
        this.idOfKey = idOfKey;
      }
      let id = (idOfKey[key] as number) - 1;
      if (id < 0) {
        id = this.termId(out.term(key));
        idOfKey[key] = id + 1;
      }
      ids[i] = id;
    }
    return count;
  }

  /** The id of `term`, which is added to the vocabulary if new. */
  private termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.terms.push(term);
      this.termIds.set(term, id);
      this.documentFrequency = ensureCapacity(this.documentFrequency, id + 1);
      this.maxTf = ensureCapacity(this.maxTf, id + 1);
      const previous = this.minLength.length;
      this.minLength = ensureCapacity(this.minLength, id + 1);
      if (this.minLength.length > previous) this.minLength.fill(0xffffffff, previous);
    }
    return id;
  }

  private ensureDocCapacity(slots: number): void {
    this.lengths = ensureCapacity(this.lengths, slots);
    this.norms = ensureCapacity(this.norms, slots);
  }

  /**
   * Tiered merging keeps the number of segments logarithmic while rewriting each posting only
   * O(log_F n) times: once F segments of the same size tier have accumulated at the tail, they
   * are merged into one (which may complete the next tier up).
   */
  private mergeTail(): void {
    const segments = this.segments;
    for (;;) {
      const last = segments[segments.length - 1];
      if (!last) return;
      const tier = sizeTier(last.docCount);
      let run = 1;
      while (
        run < segments.length &&
        sizeTier((segments[segments.length - 1 - run] as Segment).docCount) === tier
      )
        run++;
      if (run < MERGE_FACTOR) return;
      const merged = mergeSegments(
        segments.slice(-run),
        (doc) => this.ids[doc] !== undefined,
        this.lengths,
        this.normParts(),
      );
      segments.splice(segments.length - run, run, merged);
    }
  }
}

/**
 * The saved block metadata, or undefined for a version 1 file. A version 2 file has no exact
 * bounds: its blocks get the loose bound's value at perLength 0 (lengthFree / maxTf), which
 * `blockFactors` then turns into exactly the loose bound at any average length.
 */
function restoredBlocks(snapshot: BM25Snapshot): PostingBlocks | undefined {
  const { blockFirst, blockLastDoc, blockMaxTf, blockMinLengthPerTf } = snapshot;
  if (!blockFirst || !blockLastDoc || !blockMaxTf || !blockMinLengthPerTf) return undefined;
  let minNormPerTf = snapshot.blockMinNormPerTf;
  let builtPerLength = snapshot.blockPerLength ?? 0;
  if (minNormPerTf === undefined) {
    const lengthFree = snapshot.k1 * (1 - snapshot.b);
    minNormPerTf = new Float32Array(blockMaxTf.length);
    for (let b = 0; b < blockMaxTf.length; b++) {
      minNormPerTf[b] = Math.fround((lengthFree / (blockMaxTf[b] as number)) * (1 - 1e-6));
    }
    builtPerLength = 0;
  }
  return {
    first: blockFirst,
    lastDoc: blockLastDoc,
    maxTf: blockMaxTf,
    minLengthPerTf: blockMinLengthPerTf,
    minNormPerTf,
    builtPerLength,
    factors: new Float32Array(blockLastDoc.length),
    factorsLengthFree: Number.NaN,
    factorsPerLength: Number.NaN,
  };
}

/**
 * Ids to remove: a list (any iterable but a string, whose characters would silently be taken for
 * ids) of strings.
 */
export function idList(ids: unknown): string[] {
  if (
    ids === null ||
    typeof ids !== 'object' ||
    typeof (ids as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function'
  ) {
    throw new InvalidArgumentError({
      argument: 'ids',
      value: ids,
      message: `expected a list of id strings, got ${ids === null ? 'null' : typeof ids}`,
    });
  }
  const list = [...(ids as Iterable<unknown>)];
  list.forEach((id, index) => {
    if (typeof id !== 'string') {
      throw new InvalidArgumentError({ argument: `ids[${index}]`, value: id, message: 'must be a string' });
    }
  });
  return list as string[];
}
