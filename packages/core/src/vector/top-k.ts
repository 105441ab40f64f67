/** The k best entries of a score array, best first. */
export interface TopK {
  /** Positions in the scored array. */
  indices: Int32Array;
  scores: Float64Array;
}

/**
 * The `k` highest scores among `scores[0 .. count)`, best first; equal scores rank by `tieKey`
 * (smaller first, code-unit order: pass the chunk id, as every retriever's final sort does, so
 * the hits for k are the first k hits for any larger k) or, without it, keep index order (lower
 * index first), so the result equals a full stable sort cut to k. NaN scores are skipped.
 *
 * A bounded min-heap of size k holds the best so far; its root is the worst of them, so most
 * entries are dismissed by one comparison. `accept`, when given, is asked only about entries
 * that would enter the heap: a filter is then evaluated on a handful of rows, not all of them.
 * `firstAtLeast`, when given, replaces the loop that skips the entries below the heap's worst
 * (the vector store passes its WebAssembly one, for scores in its memory).
 *
 * Without `accept`, a large selection first reads a strided sample of the scores for a floor
 * (`sampledFloor`) and skips everything below it from the start: the heap then takes a few
 * hundred entries rather than k·ln(count/k) (about 700 for the int8 shortlist of 100 at 100,000
 * rows). Entries below the floor cannot be among the best k while k entries reach it, so the
 * result is the same; in the rare case fewer do, the selection runs again without it.
 */
export function selectTopK(
  scores: ArrayLike<number>,
  count: number,
  k: number,
  accept?: (index: number) => boolean,
  tieKey?: (index: number) => string,
  firstAtLeast?: FirstAtLeast,
): TopK {
  const capacity = Math.max(0, Math.min(k, count));
  const floor = accept === undefined ? sampledFloor(scores, count, capacity) : -Infinity;
  if (floor !== -Infinity) {
    const top = selectAtLeast(scores, count, capacity, floor, accept, tieKey, firstAtLeast);
    if (top.indices.length === capacity) return top;
  }
  return selectAtLeast(scores, count, capacity, -Infinity, accept, tieKey, firstAtLeast);
}

/**
 * Strided samples read for a selection's floor (see `sampledFloor`). Each is a cache line of its
 * own, and scores just written by a scan thread are often in another core's cache: 2,048 samples
 * took 20 µs at 100,000 rows, 1,024 take 10 and leave the heap about 270 entries rather than 215.
 */
const FLOOR_SAMPLES = 1024;

/**
 * A score that probably at least a few times `k` entries reach, read off a strided sample: its
 * best `rank` entries stand for about `rank · stride` entries of the whole, so the sample's
 * `rank`-th best is reached by about 1.5k + 3·stride of them (fewer than k with odds near 1 in
 * 250 for k = 100 at 100,000). -Infinity (no floor) where the sample would not pay for itself.
 */
function sampledFloor(scores: ArrayLike<number>, count: number, k: number): number {
  const stride = Math.floor(count / FLOOR_SAMPLES);
  const rank = Math.ceil((1.5 * k) / stride) + 3;
  if (k < MIN_FLOORED_K || stride < 8 || rank > FLOOR_SAMPLES / 8) return -Infinity;
  // The sample's best `rank`, ascending: best[0] is the rank-th best so far.
  const best = new Float64Array(rank).fill(-Infinity);
  for (let i = 0; i < count; i += stride) {
    const score = scores[i]!;
    if (!(score > best[0]!)) continue;
    let j = 1;
    for (; j < rank && best[j]! < score; j++) best[j - 1] = best[j]!;
    best[j - 1] = score;
  }
  return best[0]!;
}

/** Below this k, the heap's own threshold rises fast enough that a sample does not pay. */
const MIN_FLOORED_K = 32;

/** `selectTopK` over the entries of at least `floor` (all but NaN when it is -Infinity). */
function selectAtLeast(
  scores: ArrayLike<number>,
  count: number,
  capacity: number,
  floor: number,
  accept: ((index: number) => boolean) | undefined,
  tieKey: ((index: number) => string) | undefined,
  firstAtLeast: FirstAtLeast | undefined,
): TopK {
  const tieWorse = tieKey === undefined ? laterIndex : largerKey(tieKey);
  const heapScores = new Float64Array(capacity);
  const heapIndices = new Int32Array(capacity);
  let size = 0;
  if (capacity > 0) {
    const skip =
      firstAtLeast ??
      ((from: number, to: number, threshold: number) => nextAtLeast(scores, from, to, threshold));
    let i = 0;
    // Fill the heap.
    for (; i < count && size < capacity; i++) {
      if (floor !== -Infinity) {
        i = skip(i, count, floor);
        if (i === count) break;
      }
      const score = scores[i]!;
      if (Number.isNaN(score) || (accept !== undefined && !accept(i))) continue;
      siftUp(heapScores, heapIndices, size, score, i, tieWorse);
      size++;
    }
    // Later indices are larger, so on equal scores (without a tie key) the one in the heap wins:
    // strictly greater only. With a tie key, an equal score enters when its key is smaller.
    let threshold = heapScores[0]!;
    for (; i < count; i++) {
      // Most entries are below the threshold: skip them in a loop of one comparison each.
      i = skip(i, count, threshold);
      if (i === count) break;
      const score = scores[i]!;
      if (!(score > threshold)) {
        if (tieKey === undefined || score !== threshold || !tieWorse(heapIndices[0]!, i)) continue;
      }
      if (accept !== undefined && !accept(i)) continue;
      siftDown(heapScores, heapIndices, size, score, i, tieWorse);
      threshold = heapScores[0]!;
    }
  }
  // Pop the worst first, filling the result from the back.
  const indices = new Int32Array(size);
  const result = new Float64Array(size);
  for (let end = size; end > 0; end--) {
    indices[end - 1] = heapIndices[0]!;
    result[end - 1] = heapScores[0]!;
    const lastScore = heapScores[end - 1]!;
    const lastIndex = heapIndices[end - 1]!;
    siftDown(heapScores, heapIndices, end - 1, lastScore, lastIndex, tieWorse);
  }
  return { indices, scores: result };
}

/**
 * The first position from `from` (below `count`) whose score is at least `threshold` (NaN never
 * is), or `count`; `threshold` is one of the scores.
 */
export type FirstAtLeast = (from: number, count: number, threshold: number) => number;

/**
 * The first position from `from` whose score is at least `threshold` (NaN never is), or `count`.
 * Float32Array, what the vector scans produce, gets a loop of its own so that its element loads
 * stay monomorphic.
 */
function nextAtLeast(scores: ArrayLike<number>, from: number, count: number, threshold: number): number {
  if (scores instanceof Float32Array) return nextAtLeastF32(scores, from, count, threshold);
  let i = from;
  while (i < count && !(scores[i]! >= threshold)) i++;
  return i;
}

function nextAtLeastF32(scores: Float32Array, from: number, count: number, threshold: number): number {
  let i = from;
  while (i < count && !(scores[i]! >= threshold)) i++;
  return i;
}

/**
 * Between two entries of equal score, whether A ranks below B. The heap compares scores inline
 * and asks this only on ties, so the common comparison is one instruction, not a call.
 */
type TieWorse = (indexA: number, indexB: number) => boolean;

/** Without a tie key, the later index ranks below. */
function laterIndex(indexA: number, indexB: number): boolean {
  return indexA > indexB;
}

/** With a tie key, the larger key ranks below (the same index is never below itself). */
function largerKey(tieKey: (index: number) => string): TieWorse {
  return (indexA, indexB) => indexA !== indexB && tieKey(indexA) > tieKey(indexB);
}

/** Inserts (score, index) at position `size` and restores the heap order upwards. */
function siftUp(
  heapScores: Float64Array,
  heapIndices: Int32Array,
  size: number,
  score: number,
  index: number,
  tieWorse: TieWorse,
): void {
  let position = size;
  while (position > 0) {
    const parent = (position - 1) >> 1;
    const parentScore = heapScores[parent]!;
    const parentIndex = heapIndices[parent]!;
    // Stop unless the new entry ranks below its parent (the root is the worst).
    if (score > parentScore || (score === parentScore && !tieWorse(index, parentIndex))) break;
    heapScores[position] = parentScore;
    heapIndices[position] = parentIndex;
    position = parent;
  }
  heapScores[position] = score;
  heapIndices[position] = index;
}

/** Replaces the root of a heap of `size` entries with (score, index) and restores the order downwards. */
function siftDown(
  heapScores: Float64Array,
  heapIndices: Int32Array,
  size: number,
  score: number,
  index: number,
  tieWorse: TieWorse,
): void {
  if (size === 0) return;
  let position = 0;
  for (;;) {
    const left = 2 * position + 1;
    if (left >= size) break;
    let child = left;
    let childScore = heapScores[left]!;
    const right = left + 1;
    if (right < size) {
      const rightScore = heapScores[right]!;
      if (
        rightScore < childScore ||
        (rightScore === childScore && tieWorse(heapIndices[right]!, heapIndices[left]!))
      ) {
        child = right;
        childScore = rightScore;
      }
    }
    // Stop unless the worse child ranks below the entry sinking.
    const childIndex = heapIndices[child]!;
    if (childScore > score || (childScore === score && !tieWorse(childIndex, index))) break;
    heapScores[position] = childScore;
    heapIndices[position] = childIndex;
    position = child;
  }
  heapScores[position] = score;
  heapIndices[position] = index;
}
