import {
  blockFactors,
  DENSE_TF_ESCAPE,
  denseTfs,
  findTerm,
  isDenseTerm,
  BLOCK_SHIFT as SEGMENT_BLOCK_SHIFT,
  type Segment,
} from './segment.js';
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

/** A module constant: an imported binding can cost a getter call per read in transpiled code. */
const BLOCK_SHIFT = SEGMENT_BLOCK_SHIFT;

/** log2 of the documents per scoring window. */
const WINDOW_SHIFT = 11;
/**
 * Documents per scoring window: wide enough that a window's bounds and set-up cost little per
 * posting, narrow enough that its accumulator (16 KiB) stays in the L1 cache and that its bounds
 * stay tight.
 */
const WINDOW_SIZE = 1 << WINDOW_SHIFT;

/** Reused between queries so that a query allocates nothing proportional to the corpus or its postings. */
export class ScoringScratch {
  readonly query = new QueryTerms();
  readonly heap = new TopKHeap(16);
  // Exhaustive scoring: per-document accumulators, stamped by query so they need no clearing.
  accumulators = new Float64Array(0);
  seen = new Uint32Array(0);
  touched = new Int32Array(0);
  epoch = 0;
  // Pruned scoring, per window: the essential terms' partial scores and which documents have one.
  readonly windowScores = new Float64Array(WINDOW_SIZE);
  readonly windowHits = new Int32Array(WINDOW_SIZE >>> 5);
  /** The candidates a pass of a term that every candidate must hold leaves (see `accumulate`). */
  readonly passHits = new Int32Array(WINDOW_SIZE >>> 5);
  // Per window of every segment: its segment, the sum of its terms' bounds, and a max-heap of
  // windows by that sum (scored best first, so that the k-th score rises early).
  windowSegment = new Int32Array(0);
  windowFirstDoc = new Int32Array(0);
  windowTotal = new Float64Array(0);
  windowQueue = new Int32Array(0);
  // Per window and term (window-major): the term's bound there, and where to start reading its
  // postings for the window (the first posting of its first block there; -1: none there).
  windowTermBound = new Float64Array(0);
  windowTermPosting = new Int32Array(0);
  // Per segment and term (segment-major): the term's postings and blocks there (start -1: absent).
  segmentTermStart = new Int32Array(0);
  segmentTermEnd = new Int32Array(0);
  segmentTermFirstBlock = new Int32Array(0);
  segmentTermLastBlock = new Int32Array(0);
  segmentTermPosition = new Int32Array(0);
  /**
   * Per segment and term: its dense term frequencies (see `denseTfs`) once a window needed them in
   * this query, null when it has none, undefined until then.
   */
  segmentTermDense: Array<Uint8Array | null | undefined> = [];
  /**
   * Per segment, its blocks' bound factors for the current norms (looked up once per query: the
   * norms passed to `blockFactors` would be boxed on every call).
   */
  readonly segmentFactors: Float32Array[] = [];
  // Per term, in the current window: its cursor and the bounds of its postings and blocks.
  cursor = new Int32Array(16);
  end = new Int32Array(16);
  start = new Int32Array(16);
  firstBlock = new Int32Array(16);
  lastBlock = new Int32Array(16);
  contribution = new Float64Array(16);
  /** 1 for a term essential in the current window (its postings are scored, not looked up). */
  essential = new Uint8Array(16);
  /** Term positions of the window's live terms, by ascending bound. */
  order = new Int32Array(16);
  /** Per non-essential term of the current window: its dense term frequencies, if it has them (see `denseTfs`). */
  readonly denseTfs: Array<Uint8Array | undefined> = [];
  /** Where `streamNorms` leaves the sum of what it read, so that its reads are not optimised away. */
  readonly sink = new Float64Array(1);
  /** Floats handed to `accumulate` (indexed by THRESHOLD, WINDOW_BOUND, ...): arguments would be boxed. */
  readonly limits = new Float64Array(4);
  /** The k best single-term contributions, for the score floor (only its threshold is read). */
  readonly floorHeap = new TopKHeap(16);

  prepareTerms(count: number): void {
    if (this.cursor.length >= count) return;
    const capacity = Math.max(count, this.cursor.length * 2);
    this.cursor = new Int32Array(capacity);
    this.end = new Int32Array(capacity);
    this.start = new Int32Array(capacity);
    this.firstBlock = new Int32Array(capacity);
    this.lastBlock = new Int32Array(capacity);
    this.contribution = new Float64Array(capacity);
    this.essential = new Uint8Array(capacity);
    this.order = new Int32Array(capacity);
  }

  prepareWindows(segments: number, windows: number, terms: number): void {
    if (this.windowTotal.length < windows) {
      const capacity = Math.max(windows, this.windowTotal.length * 2);
      this.windowSegment = new Int32Array(capacity);
      this.windowFirstDoc = new Int32Array(capacity);
      this.windowTotal = new Float64Array(capacity);
      this.windowQueue = new Int32Array(capacity);
    }
    if (this.windowTermBound.length < windows * terms) {
      const capacity = Math.max(windows * terms, this.windowTermBound.length * 2);
      this.windowTermBound = new Float64Array(capacity);
      this.windowTermPosting = new Int32Array(capacity);
    }
    if (this.segmentTermStart.length < segments * terms) {
      const capacity = Math.max(segments * terms, this.segmentTermStart.length * 2);
      this.segmentTermStart = new Int32Array(capacity);
      this.segmentTermEnd = new Int32Array(capacity);
      this.segmentTermFirstBlock = new Int32Array(capacity);
      this.segmentTermLastBlock = new Int32Array(capacity);
      this.segmentTermPosition = new Int32Array(capacity);
    }
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
  return scorePruned(view, scratch, options.accept);
}

/**
 * MaxScore (Turtle & Flood) over windows of WINDOW_SIZE documents with block-max bounds, in the
 * manner of Lucene's MaxScoreBulkScorer. A term's bound in a window is the largest bound of its
 * blocks there; windows are scored best bound first, so that the k-th score rises within the
 * first few, and scoring stops at the first window whose bounds together cannot reach it. In a
 * window, the terms whose bounds together cannot reach the k-th score are non-essential: the
 * other terms' postings are added up term at a time into the window's accumulator, and only the
 * documents whose partial score plus the non-essential bounds can still make the top k look the
 * non-essential terms up. A floor from the rarest terms (see `scoreFloor`) prunes from the start.
 */
function scorePruned(
  view: ScoringView,
  scratch: ScoringScratch,
  accept: ((doc: number) => boolean) | undefined,
): number {
  const { query, heap } = scratch;
  const { segments } = view;
  const termCount = query.count;
  scratch.prepareTerms(termCount);
  // Filtered documents could not be counted on to reach a floor.
  scratch.limits[FLOOR] = accept === undefined ? scoreFloor(view, scratch) : Number.NEGATIVE_INFINITY;
  let windowCount = 0;
  for (let s = 0; s < segments.length; s++) {
    windowCount += ((segments[s] as Segment).docCount + WINDOW_SIZE - 1) >>> WINDOW_SHIFT;
  }
  scratch.prepareWindows(segments.length, windowCount, termCount);
  const queued = boundWindows(view, scratch, windowCount);

  // Pop windows from the max-heap by their total bound.
  const { windowQueue: queue, windowTotal } = scratch;
  let queueSize = queued;
  for (let i = (queueSize >>> 1) - 1; i >= 0; i--) siftDown(queue, windowTotal, i, queueSize);
  let matched = 0;
  while (queueSize > 0) {
    const window = queue[0] as number;
    if ((windowTotal[window] as number) < Math.max(scratch.limits[FLOOR] as number, heap.threshold())) break;
    queueSize--;
    queue[0] = queue[queueSize] as number;
    siftDown(queue, windowTotal, 0, queueSize);
    matched += scoreWindow(view, scratch, window, accept);
  }
  scratch.denseTfs.length = 0;
  return matched;
}

/**
 * Postings the score floor may read: a fixed few, since each reads the norm of a document
 * anywhere in the corpus (a cache miss in a large one).
 */
const FLOOR_POSTINGS = 4096;

/**
 * A lower bound of the final k-th score, so that a query with a rare term prunes from its first
 * window on: for each leading term in scoring order (the rare ones) while their postings fit a
 * small budget, the k-th best of its contributions (k documents score at least that much).
 */
function scoreFloor(view: ScoringView, scratch: ScoringScratch): number {
  const { query, floorHeap, heap } = scratch;
  const { norms, segments } = view;
  let budget = FLOOR_POSTINGS;
  let floor = Number.NEGATIVE_INFINITY;
  for (let t = 0; t < query.count; t++) {
    let postings = 0;
    for (let s = 0; s < segments.length; s++) {
      const segment = segments[s] as Segment;
      const position = findTerm(segment, query.terms[t] as number);
      if (position >= 0) {
        postings += (segment.termStart[position + 1] as number) - (segment.termStart[position] as number);
      }
    }
    budget -= postings;
    if (budget < 0) break;
    if (postings < heap.k) continue;
    floorHeap.reset(heap.k);
    const weight = query.weights[t] as number;
    for (let s = 0; s < segments.length; s++) {
      const segment = segments[s] as Segment;
      const position = findTerm(segment, query.terms[t] as number);
      if (position < 0) continue;
      const { postDocs, postTfs } = segment;
      for (
        let p = segment.termStart[position] as number, end = segment.termStart[position + 1] as number;
        p < end;
        p++
      ) {
        const tf = postTfs[p] as number;
        const value = (weight * tf) / (tf + (norms[postDocs[p] as number] as number));
        // A removed document (infinite norm) scores 0: it does not count.
        if (value > 0) {
          floorHeap.offered[0] = value;
          floorHeap.pushOffered(postDocs[p] as number);
        }
      }
    }
    floor = Math.max(floor, floorHeap.threshold());
  }
  return floor;
}

/** Up to this many postings per window on average, a term's window bounds are set posting by posting. */
const SPARSE_POSTINGS_PER_WINDOW = 8;

/**
 * Fills each window's term bounds, first blocks and total bound, and queues (unordered) the
 * windows some term touches. Returns how many were queued. Reads block metadata only.
 */
function boundWindows(view: ScoringView, scratch: ScoringScratch, windowCount: number): number {
  const {
    query,
    windowSegment,
    windowFirstDoc,
    windowTotal,
    windowQueue,
    windowTermBound,
    windowTermPosting,
  } = scratch;
  const { segmentTermStart, segmentTermEnd, segmentTermFirstBlock, segmentTermLastBlock } = scratch;
  const { segments } = view;
  const termCount = query.count;
  windowTermBound.fill(0, 0, windowCount * termCount);
  windowTermPosting.fill(-1, 0, windowCount * termCount);
  // Dropped segments' factors and dense frequencies are not kept alive by the scratch.
  scratch.segmentFactors.length = segments.length;
  scratch.segmentTermDense.length = segments.length * query.count;
  let windowBase = 0;
  for (let s = 0; s < segments.length; s++) {
    const segment = segments[s] as Segment;
    const { termStart, postDocs, blocks, docStart } = segment;
    const blockLastDoc = blocks.lastDoc;
    const factors = blockFactors(blocks, view.lengthFreeNorm, view.normPerLength);
    scratch.segmentFactors[s] = factors;
    const segmentWindows = (segment.docCount + WINDOW_SIZE - 1) >>> WINDOW_SHIFT;
    for (let w = 0; w < segmentWindows; w++) {
      windowSegment[windowBase + w] = s;
      windowFirstDoc[windowBase + w] = docStart + (w << WINDOW_SHIFT);
    }
    for (let t = 0; t < termCount; t++) {
      const at = s * termCount + t;
      const position = findTerm(segment, query.terms[t] as number);
      scratch.segmentTermDense[at] = undefined;
      if (position < 0) {
        segmentTermStart[at] = -1;
        continue;
      }
      const start = termStart[position] as number;
      const first = blocks.first[position] as number;
      const last = (blocks.first[position + 1] as number) - 1;
      segmentTermStart[at] = start;
      segmentTermEnd[at] = termStart[position + 1] as number;
      segmentTermFirstBlock[at] = first;
      segmentTermLastBlock[at] = last;
      scratch.segmentTermPosition[at] = position;
      const weight = (query.weights[t] as number) * BOUND_SLACK;
      const end = termStart[position + 1] as number;
      if (end - start <= segmentWindows * SPARSE_POSTINGS_PER_WINDOW) {
        // A rare term's blocks span many windows: its bounds go only to the windows of its postings.
        for (let p = start; p < end; p++) {
          const b = first + ((p - start) >>> BLOCK_SHIFT);
          const cell = (windowBase + (((postDocs[p] as number) - docStart) >>> WINDOW_SHIFT)) * termCount + t;
          const bound = weight * (factors[b] as number);
          if ((windowTermBound[cell] as number) < bound) windowTermBound[cell] = bound;
          if ((windowTermPosting[cell] as number) < 0) windowTermPosting[cell] = p;
        }
        continue;
      }
      // A block is taken to start just after the previous one ends: slightly looser than its
      // first posting, but read from the small block array rather than one cache line per block.
      let fromWindow = ((postDocs[start] as number) - docStart) >>> WINDOW_SHIFT;
      for (let b = first; b <= last; b++) {
        const bound = weight * (factors[b] as number);
        const lastDoc = blockLastDoc[b] as number;
        const toWindow = (lastDoc - docStart) >>> WINDOW_SHIFT;
        for (let w = fromWindow; w <= toWindow; w++) {
          const cell = (windowBase + w) * termCount + t;
          if ((windowTermBound[cell] as number) < bound) windowTermBound[cell] = bound;
          if ((windowTermPosting[cell] as number) < 0) {
            windowTermPosting[cell] = start + ((b - first) << BLOCK_SHIFT);
          }
        }
        fromWindow = (lastDoc + 1 - docStart) >>> WINDOW_SHIFT;
      }
    }
    windowBase += segmentWindows;
  }
  let queued = 0;
  for (let w = 0; w < windowCount; w++) {
    let total = 0;
    for (let t = 0, cell = w * termCount; t < termCount; t++, cell++)
      total += windowTermBound[cell] as number;
    windowTotal[w] = total;
    if (total > 0) windowQueue[queued++] = w;
  }
  return queued;
}

/** Restores the max-heap order (by `keys`) of `queue[0, size)` below `index`. */
function siftDown(queue: Int32Array, keys: Float64Array, index: number, size: number): void {
  const item = queue[index] as number;
  const key = keys[item] as number;
  for (;;) {
    let child = 2 * index + 1;
    if (child >= size) break;
    const right = child + 1;
    if (right < size && (keys[queue[right] as number] as number) > (keys[queue[child] as number] as number)) {
      child = right;
    }
    if ((keys[queue[child] as number] as number) <= key) break;
    queue[index] = queue[child] as number;
    index = child;
  }
  queue[index] = item;
}

/** Scores one window (see `scorePruned`). Returns the number of matching documents it visited. */
function scoreWindow(
  view: ScoringView,
  scratch: ScoringScratch,
  window: number,
  accept: ((doc: number) => boolean) | undefined,
): number {
  const { query, heap, windowScores, windowHits, windowTermBound, windowTermPosting } = scratch;
  const { cursor, end, start, firstBlock, lastBlock, contribution, essential, order } = scratch;
  const { norms, segments } = view;
  const weights = query.weights;
  const termCount = query.count;
  const s = scratch.windowSegment[window] as number;
  const segment = segments[s] as Segment;
  const { postDocs, postTfs } = segment;
  const blockLastDoc = segment.blocks.lastDoc;
  const factors = scratch.segmentFactors[s] as Float32Array;
  const windowStart = scratch.windowFirstDoc[window] as number;
  const windowEnd = Math.min(windowStart + WINDOW_SIZE, segment.docStart + segment.docCount);

  // The window's terms by ascending bound, each cursor where its term's postings for the window
  // start (documents before the window are skipped where they are read).
  let active = 0;
  for (let t = 0; t < termCount; t++) {
    essential[t] = 0;
    contribution[t] = 0;
    const cell = window * termCount + t;
    const posting = windowTermPosting[cell] as number;
    if (posting < 0) continue;
    const at = s * termCount + t;
    start[t] = scratch.segmentTermStart[at] as number;
    end[t] = scratch.segmentTermEnd[at] as number;
    firstBlock[t] = scratch.segmentTermFirstBlock[at] as number;
    lastBlock[t] = scratch.segmentTermLastBlock[at] as number;
    cursor[t] = posting;
    const bound = windowTermBound[cell] as number;
    let j = active - 1;
    while (j >= 0 && (windowTermBound[window * termCount + (order[j] as number)] as number) > bound) {
      order[j + 1] = order[j] as number;
      j--;
    }
    order[j + 1] = t;
    active++;
  }
  const floor = scratch.limits[FLOOR] as number;
  let threshold = Math.max(floor, heap.threshold());
  let nonEssential = 0;
  let nonEssentialBound = 0;
  while (nonEssential < active) {
    const sum =
      nonEssentialBound + (windowTermBound[window * termCount + (order[nonEssential] as number)] as number);
    if (sum >= threshold) break;
    nonEssentialBound = sum;
    nonEssential++;
  }
  if (nonEssential === active) return 0;

  // Essential terms, term at a time, into the accumulator.
  let windowBound = 0;
  for (let a = 0; a < active; a++)
    windowBound += windowTermBound[window * termCount + (order[a] as number)] as number;
  const { limits } = scratch;
  limits[THRESHOLD] = threshold;
  // The essential postings the window is expected to hold. Past a few, its norms are streamed in
  // first (see `streamNorms`). Past many, it is dense: its accumulator is cleared whole at the end,
  // so a pass may leave out of the candidates documents that it or an earlier pass scored (see
  // `accumulate`).
  const windowShare = (windowEnd - windowStart) / segment.docCount;
  let expectedPostings = 0;
  for (let a = nonEssential; a < active; a++) {
    const at = s * termCount + (order[a] as number);
    expectedPostings +=
      ((scratch.segmentTermEnd[at] as number) - (scratch.segmentTermStart[at] as number)) * windowShare;
  }
  const dense = expectedPostings >= DENSE_WINDOW_POSTINGS;
  if (expectedPostings >= STREAMED_NORMS_POSTINGS) streamNorms(scratch, norms, windowStart, windowEnd);
  limits[WINDOW_BOUND] = windowBound;
  limits[PENDING_BOUND] = dense ? windowBound : Number.POSITIVE_INFINITY;
  for (let a = nonEssential; a < active; a++) {
    const t = order[a] as number;
    accumulate(scratch, postDocs, postTfs, blockLastDoc, factors, norms, window, t, windowStart, windowEnd);
  }
  // While looking the largest non-essential term up for the documents that can still make the
  // top k would cost more than reading all its postings in the window, it becomes essential too.
  while (nonEssential > 0) {
    const t = order[nonEssential - 1] as number;
    const at = s * termCount + t;
    const postings =
      ((scratch.segmentTermEnd[at] as number) - (scratch.segmentTermStart[at] as number)) * windowShare;
    const denseTerm = isDenseTerm(segment, scratch.segmentTermPosition[at] as number);
    const limit = postings / (denseTerm ? DENSE_LOOKUP_COST : LOOKUP_COST);
    const least = threshold / BOUND_SLACK - nonEssentialBound;
    let candidates = 0;
    for (let word = 0; word < WINDOW_SIZE >>> 5 && candidates <= limit; word++) {
      let bits = windowHits[word] as number;
      while (bits !== 0) {
        const lowest = bits & -bits;
        bits ^= lowest;
        if ((windowScores[(word << 5) | (31 - Math.clz32(lowest))] as number) >= least) candidates++;
      }
    }
    if (candidates <= limit) break;
    accumulate(scratch, postDocs, postTfs, blockLastDoc, factors, norms, window, t, windowStart, windowEnd);
    nonEssential--;
    nonEssentialBound = 0;
    for (let a = 0; a < nonEssential; a++) {
      nonEssentialBound += windowTermBound[window * termCount + (order[a] as number)] as number;
    }
  }

  // The non-essential terms' dense frequencies, for the look-ups below (see `denseTfs`).
  for (let a = 0; a < nonEssential; a++) {
    const t = order[a] as number;
    const at = s * termCount + t;
    let tfs = scratch.segmentTermDense[at];
    if (tfs === undefined) {
      const position = scratch.segmentTermPosition[at] as number;
      tfs = isDenseTerm(segment, position) ? denseTfs(segment, position) : null;
      scratch.segmentTermDense[at] = tfs;
    }
    scratch.denseTfs[t] = tfs ?? undefined;
  }
  const { denseTfs: termTfs } = scratch;
  const { docStart } = segment;

  // Documents in order, so that every term's cursor only moves forward. Floats stay in locals
  // here: passed to a call that is not inlined, each would be boxed on the heap.
  let matched = 0;
  for (let word = 0; word < WINDOW_SIZE >>> 5; word++) {
    let bits = windowHits[word] as number;
    if (bits === 0) continue;
    windowHits[word] = 0;
    while (bits !== 0) {
      const lowest = bits & -bits;
      bits ^= lowest;
      const local = (word << 5) | (31 - Math.clz32(lowest));
      let partial = windowScores[local] as number;
      windowScores[local] = 0;
      const doc = windowStart + local;
      // A removed document (infinite norm) scores 0; a filtered one is not a match.
      if (!(partial > 0) || (accept !== undefined && !accept(doc))) continue;
      matched++;
      // Non-essential terms, largest bound first, while the document can still make the top k.
      let rest = nonEssentialBound;
      let a = nonEssential - 1;
      for (; a >= 0; a--) {
        if ((partial + rest) * BOUND_SLACK < threshold) break;
        const t = order[a] as number;
        rest -= windowTermBound[window * termCount + t] as number;
        // One byte read where the term has dense frequencies; its postings searched otherwise, and
        // for a frequency at the escape or above.
        const tfs = termTfs[t];
        let tf = tfs === undefined ? DENSE_TF_ESCAPE : (tfs[doc - docStart] as number);
        if (tf === DENSE_TF_ESCAPE) {
          const p = seek(postDocs, blockLastDoc, scratch, t, doc);
          tf = p >= 0 ? (postTfs[p] as number) : 0;
        }
        const value = tf === 0 ? 0 : ((weights[t] as number) * tf) / (tf + (norms[doc] as number));
        contribution[t] = value;
        partial += value;
      }
      if (a >= 0 || (partial + rest) * BOUND_SLACK < threshold) continue;
      // Read only now: most candidates stop at the bound above, and a norm is a read from memory.
      const norm = norms[doc] as number;
      // The exact score: every contribution summed in scoring order, as the exhaustive scorer
      // sums them (the essential ones were summed out of order, so they are looked up again).
      let score = 0;
      for (let t = 0; t < termCount; t++) {
        if (essential[t] === 1) {
          const p = seek(postDocs, blockLastDoc, scratch, t, doc);
          if (p >= 0) {
            const tf = postTfs[p] as number;
            score += ((weights[t] as number) * tf) / (tf + norm);
          }
        } else {
          score += contribution[t] as number;
        }
      }
      if (score > 0) {
        heap.offered[0] = score;
        heap.pushOffered(doc);
        threshold = Math.max(floor, heap.threshold());
      }
    }
  }
  if (dense) windowScores.fill(0, 0, windowEnd - windowStart);
  return matched;
}

const THRESHOLD = 0;
/** The sum of the window's terms' bounds. */
const WINDOW_BOUND = 1;
/** A lower bound of the final k-th score (see `scoreFloor`). */
const FLOOR = 2;
/**
 * The bounds of the window's terms not accumulated yet (each pass takes its own off): +Infinity
 * when every document a pass scores must stay a candidate (a window not dense, see `accumulate`).
 */
const PENDING_BOUND = 3;

/**
 * Essential postings expected in a window from which its accumulator is cleared whole (a 16 KiB
 * fill), not document by document, and so from which a pass may narrow the candidates.
 */
const DENSE_WINDOW_POSTINGS = 256;

/** Essential postings expected in a window from which its norms are streamed in first (see `streamNorms`). */
const STREAMED_NORMS_POSTINGS = 24;

/**
 * Reads a window's norms in order, one per 64-byte line, into `scratch.sink` (so that the reads
 * stay). The hardware then streams the window's 16 KiB of norms into the cache at memory's full
 * rate, where the postings, read term after term, would each wait for their document's line: at a
 * million documents (8 MB of norms), most of a query of several mid-frequency terms was that wait.
 */
function streamNorms(
  scratch: ScoringScratch,
  norms: Float64Array,
  windowStart: number,
  windowEnd: number,
): void {
  let sum = 0;
  for (let doc = windowStart; doc < windowEnd; doc += 8) sum += norms[doc] as number;
  scratch.sink[0] = sum;
}

/**
 * A block's postings are tested one by one against the least contribution that can reach the
 * threshold when that least is above this share of the block's bound: most then fall below it.
 */
const SELECTIVE_SHARE = 0.75;

/** What one look-up of a term costs, in postings read in order. */
const LOOKUP_COST = 4;
/** The same, for a term with dense term frequencies (one byte read, see `denseTfs`). */
const DENSE_LOOKUP_COST = 1;

/**
 * Adds term `t`'s postings in the window to the accumulator, and marks it essential. Skips the
 * blocks whose bound, with the bounds of the window's other terms (`scratch.limits`), cannot
 * reach the threshold: none of their documents can make the top k. In a block whose bound is
 * not far above that, it also drops each posting that cannot: its document is then neither
 * scored nor looked at, unless another essential term marks it (a partial score without this
 * term's part is only lower, and a document's exact score is summed again before it is kept).
 *
 * A term without which no document can reach the threshold (the other terms' bounds together
 * fall short) is in every document that can. In a dense window its pass therefore replaces the
 * window's candidates with the documents of its postings whose partial score, with the bounds of
 * the terms still to come, can reach the threshold: for a query of several frequent terms, a few
 * hundred documents rather than every document one of them is in.
 */
function accumulate(
  scratch: ScoringScratch,
  postDocs: Uint32Array,
  postTfs: Uint16Array,
  blockLastDoc: Uint32Array,
  factors: Float32Array,
  norms: Float64Array,
  window: number,
  t: number,
  windowStart: number,
  windowEnd: number,
): void {
  const { windowScores, windowHits, passHits, limits, query } = scratch;
  scratch.essential[t] = 1;
  const weight = query.weights[t] as number;
  const threshold = limits[THRESHOLD] as number;
  const bound = scratch.windowTermBound[window * query.count + t] as number;
  const othersBound = (limits[WINDOW_BOUND] as number) - bound;
  const pendingBound = (limits[PENDING_BOUND] as number) - bound;
  limits[PENDING_BOUND] = pendingBound;
  // The least contribution of this term that can still reach the threshold.
  const least = threshold / BOUND_SLACK - othersBound;
  // The least partial score of a candidate after this pass, when the pass narrows them.
  const candidateLeast = least > 0 ? threshold / BOUND_SLACK - pendingBound : Number.NEGATIVE_INFINITY;
  const narrows = candidateLeast !== Number.NEGATIVE_INFINITY;
  const marks = narrows ? passHits : windowHits;
  const termEnd = scratch.end[t] as number;
  const start = scratch.start[t] as number;
  const first = scratch.firstBlock[t] as number;
  let p = scratch.cursor[t] as number;
  let b = first + ((p - start) >>> BLOCK_SHIFT);
  postings: while (p < termEnd) {
    const blockEnd = Math.min(start + ((b + 1 - first) << BLOCK_SHIFT), termEnd);
    if (weight * (factors[b] as number) * BOUND_SLACK + othersBound < threshold) {
      if ((blockLastDoc[b] as number) >= windowEnd) break;
      p = blockEnd;
      b++;
      continue;
    }
    // A test that would keep most postings costs more in mispredicted branches than it saves.
    const dropBelow =
      least > weight * (factors[b] as number) * SELECTIVE_SHARE ? least : Number.NEGATIVE_INFINITY;
    for (; p < blockEnd; p++) {
      const doc = postDocs[p] as number;
      if (doc >= windowEnd) break postings;
      const local = doc - windowStart;
      if (local < 0) continue;
      const tf = postTfs[p] as number;
      const value = (weight * tf) / (tf + (norms[doc] as number));
      if (value < dropBelow) continue;
      const partial = (windowScores[local] as number) + value;
      windowScores[local] = partial;
      if (partial >= candidateLeast)
        marks[local >>> 5] = (marks[local >>> 5] as number) | (1 << (local & 31));
    }
    b++;
  }
  if (narrows) {
    windowHits.set(passHits);
    passHits.fill(0);
  }
}

/**
 * The posting of term `t` for `doc`, or -1 when the term is not in it; moves the term's cursor to
 * its first posting at or after `doc`, skipping whole blocks. Documents must be asked in order.
 */
function seek(
  postDocs: Uint32Array,
  blockLastDoc: Uint32Array,
  scratch: ScoringScratch,
  t: number,
  doc: number,
): number {
  const termEnd = scratch.end[t] as number;
  let p = scratch.cursor[t] as number;
  if (p < termEnd && (postDocs[p] as number) < doc) {
    const first = scratch.firstBlock[t] as number;
    const start = scratch.start[t] as number;
    let b = first + ((p - start) >>> BLOCK_SHIFT);
    if ((blockLastDoc[b] as number) < doc) {
      const last = scratch.lastBlock[t] as number;
      do b++;
      while (b <= last && (blockLastDoc[b] as number) < doc);
      p = b > last ? termEnd : start + ((b - first) << BLOCK_SHIFT);
    }
    // Block b holds the target: a few steps in order (look-ups of neighbouring documents), then
    // a binary search over the rest of the block (far apart ones).
    const stop = p + 4;
    while (p < termEnd && p < stop && (postDocs[p] as number) < doc) p++;
    if (p === stop && (postDocs[p] as number) < doc) {
      let low = p + 1;
      let high = Math.min(start + ((b + 1 - first) << BLOCK_SHIFT), termEnd) - 1;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if ((postDocs[middle] as number) < doc) low = middle + 1;
        else high = middle;
      }
      p = low;
    }
    scratch.cursor[t] = p;
  }
  return p < termEnd && postDocs[p] === doc ? p : -1;
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
