import { BLOCK_SHIFT, blockFactors, findTerm, type Segment } from './segment.js';
import { TopKHeap } from './top-k-heap.js';

/** What a scorer reads from the index: postings, per-document norms and liveness. */
export interface ScoringView {
  readonly segments: readonly Segment[];
  /** k1 * (1 - b + b * length / avgdl) per document; +Infinity for removed documents. */
  readonly norms: Float64Array;
  /** Number of document slots (removed ones included). */
  readonly slotCount: number;
  /** Each slot's document id: equal scores rank by it (smaller first), as every retriever's final sort does. */
  readonly ids?: ArrayLike<string | undefined>;
  /** k1 * (1 - b): the part of a norm that does not depend on the length (for block bounds). */
  readonly lengthFreeNorm: number;
  /** k1 * b / avgdl: the norm's factor per unit of length (for block bounds). */
  readonly normPerLength: number;
}

/**
 * The terms of one query, ready to score, in typed arrays reused from query to query: term ids,
 * weights (qtf * idf * (k1 + 1): a contribution is weight * tf / (tf + norm)) and upper bounds
 * of a term's contribution to any document.
 */
export class QueryTerms {
  count = 0;
  terms = new Int32Array(16);
  weights = new Float64Array(16);
  upperBounds = new Float64Array(16);

  /** Position of `term`, or -1. Queries are short: a linear scan beats a map and allocates nothing. */
  indexOf(term: number): number {
    for (let i = 0; i < this.count; i++) if (this.terms[i] === term) return i;
    return -1;
  }

  push(term: number, weight: number, upperBound: number): void {
    if (this.count === this.terms.length) {
      const capacity = this.count * 2;
      this.terms = grow(this.terms, new Int32Array(capacity));
      this.weights = grow(this.weights, new Float64Array(capacity));
      this.upperBounds = grow(this.upperBounds, new Float64Array(capacity));
    }
    this.terms[this.count] = term;
    this.weights[this.count] = weight;
    this.upperBounds[this.count] = upperBound;
    this.count++;
  }

  /**
   * Puts the terms in scoring order: highest upper bound first, then by term id. Every scorer adds
   * a document's contributions in this order, so pruned and exhaustive scores are bit-identical.
   */
  sortForScoring(): void {
    const { terms, weights, upperBounds } = this;
    for (let i = 1; i < this.count; i++) {
      const term = terms[i] as number;
      const weight = weights[i] as number;
      const bound = upperBounds[i] as number;
      let j = i - 1;
      while (
        j >= 0 &&
        ((upperBounds[j] as number) < bound ||
          ((upperBounds[j] as number) === bound && (terms[j] as number) > term))
      ) {
        terms[j + 1] = terms[j] as number;
        weights[j + 1] = weights[j] as number;
        upperBounds[j + 1] = upperBounds[j] as number;
        j--;
      }
      terms[j + 1] = term;
      weights[j + 1] = weight;
      upperBounds[j + 1] = bound;
    }
  }
}

function grow<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from as never);
  return to;
}

/** Reused between queries so that a query allocates nothing proportional to the corpus or its postings. */
export class ScoringScratch {
  readonly query = new QueryTerms();
  readonly heap = new TopKHeap(16);
  /** Partial scores' k best, for the score floor (tie order irrelevant: only its threshold is read). */
  readonly floorHeap = new TopKHeap(16);
  // Exhaustive scoring: per-document accumulators, stamped by query so they need no clearing.
  accumulators = new Float64Array(0);
  seen = new Uint32Array(0);
  touched = new Int32Array(0);
  epoch = 0;
  // Pruned scoring: per query term, its cursor in the current segment and its current block.
  cursor = new Int32Array(16);
  end = new Int32Array(16);
  start = new Int32Array(16);
  firstBlock = new Int32Array(16);
  lastBlock = new Int32Array(16);
  block = new Int32Array(16);
  windowBound = new Float64Array(16);
  contribution = new Float64Array(16);
  /** Term positions of the window's live terms, by ascending window bound. */
  order = new Int32Array(16);
  /** The score `completeScore` computed. */
  readonly score = new Float64Array(1);
  /** 1 for the terms that were essential in the last window (they cut the next one). */
  essential = new Uint8Array(16);

  prepareTerms(count: number): void {
    if (this.cursor.length >= count) return;
    const capacity = Math.max(count, this.cursor.length * 2);
    this.cursor = new Int32Array(capacity);
    this.end = new Int32Array(capacity);
    this.start = new Int32Array(capacity);
    this.firstBlock = new Int32Array(capacity);
    this.lastBlock = new Int32Array(capacity);
    this.block = new Int32Array(capacity);
    this.windowBound = new Float64Array(capacity);
    this.contribution = new Float64Array(capacity);
    this.order = new Int32Array(capacity);
    this.essential = new Uint8Array(capacity);
  }

  prepareDocuments(slotCount: number): void {
    if (this.accumulators.length < slotCount) {
      const capacity = Math.max(slotCount, this.accumulators.length * 2);
      this.accumulators = new Float64Array(capacity);
      this.seen = new Uint32Array(capacity);
      this.touched = new Int32Array(capacity);
      this.epoch = 0;
    }
    this.epoch++;
    if (this.epoch === 0xffffffff) {
      this.seen.fill(0);
      this.epoch = 1;
    }
  }
}

export interface ScoreOptions {
  /** Documents for which this returns false are never returned. Evaluated at most once per document. */
  accept?: (doc: number) => boolean;
  /** false scores every posting (the reference); true prunes with block-max MaxScore. Both give the same top-k. */
  prune: boolean;
}

/** Slack on upper bounds so that floating-point rounding can never prune a true hit. */
const BOUND_SLACK = 1 + 1e-9;

/**
 * Top-k BM25 of `scratch.query` (in scoring order, see `QueryTerms.sortForScoring`) into
 * `scratch.heap`, which the caller reads. Returns the number of matching documents (a lower
 * bound when pruning skipped some).
 */
export function scoreTopK(
  view: ScoringView,
  k: number,
  scratch: ScoringScratch,
  options: ScoreOptions,
): number {
  scratch.heap.reset(k, view.ids);
  if (!options.prune) return scoreExhaustive(view, scratch, options.accept);
  scratch.prepareTerms(scratch.query.count);
  // Documents are visited in order, so the k-th score would otherwise start low and rise only as
  // the best documents come by: start from a lower bound taken from the rarest terms instead.
  const floor = options.accept === undefined ? scoreFloor(view, k, scratch) : Number.NEGATIVE_INFINITY;
  let matched = 0;
  for (const segment of view.segments) {
    matched += scoreSegmentPruned(view, segment, scratch, options.accept, floor);
  }
  return matched;
}

/** Postings the score floor may read beyond its leading term: a share of the corpus, so it stays cheap. */
const FLOOR_POSTINGS_SHARE = 1 / 16;

/**
 * A lower bound of the final k-th score: the k-th best partial score over the leading terms in
 * scoring order (the rare ones, whose postings are short), added in scoring order. Every document
 * scores at least its partial score (adding non-negative contributions in the same order never
 * rounds below it), so k documents reach the bound and none scoring below it can be in the top k.
 */
function scoreFloor(view: ScoringView, k: number, scratch: ScoringScratch): number {
  const { query, floorHeap } = scratch;
  const { norms, segments } = view;
  const budget = Math.max(1024, view.slotCount * FLOOR_POSTINGS_SHARE);
  let terms = 0;
  let postings = 0;
  while (terms < query.count) {
    const count = postingCount(segments, query.terms[terms] as number);
    // The leading term always counts: one pass over its postings is cheaper than visiting them
    // document by document with a threshold that starts at nothing.
    if (terms > 0 && postings + count > budget) break;
    postings += count;
    terms++;
  }
  if (postings < k) return Number.NEGATIVE_INFINITY;
  scratch.prepareDocuments(view.slotCount);
  const { accumulators, seen, touched, epoch } = scratch;
  let touchedCount = 0;
  for (let t = 0; t < terms; t++) {
    const term = query.terms[t] as number;
    const weight = query.weights[t] as number;
    for (const segment of segments) {
      const position = findTerm(segment, term);
      if (position < 0) continue;
      const { postDocs, postTfs } = segment;
      for (
        let p = segment.termStart[position] as number, end = segment.termStart[position + 1] as number;
        p < end;
        p++
      ) {
        const doc = postDocs[p] as number;
        if (seen[doc] !== epoch) {
          seen[doc] = epoch;
          touched[touchedCount++] = doc;
          accumulators[doc] = 0;
        }
        const tf = postTfs[p] as number;
        accumulators[doc] = (accumulators[doc] as number) + (weight * tf) / (tf + (norms[doc] as number));
      }
    }
  }
  if (touchedCount < k) return Number.NEGATIVE_INFINITY;
  floorHeap.reset(k);
  for (let i = 0; i < touchedCount; i++) {
    const doc = touched[i] as number;
    const score = accumulators[doc] as number;
    if (score > 0) floorHeap.push(score, doc);
  }
  return floorHeap.threshold();
}

/** Total postings of a term over all segments. */
function postingCount(segments: readonly Segment[], term: number): number {
  let count = 0;
  for (const segment of segments) {
    const position = findTerm(segment, term);
    if (position >= 0) {
      count += (segment.termStart[position + 1] as number) - (segment.termStart[position] as number);
    }
  }
  return count;
}

/**
 * Document-at-a-time MaxScore (Turtle & Flood) over windows of the document space, with block-max
 * bounds (as Lucene's MaxScoreBulkScorer). In each window a term's bound is the largest bound of
 * its blocks there; the terms whose bounds together cannot reach the current k-th score are
 * non-essential: only documents of the other terms are visited, and each looks up the
 * non-essential terms only while it can still make the top k. A window whose bounds all together
 * cannot is skipped without reading its postings. Windows end where the current block of an
 * essential term ends, so they are long when the essential terms are rare.
 */
function scoreSegmentPruned(
  view: ScoringView,
  segment: Segment,
  scratch: ScoringScratch,
  accept: ((doc: number) => boolean) | undefined,
  /** A lower bound of the final k-th score (see `scoreFloor`). */
  floor: number,
): number {
  const { query, heap, cursor, end, start, firstBlock, lastBlock, block, windowBound, contribution, order } =
    scratch;
  const essential = scratch.essential;
  const { norms } = view;
  const { termStart, postDocs, postTfs, blocks } = segment;
  const blockLastDoc = blocks.lastDoc;
  const factors = blockFactors(blocks, view.lengthFreeNorm, view.normPerLength);
  const weights = query.weights;
  const termCount = query.count;
  for (let i = 0; i < termCount; i++) {
    essential[i] = 1;
    const position = findTerm(segment, query.terms[i] as number);
    if (position < 0) {
      cursor[i] = 0;
      end[i] = 0;
      continue;
    }
    cursor[i] = start[i] = termStart[position] as number;
    end[i] = termStart[position + 1] as number;
    block[i] = firstBlock[i] = blocks.first[position] as number;
    lastBlock[i] = (blocks.first[position + 1] as number) - 1;
  }

  let matched = 0;
  let threshold = Math.max(floor, heap.threshold());
  const segmentEnd = segment.docStart + segment.docCount;
  let windowStart = segment.docStart;
  while (windowStart < segmentEnd) {
    // Move each term to its block holding the first document >= windowStart (without reading
    // postings); the window ends where the first of these blocks of an essential term ends.
    let windowEnd = segmentEnd;
    let active = 0;
    for (let i = 0; i < termCount; i++) {
      contribution[i] = 0;
      if ((cursor[i] as number) >= (end[i] as number)) continue;
      let b = block[i] as number;
      if ((blockLastDoc[b] as number) < windowStart) {
        const last = lastBlock[i] as number;
        do b++;
        while (b <= last && (blockLastDoc[b] as number) < windowStart);
        if (b > last) {
          cursor[i] = end[i] as number;
          continue;
        }
        block[i] = b;
        const blockFirstPosting = (start[i] as number) + ((b - (firstBlock[i] as number)) << BLOCK_SHIFT);
        if ((cursor[i] as number) < blockFirstPosting) cursor[i] = blockFirstPosting;
      }
      const blockEnd = (blockLastDoc[b] as number) + 1;
      if (essential[i] === 1 && blockEnd < windowEnd) windowEnd = blockEnd;
      order[active++] = i;
    }
    if (active === 0) break;

    // Window bounds (a term whose next posting lies past the window adds nothing), ascending.
    for (let a = 0; a < active; a++) {
      const i = order[a] as number;
      let bound = 0;
      if ((postDocs[cursor[i] as number] as number) < windowEnd) {
        let b = block[i] as number;
        let factor = factors[b] as number;
        const last = lastBlock[i] as number;
        while (b < last && (blockLastDoc[b] as number) + 1 < windowEnd) {
          b++;
          if ((factors[b] as number) > factor) factor = factors[b] as number;
        }
        bound = (weights[i] as number) * factor * BOUND_SLACK;
      }
      windowBound[i] = bound;
      let j = a - 1;
      while (j >= 0 && (windowBound[order[j] as number] as number) > bound) {
        order[j + 1] = order[j] as number;
        j--;
      }
      order[j + 1] = i;
    }
    let nonEssential = 0;
    let nonEssentialBound = 0;
    while (nonEssential < active) {
      const sum = nonEssentialBound + (windowBound[order[nonEssential] as number] as number);
      if (sum >= threshold) break;
      nonEssentialBound = sum;
      nonEssential++;
    }
    // The next window is cut by the blocks of the terms essential here (or, when none is, of
    // the term with the largest bound), so frequent non-essential terms do not shorten it.
    for (let a = 0; a < active; a++) essential[order[a] as number] = a >= nonEssential ? 1 : 0;
    if (nonEssential === active) {
      essential[order[active - 1] as number] = 1;
      windowStart = windowEnd;
      continue;
    }

    // Cursors of essential terms left behind by skipped windows catch up.
    for (let a = nonEssential; a < active; a++) {
      const i = order[a] as number;
      cursor[i] = advance(postDocs, blockLastDoc, cursor[i] as number, i, windowStart, scratch);
    }
    if (active - nonEssential === 1) {
      // One essential term (the usual case once the threshold has risen): walk its postings.
      const lead = order[nonEssential] as number;
      const weight = weights[lead] as number;
      const leadEnd = end[lead] as number;
      let p = cursor[lead] as number;
      while (p < leadEnd) {
        const doc = postDocs[p] as number;
        if (doc >= windowEnd) break;
        const tf = postTfs[p] as number;
        p++;
        const norm = norms[doc] as number;
        const value = (weight * tf) / (tf + norm);
        // A removed document (infinite norm) scores 0; a filtered one is not a match.
        if (!(value > 0) || (accept !== undefined && !accept(doc))) continue;
        matched++;
        if ((value + nonEssentialBound) * BOUND_SLACK < threshold) continue;
        contribution[lead] = value;
        const complete = completeScore(
          scratch,
          postDocs,
          postTfs,
          blockLastDoc,
          doc,
          norm,
          value,
          nonEssential,
          nonEssentialBound,
          threshold,
        );
        if (!complete) continue;
        heap.push(scratch.score[0] as number, doc);
        threshold = Math.max(floor, heap.threshold());
      }
      cursor[lead] = p;
      windowStart = windowEnd;
      continue;
    }
    for (;;) {
      // The next document of an essential term in the window.
      let doc = windowEnd;
      for (let a = nonEssential; a < active; a++) {
        const i = order[a] as number;
        const p = cursor[i] as number;
        if (p < (end[i] as number) && (postDocs[p] as number) < doc) doc = postDocs[p] as number;
      }
      if (doc >= windowEnd) break;
      const norm = norms[doc] as number;
      let partial = 0;
      for (let a = nonEssential; a < active; a++) {
        const i = order[a] as number;
        const p = cursor[i] as number;
        if (p < (end[i] as number) && postDocs[p] === doc) {
          const tf = postTfs[p] as number;
          const value = ((weights[i] as number) * tf) / (tf + norm);
          contribution[i] = value;
          partial += value;
          cursor[i] = p + 1;
        } else {
          contribution[i] = 0;
        }
      }
      if (!(partial > 0) || (accept !== undefined && !accept(doc))) continue;
      matched++;
      const complete = completeScore(
        scratch,
        postDocs,
        postTfs,
        blockLastDoc,
        doc,
        norm,
        partial,
        nonEssential,
        nonEssentialBound,
        threshold,
      );
      if (!complete) continue;
      heap.push(scratch.score[0] as number, doc);
      threshold = Math.max(floor, heap.threshold());
    }
    windowStart = windowEnd;
  }
  return matched;
}

/**
 * Adds the non-essential terms of a window (largest bound first) to a document whose essential
 * contributions are in `scratch.contribution` (summing to `partial`), while it can still reach
 * the threshold. Returns false once it cannot make the top k; otherwise true, with its exact
 * score (summed in scoring order, as the exhaustive scorer sums it) in `scratch.score[0]` (a
 * returned float would be boxed on the heap when the call is not inlined).
 */
function completeScore(
  scratch: ScoringScratch,
  postDocs: Uint32Array,
  postTfs: Uint16Array,
  blockLastDoc: Uint32Array,
  doc: number,
  norm: number,
  partial: number,
  nonEssential: number,
  nonEssentialBound: number,
  threshold: number,
): boolean {
  const { order, windowBound, contribution, cursor, end } = scratch;
  const weights = scratch.query.weights;
  let rest = nonEssentialBound;
  for (let a = nonEssential - 1; a >= 0; a--) {
    if ((partial + rest) * BOUND_SLACK < threshold) return false;
    const i = order[a] as number;
    rest -= windowBound[i] as number;
    const p = advance(postDocs, blockLastDoc, cursor[i] as number, i, doc, scratch);
    cursor[i] = p;
    if (p < (end[i] as number) && postDocs[p] === doc) {
      const tf = postTfs[p] as number;
      const value = ((weights[i] as number) * tf) / (tf + norm);
      contribution[i] = value;
      partial += value;
    } else {
      contribution[i] = 0;
    }
  }
  let score = 0;
  for (let i = 0; i < scratch.query.count; i++) score += contribution[i] as number;
  scratch.score[0] = score;
  return true;
}

/** The first posting at or after `p` of term `i` whose document is >= target, skipping whole blocks. */
function advance(
  postDocs: Uint32Array,
  blockLastDoc: Uint32Array,
  p: number,
  i: number,
  target: number,
  scratch: ScoringScratch,
): number {
  const e = scratch.end[i] as number;
  if (p >= e || (postDocs[p] as number) >= target) return p;
  const first = scratch.firstBlock[i] as number;
  const start = scratch.start[i] as number;
  let b = first + ((p - start) >>> BLOCK_SHIFT);
  if ((blockLastDoc[b] as number) < target) {
    const last = scratch.lastBlock[i] as number;
    do b++;
    while (b <= last && (blockLastDoc[b] as number) < target);
    if (b > last) return e;
    p = start + ((b - first) << BLOCK_SHIFT);
  }
  while ((postDocs[p] as number) < target) p++;
  return p;
}

/** Term-at-a-time over every posting: the reference the pruned scorer must agree with. */
function scoreExhaustive(
  view: ScoringView,
  scratch: ScoringScratch,
  accept: ((doc: number) => boolean) | undefined,
): number {
  scratch.prepareDocuments(view.slotCount);
  const { accumulators, seen, touched, epoch, query, heap } = scratch;
  const { norms, segments } = view;
  let touchedCount = 0;
  for (let t = 0; t < query.count; t++) {
    const term = query.terms[t] as number;
    const weight = query.weights[t] as number;
    for (const segment of segments) {
      const position = findTerm(segment, term);
      if (position < 0) continue;
      const { postDocs, postTfs } = segment;
      for (
        let p = segment.termStart[position] as number, end = segment.termStart[position + 1] as number;
        p < end;
        p++
      ) {
        const doc = postDocs[p] as number;
        if (seen[doc] !== epoch) {
          seen[doc] = epoch;
          touched[touchedCount++] = doc;
          accumulators[doc] = accept && !accept(doc) ? Number.NEGATIVE_INFINITY : 0;
        }
        const tf = postTfs[p] as number;
        accumulators[doc] = (accumulators[doc] as number) + (weight * tf) / (tf + (norms[doc] as number));
      }
    }
  }
  let matched = 0;
  for (let i = 0; i < touchedCount; i++) {
    const doc = touched[i] as number;
    const score = accumulators[doc] as number;
    if (score > 0) {
      heap.push(score, doc);
      matched++;
    }
  }
  return matched;
}
