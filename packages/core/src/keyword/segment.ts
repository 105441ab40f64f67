import { ensureCapacity } from '../util/growable.js';

/**
 * An immutable slice of the inverted index covering the documents numbered
 * [docStart, docStart + docCount). Postings are laid out term-major (CSR) over the sorted ids of
 * the terms the segment holds: the documents of terms[i] are postDocs[termStart[i] ..
 * termStart[i + 1]), ascending. A removal needs the removed document's terms (to decrement
 * document frequencies exactly): the segment's forward index gives them, built range by range of
 * documents as removals first reach them (see `documentTerms`), whether the segment was built or
 * read from disk. A build or an open then spends no pass per posting on it, an index never
 * written to after its build keeps none (it would be 4 of the 10.6 bytes a posting takes), and the
 * first removal from a large segment transposes one range, not all of it.
 */
export interface Segment {
  readonly docStart: number;
  readonly docCount: number;
  /** Sorted ids of the terms that occur in this segment. */
  readonly terms: Uint32Array;
  /** Offsets into postDocs/postTfs, terms.length + 1 entries. */
  readonly termStart: Uint32Array;
  readonly postDocs: Uint32Array;
  readonly postTfs: Uint16Array;
  /** The ranges of the forward index built so far (undefined until a removal first needs one). */
  forward?: ForwardIndex;
  /**
   * The dense term frequencies of frequent terms, by term position, each built when a query first
   * looks its term up (see `denseTfs`).
   */
  dense?: Map<number, Uint8Array>;
  /** Block-max metadata over the postings, for skipping blocks that cannot reach the top k. */
  readonly blocks: PostingBlocks;
}

/** A segment's forward index, in ranges of 2^shift documents, each built when first needed. */
export interface ForwardIndex {
  readonly shift: number;
  /** Each term position's first document, for rejecting terms absent from a range without a read of postDocs. */
  readonly termFirstDoc: Uint32Array;
  /** Per range, undefined until built: offsets into `terms` per document of the range (one more than there are), and the term ids. */
  readonly ranges: Array<{ start: Uint32Array; terms: Uint32Array } | undefined>;
}

/** log2 of the postings per block: small enough for tight bounds, large enough to skip cheaply. */
export const BLOCK_SHIFT = 6;
/** Postings per block (the last block of a term may be shorter). */
export const BLOCK_SIZE = 1 << BLOCK_SHIFT;

/**
 * Per block of BLOCK_SIZE consecutive postings of a term (block j of terms[i] covers postings
 * termStart[i] + j * BLOCK_SIZE onwards, and is block number first[i] + j): its last document and
 * what bounds its BM25 contributions whatever the average length becomes. A contribution is
 * weight / (1 + (lengthFree + perLength * length) / tf), where perLength = k1 b / avgdl moves with
 * every write. Two bounds on the smallest (lengthFree + perLength * length) / tf of a block:
 * - loose, at any perLength: lengthFree / maxTf + perLength * minLengthPerTf (the largest tf and
 *   the smallest length / tf may come from different postings);
 * - exact at the perLength the block was built with (`minNormPerTf` at `builtPerLength`), and still
 *   a bound at any other (see `blockFactors`). Queries made only of frequent terms, whose blocks
 *   each hold a long document with a high tf and a short one with a low tf, prune on this one.
 * Derived from postings and lengths; saved with them (format versions 2 and 3) so that opening an
 * index need not recompute it.
 */
export interface PostingBlocks {
  /** First block number of each term position, terms.length + 1 entries. */
  readonly first: Uint32Array;
  readonly lastDoc: Uint32Array;
  readonly maxTf: Uint16Array;
  /** Smallest length / tf in the block, rounded down. */
  readonly minLengthPerTf: Float32Array;
  /** Smallest (lengthFree + builtPerLength * length) / tf in the block, rounded down. */
  readonly minNormPerTf: Float32Array;
  /** The norm's factor per unit of length (k1 b / avgdl) that `minNormPerTf` was taken at. */
  readonly builtPerLength: number;
  /**
   * Per block, 1 / (1 + the larger of the two bounds) rounded up: no contribution of the block
   * exceeds weight times this. Cached for the norms it was computed with (see `blockFactors`),
   * since the average length changes with every write.
   */
  factors: Float32Array;
  factorsLengthFree: number;
  factorsPerLength: number;
}

/** A document's norm in two parts, k1 (1 - b) + (k1 b / avgdl) * length, at some average length. */
export interface NormParts {
  lengthFree: number;
  perLength: number;
}

/**
 * The blocks' bound factors for the current norms, recomputed only when the norms changed. With m0
 * the smallest (A + B0 length) / tf of a block at its build's perLength B0, each of its postings'
 * (A + B length) / tf is at least
 * - for B >= B0: m0 + (B - B0) * minLengthPerTf (the added part grows with length / tf);
 * - for B < B0: (B / B0) m0 + (1 - B / B0) A / maxTf (the norm split into a share of the one at
 *   B0 and a share of its length-free part);
 * and at least the loose bound: the larger of the two holds.
 */
export function blockFactors(
  blocks: PostingBlocks,
  lengthFreeNorm: number,
  normPerLength: number,
): Float32Array {
  if (blocks.factorsLengthFree === lengthFreeNorm && blocks.factorsPerLength === normPerLength) {
    return blocks.factors;
  }
  const { maxTf, minLengthPerTf, minNormPerTf, builtPerLength, factors } = blocks;
  const above = normPerLength >= builtPerLength;
  const share = above ? 0 : normPerLength / builtPerLength;
  const shift = normPerLength - builtPerLength;
  for (let b = 0; b < factors.length; b++) {
    const lengthFreePerTf = lengthFreeNorm / (maxTf[b] as number);
    const lengthPerTf = minLengthPerTf[b] as number;
    const atBuild = minNormPerTf[b] as number;
    const loose = lengthFreePerTf + normPerLength * lengthPerTf;
    const moved = above ? atBuild + shift * lengthPerTf : share * atBuild + (1 - share) * lengthFreePerTf;
    const least = Math.max(moved, loose);
    // Rounded up to float32 (the margin exceeds float32's rounding), so still a bound.
    factors[b] = Math.fround((1 / (1 + least)) * (1 + 1e-6));
  }
  blocks.factorsLengthFree = lengthFreeNorm;
  blocks.factorsPerLength = normPerLength;
  return factors;
}

/**
 * Computes the block-max metadata of postings (lengths indexed by document number) at `norms`.
 * With `statistics`, each term's largest tf and shortest length there (by term id: `terms` gives
 * the id of each term position) also come to cover these postings: this pass reads every
 * posting's tf and length in order anyway, where the pass that lays postings out would update
 * them in a random order.
 */
export function buildBlocks(
  termStart: Uint32Array,
  postDocs: Uint32Array,
  postTfs: Uint16Array,
  lengths: Uint32Array,
  norms: NormParts,
  statistics?: { terms: Uint32Array; maxTf: Uint16Array; minLength: Uint32Array },
): PostingBlocks {
  const { lengthFree, perLength } = norms;
  const termCount = termStart.length - 1;
  const first = new Uint32Array(termCount + 1);
  for (let i = 0; i < termCount; i++) {
    const postings = (termStart[i + 1] as number) - (termStart[i] as number);
    first[i + 1] = (first[i] as number) + ((postings + BLOCK_SIZE - 1) >>> BLOCK_SHIFT);
  }
  const blockCount = first[termCount] as number;
  const lastDoc = new Uint32Array(blockCount);
  const maxTf = new Uint16Array(blockCount);
  const minLengthPerTf = new Float32Array(blockCount);
  const minNormPerTf = new Float32Array(blockCount);
  let block = 0;
  for (let i = 0; i < termCount; i++) {
    const end = termStart[i + 1] as number;
    let termLargestTf = 0;
    let termShortest = Number.POSITIVE_INFINITY;
    for (let from = termStart[i] as number; from < end; from += BLOCK_SIZE, block++) {
      const to = Math.min(end, from + BLOCK_SIZE);
      let largestTf = 0;
      let smallestRatio = Number.POSITIVE_INFINITY;
      let smallestNorm = Number.POSITIVE_INFINITY;
      for (let p = from; p < to; p++) {
        const tf = postTfs[p] as number;
        if (tf > largestTf) largestTf = tf;
        const length = lengths[postDocs[p] as number] as number;
        if (length < termShortest) termShortest = length;
        const ratio = length / tf;
        if (ratio < smallestRatio) smallestRatio = ratio;
        const norm = (lengthFree + perLength * length) / tf;
        if (norm < smallestNorm) smallestNorm = norm;
      }
      lastDoc[block] = postDocs[to - 1] as number;
      maxTf[block] = largestTf;
      // Rounded down to float32 (the 1e-6 margin exceeds float32's rounding), so still a bound.
      minLengthPerTf[block] = Math.fround(smallestRatio * (1 - 1e-6));
      minNormPerTf[block] = Math.fround(smallestNorm * (1 - 1e-6));
      if (largestTf > termLargestTf) termLargestTf = largestTf;
    }
    if (statistics !== undefined) {
      const term = statistics.terms[i] as number;
      if (termLargestTf > (statistics.maxTf[term] as number)) statistics.maxTf[term] = termLargestTf;
      if (termShortest < (statistics.minLength[term] as number)) statistics.minLength[term] = termShortest;
    }
  }
  return {
    first,
    lastDoc,
    maxTf,
    minLengthPerTf,
    minNormPerTf,
    builtPerLength: perLength,
    factors: new Float32Array(blockCount),
    factorsLengthFree: Number.NaN,
    factorsPerLength: Number.NaN,
  };
}

/** Position of `term` in the segment's term list, or -1. */
export function findTerm(segment: Segment, term: number): number {
  const terms = segment.terms;
  let low = 0;
  let high = terms.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((terms[middle] as number) < term) low = middle + 1;
    else high = middle;
  }
  return low < terms.length && terms[low] === term ? low : -1;
}

/** Index of the segment holding `doc` (segments are in document order). */
export function findSegment(segments: readonly Segment[], doc: number): number {
  let low = 0;
  let high = segments.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if ((segments[middle] as Segment).docStart <= doc) low = middle;
    else high = middle - 1;
  }
  return low;
}

const MAX_TF = 0xffff;

/** The per-term statistics a build updates: documents holding the term, largest tf, shortest length. */
export interface TermStatistics {
  documentFrequency: Uint32Array;
  maxTf: Uint16Array;
  minLength: Uint32Array;
}

/**
 * Reusable per-term scratch for segment builds, sized to the vocabulary, so that adding one
 * document does not allocate arrays as large as the vocabulary.
 */
export class BuildScratch {
  /**
   * Term t: at [2t] the last document slot in which it was seen (a finished build's slots are
   * never reused, so no reset; an abandoned one's are reset), at [2t + 1] its place in the
   * builder's chunk, then its write cursor. Side by side, since each token reads both: one memory
   * access rather than two.
   */
  seen = new Int32Array(0);
  count = new Uint32Array(0);

  ensure(termCount: number): void {
    if (this.count.length >= termCount && this.seen.length >= termCount * 2) return;
    const previous = this.seen.length;
    this.seen = ensureCapacity(this.seen, termCount * 2);
    for (let at = previous; at < this.seen.length; at += 2) this.seen[at] = -1;
    this.count = ensureCapacity(this.count, termCount);
  }

  /** Forgets the slots seen, for when documents are renumbered. */
  forgetSlots(): void {
    for (let at = 0; at < this.seen.length; at += 2) this.seen[at] = -1;
  }
}

/** Forward entries in a builder's first chunk; later chunks double up to `MAX_CHUNK`. */
const FIRST_CHUNK = 1024;
/** Forward entries per chunk at most (256 KiB of term ids), unless one document needs more. */
const MAX_CHUNK = 1 << 16;

/**
 * Builds one segment from documents numbered from `docStart` in order, given one at a time as
 * term ids. Each document's distinct terms and their frequencies (its forward entries) are
 * counted straight into chunks as it arrives, so a batch's token ids are never held together and
 * nothing is copied to grow: fresh memory is what a large build spends its time on. `finish` then
 * lays the postings out term-major by counting sort, and the chunks go: the segment has no forward
 * index until a removal needs one (see `Segment`). Until `finish` no index state is touched,
 * only the scratch, which `abandon` restores: a batch whose analysis fails changes nothing.
 */
export class SegmentBuilder {
  /** The forward entries, a document's always within one chunk; `chunkUsed` says how far each is filled. */
  private readonly termChunks: Uint32Array[] = [];
  private readonly tfChunks: Uint16Array[] = [];
  private readonly chunkUsed: number[] = [];
  /** Forward entries so far. */
  private entries = 0;
  /** Where each document's forward entries start, counted over the chunks in order; docCount + 1 entries. */
  private readonly entryStart: Uint32Array;
  /** Each document's length in tokens, by its place in the batch. */
  readonly lengths: Uint32Array;
  private docCount = 0;
  /** The batch's distinct terms, in order of first occurrence. */
  private readonly batchTerms: number[] = [];

  constructor(
    readonly docStart: number,
    /** How many documents the batch has. */
    capacity: number,
    private readonly scratch: BuildScratch,
  ) {
    this.entryStart = new Uint32Array(capacity + 1);
    this.lengths = new Uint32Array(capacity);
  }

  /** Adds the next document, given as its tokens' term ids (all below `termCount`). */
  addDocument(ids: Uint32Array, tokenCount: number, termCount: number): void {
    const local = this.docCount;
    this.scratch.ensure(termCount);
    const { seen, count } = this.scratch;
    // A document has at most as many distinct terms as tokens: room for that many in one chunk.
    const last = this.chunkWithRoom(tokenCount);
    const terms = this.termChunks[last] as Uint32Array;
    const tfs = this.tfChunks[last] as Uint16Array;
    const first = this.chunkUsed[last] as number;
    const doc = this.docStart + local;
    let at = first;
    for (let i = 0; i < tokenCount; i++) {
      const term = ids[i] as number;
      if (seen[term * 2] !== doc) {
        seen[term * 2] = doc;
        seen[term * 2 + 1] = at;
        terms[at] = term;
        tfs[at] = 1;
        at++;
        const documents = count[term] as number;
        if (documents === 0) this.batchTerms.push(term);
        count[term] = documents + 1;
      } else {
        const slot = seen[term * 2 + 1] as number;
        const tf = tfs[slot] as number;
        if (tf < MAX_TF) tfs[slot] = tf + 1;
      }
    }
    this.chunkUsed[last] = at;
    this.entries += at - first;
    this.lengths[local] = tokenCount;
    this.docCount = local + 1;
    this.entryStart[local + 1] = this.entries;
  }

  /** The last chunk, or a new one if that has no room for `entries` more (a document's). */
  private chunkWithRoom(entries: number): number {
    const last = this.termChunks.length - 1;
    if (
      last >= 0 &&
      (this.chunkUsed[last] as number) + entries <= (this.termChunks[last] as Uint32Array).length
    ) {
      return last;
    }
    const size = Math.max(entries, Math.min(MAX_CHUNK, FIRST_CHUNK * 2 ** (last + 1)));
    this.termChunks.push(new Uint32Array(size));
    this.tfChunks.push(new Uint16Array(size));
    this.chunkUsed.push(0);
    return last + 1;
  }

  /** Undoes what the added documents did to the scratch, for a batch that will not be finished. */
  abandon(): void {
    const { seen, count } = this.scratch;
    for (const term of this.batchTerms) {
      count[term] = 0;
      seen[term * 2] = -1;
    }
  }

  /**
   * The segment of the documents added, by counting sort: the postings' places from prefix sums
   * over the batch's term counts, then one pass over the forward entries in document order. Updates
   * each term's document frequency, largest tf and shortest length in `stats`.
   */
  finish(
    /** Document lengths by document number (those of this batch already set). */
    lengths: Uint32Array,
    /** Per-term statistics, updated in place (sized to the vocabulary). */
    stats: TermStatistics,
    /** The norms (at the current average length) the block bounds are taken at. */
    norms: NormParts,
  ): Segment {
    const { documentFrequency, maxTf, minLength } = stats;
    const { seen, count } = this.scratch;
    const { docStart, docCount, entryStart, entries } = this;
    if (docCount !== this.lengths.length)
      throw new Error('SegmentBuilder.finish before every document was added');
    const terms = Uint32Array.from(this.batchTerms).sort();
    const termStart = new Uint32Array(terms.length + 1);
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i] as number;
      termStart[i + 1] = (termStart[i] as number) + (count[term] as number);
      // The batch's count of documents holding the term, added once per term rather than per posting.
      documentFrequency[term] = (documentFrequency[term] as number) + (count[term] as number);
      // From here on `seen` holds each term's write cursor and `count` is reset for the next build.
      seen[term * 2 + 1] = termStart[i] as number;
      count[term] = 0;
    }
    const postDocs = new Uint32Array(entries);
    const postTfs = new Uint16Array(entries);
    let local = -1;
    let docEnd = 0;
    let base = 0;
    for (let chunk = 0; chunk < this.termChunks.length; chunk++) {
      const termChunk = this.termChunks[chunk] as Uint32Array;
      const tfChunk = this.tfChunks[chunk] as Uint16Array;
      const used = this.chunkUsed[chunk] as number;
      for (let e = 0; e < used; e++) {
        // Documents without entries (no terms) are stepped over.
        while (base + e >= docEnd) {
          local++;
          docEnd = entryStart[local + 1] as number;
        }
        const term = termChunk[e] as number;
        const tf = tfChunk[e] as number;
        const at = seen[term * 2 + 1] as number;
        postDocs[at] = docStart + local;
        postTfs[at] = tf;
        seen[term * 2 + 1] = at + 1;
      }
      base += used;
    }
    return {
      docStart,
      docCount,
      terms,
      termStart,
      postDocs,
      postTfs,
      blocks: buildBlocks(termStart, postDocs, postTfs, lengths, norms, { terms, maxTf, minLength }),
    };
  }
}

/**
 * Merges adjacent segments (in document order) into one, leaving out the postings of documents
 * that are no longer live. With `renumber` (old slot -> new slot, ascending), documents get new
 * consecutive numbers from 0 and the result covers only live documents.
 */
export function mergeSegments(
  segments: readonly Segment[],
  isLive: (doc: number) => boolean,
  /** Document lengths in the numbering of the result. */
  lengths: Uint32Array,
  /** The norms (at the current average length) the block bounds are taken at. */
  norms: NormParts,
  renumber?: Int32Array,
): Segment {
  const first = segments[0];
  const last = segments[segments.length - 1];
  if (!first || !last) throw new Error('mergeSegments needs at least one segment');
  let postingCount = 0;
  let liveDocs = 0;
  // Segments whose documents are all live have their postings copied without a check each.
  const allLive = new Uint8Array(segments.length);
  segments.forEach((segment, s) => {
    const { postDocs } = segment;
    let segmentLive = true;
    for (let local = 0; local < segment.docCount; local++) {
      if (isLive(segment.docStart + local)) liveDocs++;
      else segmentLive = false;
    }
    allLive[s] = segmentLive ? 1 : 0;
    if (segmentLive) postingCount += postDocs.length;
    else for (let p = 0; p < postDocs.length; p++) if (isLive(postDocs[p] as number)) postingCount++;
  });
  const docStart = renumber ? 0 : first.docStart;
  const docCount = renumber ? liveDocs : last.docStart + last.docCount - first.docStart;
  // A renumbering that maps every document to itself (nothing removed) is skipped per posting.
  let mapping = renumber;
  if (renumber) {
    let identity = true;
    for (let doc = first.docStart, end = last.docStart + last.docCount; identity && doc < end; doc++) {
      identity = renumber[doc] === doc;
    }
    if (identity) mapping = undefined;
  }

  // Union of the term lists by a k-way merge of sorted lists.
  const cursors = new Uint32Array(segments.length);
  const mergedTerms: number[] = [];
  const termStarts: number[] = [0];
  const postDocs = new Uint32Array(postingCount);
  const postTfs = new Uint16Array(postingCount);
  let at = 0;
  for (;;) {
    let term = Number.POSITIVE_INFINITY;
    for (let s = 0; s < segments.length; s++) {
      const segment = segments[s] as Segment;
      const cursor = cursors[s] as number;
      if (cursor < segment.terms.length && (segment.terms[cursor] as number) < term)
        term = segment.terms[cursor] as number;
    }
    if (term === Number.POSITIVE_INFINITY) break;
    const startAt = at;
    for (let s = 0; s < segments.length; s++) {
      const segment = segments[s] as Segment;
      const cursor = cursors[s] as number;
      if (cursor >= segment.terms.length || segment.terms[cursor] !== term) continue;
      cursors[s] = cursor + 1;
      const sourceDocs = segment.postDocs;
      const sourceTfs = segment.postTfs;
      const from = segment.termStart[cursor] as number;
      const end = segment.termStart[cursor + 1] as number;
      if (allLive[s] === 1 && !mapping) {
        for (let p = from; p < end; p++, at++) {
          postDocs[at] = sourceDocs[p] as number;
          postTfs[at] = sourceTfs[p] as number;
        }
      } else if (allLive[s] === 1 && mapping) {
        for (let p = from; p < end; p++, at++) {
          postDocs[at] = mapping[sourceDocs[p] as number] as number;
          postTfs[at] = sourceTfs[p] as number;
        }
      } else {
        for (let p = from; p < end; p++) {
          const doc = sourceDocs[p] as number;
          if (!isLive(doc)) continue;
          postDocs[at] = mapping ? (mapping[doc] as number) : doc;
          postTfs[at] = sourceTfs[p] as number;
          at++;
        }
      }
    }
    if (at > startAt) {
      mergedTerms.push(term);
      termStarts.push(at);
    }
  }

  const termStart = Uint32Array.from(termStarts);
  // No forward index: the merged segment's ranges are built as removals reach them.
  return {
    docStart,
    docCount,
    terms: Uint32Array.from(mergedTerms),
    termStart,
    postDocs,
    postTfs,
    blocks: buildBlocks(termStart, postDocs, postTfs, lengths, norms),
  };
}

/**
 * Postings a forward range should hold per term of the segment: building a range looks every term
 * up (a few reads each), then copies the postings in the range (a read and a write each).
 */
const RANGE_POSTINGS_PER_TERM = 8;

/**
 * Where the terms of local document `local` lie in its range of the segment's forward index
 * (`terms[start[at] .. start[at + 1])`), the range built from the postings if this is its first
 * use. A range holds about RANGE_POSTINGS_PER_TERM postings per term of the segment, so that
 * looking every term up is a small part of building it, and no removal waits for the whole
 * segment to be transposed.
 */
export function documentTerms(
  segment: Segment,
  local: number,
): { start: Uint32Array; terms: Uint32Array; at: number } {
  let forward = segment.forward;
  if (!forward) {
    const { terms, termStart, postDocs, docCount } = segment;
    const perDocument = Math.max(1, postDocs.length / Math.max(1, docCount));
    const wanted = (RANGE_POSTINGS_PER_TERM * Math.max(1, terms.length)) / perDocument;
    let shift = 10;
    while (shift < 24 && 2 ** shift < wanted) shift++;
    const termFirstDoc = new Uint32Array(terms.length);
    for (let i = 0; i < terms.length; i++) termFirstDoc[i] = postDocs[termStart[i] as number] as number;
    forward = { shift, termFirstDoc, ranges: new Array(Math.ceil(docCount / 2 ** shift)).fill(undefined) };
    segment.forward = forward;
  }
  const index = local >>> forward.shift;
  const range = forward.ranges[index] ?? buildForwardRange(segment, forward, index);
  return { start: range.start, terms: range.terms, at: local - index * 2 ** forward.shift };
}

/**
 * A term whose postings in a segment number at least 1 / DENSE_SHARE of its documents also gets,
 * once a query looks it up document by document, its term frequencies in a dense array: one byte
 * per document of the segment, fewer bytes than its postings take (six each). A look-up then reads
 * one byte where a search of the postings reads blocks of them, each a cache miss in a large index:
 * the queries made only of frequent terms, whose candidates are each looked up in the other terms,
 * were the slowest at a million documents.
 */
export const DENSE_SHARE = 6;

/** A dense term frequency that says 'this or more: read it from the postings' (a byte holds no more). */
export const DENSE_TF_ESCAPE = 255;

/** Whether the term at `position` is frequent enough in the segment for dense term frequencies. */
export function isDenseTerm(segment: Segment, position: number): boolean {
  const postings = (segment.termStart[position + 1] as number) - (segment.termStart[position] as number);
  return postings * DENSE_SHARE >= segment.docCount;
}

/**
 * The term frequencies of the term at `position` in each document of the segment (indexed by
 * document number minus docStart; 0 where it does not occur, DENSE_TF_ESCAPE from that frequency
 * on), built on first use and kept with the segment.
 */
export function denseTfs(segment: Segment, position: number): Uint8Array {
  segment.dense ??= new Map();
  let tfs = segment.dense.get(position);
  if (tfs === undefined) {
    const { termStart, postDocs, postTfs, docStart } = segment;
    tfs = new Uint8Array(segment.docCount);
    for (let p = termStart[position] as number, end = termStart[position + 1] as number; p < end; p++) {
      const tf = postTfs[p] as number;
      tfs[(postDocs[p] as number) - docStart] = Math.min(tf, DENSE_TF_ESCAPE);
    }
    segment.dense.set(position, tfs);
  }
  return tfs;
}

/** Builds range `index` of the forward index: each term's postings in it, by term, then by document. */
function buildForwardRange(
  segment: Segment,
  forward: ForwardIndex,
  index: number,
): { start: Uint32Array; terms: Uint32Array } {
  const { docStart, docCount, terms, termStart, postDocs, blocks } = segment;
  const { termFirstDoc } = forward;
  const low = docStart + index * 2 ** forward.shift;
  const high = Math.min(docStart + docCount, low + 2 ** forward.shift);
  const start = new Uint32Array(high - low + 1);
  // The terms with postings in the range and where those lie, as (position, first, end) triples.
  let found = new Uint32Array(3 * 1024);
  let count = 0;
  for (let i = 0; i < terms.length; i++) {
    if ((termFirstDoc[i] as number) >= high) continue;
    const lastBlock = (blocks.first[i + 1] as number) - 1;
    if ((blocks.lastDoc[lastBlock] as number) < low) continue;
    // The first block that reaches the range, then the first posting in it.
    let block = blocks.first[i] as number;
    let top = lastBlock;
    while (block < top) {
      const middle = (block + top) >>> 1;
      if ((blocks.lastDoc[middle] as number) < low) block = middle + 1;
      else top = middle;
    }
    const termFirst = termStart[i] as number;
    const termEnd = termStart[i + 1] as number;
    let p = termFirst + ((block - (blocks.first[i] as number)) << BLOCK_SHIFT);
    while ((postDocs[p] as number) < low) p++;
    let end = p;
    while (end < termEnd && (postDocs[end] as number) < high) {
      const at = (postDocs[end] as number) - low + 1;
      start[at] = (start[at] as number) + 1;
      end++;
    }
    if (end === p) continue;
    if (count * 3 + 3 > found.length) found = ensureCapacity(found, count * 3 + 3);
    found[count * 3] = i;
    found[count * 3 + 1] = p;
    found[count * 3 + 2] = end;
    count++;
  }
  for (let at = 1; at < start.length; at++) start[at] = (start[at] as number) + (start[at - 1] as number);
  const cursor = start.slice(0, start.length - 1);
  const rangeTerms = new Uint32Array(start[start.length - 1] as number);
  for (let f = 0; f < count; f++) {
    const term = terms[found[f * 3] as number] as number;
    for (let p = found[f * 3 + 1] as number, end = found[f * 3 + 2] as number; p < end; p++) {
      const at = (postDocs[p] as number) - low;
      const position = cursor[at] as number;
      rangeTerms[position] = term;
      cursor[at] = position + 1;
    }
  }
  const range = { start, terms: rangeTerms };
  forward.ranges[index] = range;
  return range;
}
