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
 */
export function selectTopK(
  scores: ArrayLike<number>,
  count: number,
  k: number,
  accept?: (index: number) => boolean,
  tieKey?: (index: number) => string,
  firstAtLeast?: FirstAtLeast,
): TopK {
  const tieWorse = tieKey === undefined ? laterIndex : largerKey(tieKey);
  const capacity = Math.max(0, Math.min(k, count));
  const heapScores = new Float64Array(capacity);
  const heapIndices = new Int32Array(capacity);
  let size = 0;
  if (capacity > 0) {
    let i = 0;
    // Fill the heap.
    for (; i < count && size < capacity; i++) {
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
      i =
        firstAtLeast === undefined
          ? nextAtLeast(scores, i, count, threshold)
          : firstAtLeast(i, count, threshold);
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
