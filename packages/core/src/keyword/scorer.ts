import { findTerm, type Segment } from './segment.js';
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
}

/** One query term, ready to score: its id, its weight and an upper bound of its contribution. */
export interface QueryTerm {
  term: number;
  /** qtf * idf * (k1 + 1): the contribution is weight * tf / (tf + norm). */
  weight: number;
  /** No document can get more than this from the term. */
  upperBound: number;
}

/** Reused between queries so that a query allocates nothing proportional to the corpus. */
export class ScoringScratch {
  accumulators = new Float64Array(0);
  seen = new Uint32Array(0);
  touched = new Int32Array(0);
  epoch = 0;
  private candidateFlags = new Uint8Array(0);

  /** Per-document flags, all 0 on return; callers must reset what they set. */
  flags(slotCount: number): Uint8Array {
    if (this.candidateFlags.length < slotCount)
      this.candidateFlags = new Uint8Array(this.accumulators.length);
    return this.candidateFlags;
  }

  prepare(slotCount: number): void {
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
  /** Documents for which this returns false are never returned. Evaluated once per touched document. */
  accept?: (doc: number) => boolean;
  /** false scores every posting (the reference); true prunes with MaxScore. Both give the same top-k. */
  prune: boolean;
}

/**
 * Top-k BM25 by term-at-a-time accumulation with MaxScore pruning (Turtle & Flood). Terms are
 * taken from the highest upper bound down; once the upper bounds of the terms left cannot lift
 * an unseen document above the current k-th score, the rest of those terms' postings are not
 * scanned: only the remaining candidates are looked up in them. Both modes add a document's
 * contributions in the same term order, so pruned and exhaustive scores are bit-identical.
 */
export function scoreTopK(
  view: ScoringView,
  terms: readonly QueryTerm[],
  k: number,
  scratch: ScoringScratch,
  options: ScoreOptions,
): { docs: Array<{ doc: number; score: number }>; matched: number } {
  const ordered = [...terms].sort((a, b) => b.upperBound - a.upperBound || a.term - b.term);
  const remainingBound = new Float64Array(ordered.length + 1);
  for (let i = ordered.length - 1; i >= 0; i--) {
    remainingBound[i] = (remainingBound[i + 1] as number) + (ordered[i] as QueryTerm).upperBound;
  }
  scratch.prepare(view.slotCount);
  const { accumulators, seen, touched, epoch } = scratch;
  const { norms, segments } = view;
  const accept = options.accept;
  let touchedCount = 0;
  let threshold = Number.NEGATIVE_INFINITY;

  // Phase 1: accumulate whole posting lists while a new document could still reach the top k.
  let next = 0;
  for (; next < ordered.length; next++) {
    // The k-th score so far is at most what the terms already processed can give: only when the
    // remaining terms could fall below that is it worth computing.
    if (
      options.prune &&
      next > 0 &&
      (remainingBound[next] as number) < (remainingBound[0] as number) - (remainingBound[next] as number)
    ) {
      threshold = kthScore(accumulators, touched, touchedCount, k);
      if ((remainingBound[next] as number) < threshold) break;
    }
    const { term, weight } = ordered[next] as QueryTerm;
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

  // Phase 2: the remaining terms only refine documents that can still make the top k.
  let candidates: Int32Array = touched.subarray(0, touchedCount);
  let matched = 0;
  const pruned = next < ordered.length;
  if (pruned) {
    // Pruned documents were never fully scored: report those seen so far as a lower bound.
    for (let i = 0; i < touchedCount; i++) if ((accumulators[touched[i] as number] as number) > 0) matched++;
    candidates = keepCandidates(candidates, accumulators, remainingBound[next] as number, threshold);
    const isCandidate = scratch.flags(view.slotCount);
    for (let i = 0; i < candidates.length; i++) isCandidate[candidates[i] as number] = 1;
    let sorted = false;
    for (; next < ordered.length; next++) {
      const { term, weight } = ordered[next] as QueryTerm;
      // Few candidates against a long list: look them up; many: one linear pass is cheaper.
      if (candidates.length * 16 < postingCount(segments, term)) {
        if (!sorted) {
          candidates.sort();
          sorted = true;
        }
        lookUpCandidates(segments, term, weight, candidates, accumulators, norms);
      } else {
        scanForCandidates(segments, term, weight, isCandidate, accumulators, norms);
      }
      threshold = Math.max(threshold, kthScore(accumulators, candidates, candidates.length, k));
      const kept = keepCandidates(candidates, accumulators, remainingBound[next + 1] as number, threshold);
      if (kept.length < candidates.length) {
        for (let i = 0; i < candidates.length; i++) isCandidate[candidates[i] as number] = 0;
        for (let i = 0; i < kept.length; i++) isCandidate[kept[i] as number] = 1;
      }
      candidates = kept;
    }
    for (let i = 0; i < candidates.length; i++) isCandidate[candidates[i] as number] = 0;
  }

  const heap = new TopKHeap(k, view.ids);
  for (let i = 0; i < candidates.length; i++) {
    const doc = candidates[i] as number;
    const score = accumulators[doc] as number;
    if (score > 0) {
      heap.push(score, doc);
      if (!pruned) matched++;
    }
  }
  return { docs: heap.sorted(), matched };
}

/** The k-th best positive accumulator among the given documents (or -Infinity if fewer). */
function kthScore(accumulators: Float64Array, docs: Int32Array, count: number, k: number): number {
  // Only the k-th score is read, not which document holds it, so the tie order does not matter.
  if (count < k) return Number.NEGATIVE_INFINITY;
  const heap = new TopKHeap(k);
  for (let i = 0; i < count; i++) {
    const doc = docs[i] as number;
    const score = accumulators[doc] as number;
    if (score > 0) heap.push(score, doc);
  }
  return heap.threshold();
}

/** Documents whose score plus what the remaining terms can add still reaches the threshold. */
function keepCandidates(
  docs: Int32Array,
  accumulators: Float64Array,
  bound: number,
  threshold: number,
): Int32Array {
  let kept = 0;
  const out = new Int32Array(docs.length);
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i] as number;
    const score = accumulators[doc] as number;
    if (score > 0 && score + bound >= threshold) out[kept++] = doc;
  }
  return out.subarray(0, kept);
}

/** Total postings of a term over all segments. */
function postingCount(segments: readonly Segment[], term: number): number {
  let count = 0;
  for (const segment of segments) {
    const position = findTerm(segment, term);
    if (position >= 0)
      count += (segment.termStart[position + 1] as number) - (segment.termStart[position] as number);
  }
  return count;
}

/** Adds one term's contribution to the flagged candidates in a single pass over its postings. */
function scanForCandidates(
  segments: readonly Segment[],
  term: number,
  weight: number,
  isCandidate: Uint8Array,
  accumulators: Float64Array,
  norms: Float64Array,
): void {
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
      if (isCandidate[doc] === 0) continue;
      const tf = postTfs[p] as number;
      accumulators[doc] = (accumulators[doc] as number) + (weight * tf) / (tf + (norms[doc] as number));
    }
  }
}

/** Adds one term's contribution to sorted candidates by galloping through its postings. */
function lookUpCandidates(
  segments: readonly Segment[],
  term: number,
  weight: number,
  candidates: Int32Array,
  accumulators: Float64Array,
  norms: Float64Array,
): void {
  let i = 0;
  for (const segment of segments) {
    const segmentEnd = segment.docStart + segment.docCount;
    const position = findTerm(segment, term);
    if (position < 0) {
      while (i < candidates.length && (candidates[i] as number) < segmentEnd) i++;
      continue;
    }
    const postDocs = segment.postDocs;
    const end = segment.termStart[position + 1] as number;
    let low = segment.termStart[position] as number;
    for (; i < candidates.length && (candidates[i] as number) < segmentEnd; i++) {
      const doc = candidates[i] as number;
      if (low >= end) continue;
      // Gallop to bracket the document, then binary search inside the bracket.
      let step = 1;
      let high = low;
      while (high < end && (postDocs[high] as number) < doc) {
        low = high + 1;
        high += step;
        step *= 2;
      }
      if (high > end) high = end;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if ((postDocs[middle] as number) < doc) low = middle + 1;
        else high = middle;
      }
      if (low < end && postDocs[low] === doc) {
        const tf = segment.postTfs[low] as number;
        accumulators[doc] = (accumulators[doc] as number) + (weight * tf) / (tf + (norms[doc] as number));
      }
    }
  }
}
