/**
 * A bounded min-heap that keeps the k best (score, doc) pairs. Ties on score are broken by the
 * document's id (code-unit order, smaller first) when `ids` is given, as the final sort of every
 * retriever does, so the hits for k are the first k hits for any larger k; without `ids`, by the
 * smaller doc number.
 */
export class TopKHeap {
  scores: Float64Array;
  docs: Int32Array;
  size = 0;
  /**
   * The score `pushOffered` takes: a float passed as an argument to a call that is not inlined is
   * boxed on the heap, which a scorer's inner loop should not pay per offered document.
   */
  readonly offered = new Float64Array(1);

  constructor(
    public k: number,
    private ids?: ArrayLike<string | undefined>,
  ) {
    this.scores = new Float64Array(k);
    this.docs = new Int32Array(k);
  }

  /** Empties the heap for another query, keeping its arrays when they are large enough. */
  reset(k: number, ids?: ArrayLike<string | undefined>): void {
    if (this.scores.length < k) {
      this.scores = new Float64Array(k);
      this.docs = new Int32Array(k);
    }
    this.k = k;
    this.ids = ids;
    this.size = 0;
  }

  /** The score a new entry must beat once the heap is full, otherwise -Infinity. */
  threshold(): number {
    return this.size < this.k ? Number.NEGATIVE_INFINITY : (this.scores[0] as number);
  }

  push(score: number, doc: number): void {
    this.offered[0] = score;
    this.pushOffered(doc);
  }

  /** `push(this.offered[0], doc)`. */
  pushOffered(doc: number): void {
    const score = this.offered[0] as number;
    const { scores, docs } = this;
    // Comparisons are written out rather than called: a float argument to a call that is not
    // inlined is boxed on the heap. (a, docA) ranks below (b, docB) when
    // a < b || (a === b && this.laterKey(docA, docB)).
    if (this.size < this.k) {
      // Sift up from the end.
      let index = this.size++;
      while (index > 0) {
        const parent = (index - 1) >> 1;
        const parentScore = scores[parent] as number;
        if (!(score < parentScore || (score === parentScore && this.laterKey(doc, docs[parent] as number)))) {
          break;
        }
        scores[index] = scores[parent] as number;
        docs[index] = docs[parent] as number;
        index = parent;
      }
      scores[index] = score;
      docs[index] = doc;
      return;
    }
    const rootScore = scores[0] as number;
    if (
      score < rootScore ||
      (score === rootScore && (doc === docs[0] || this.laterKey(doc, docs[0] as number)))
    ) {
      return;
    }
    // Replace the root (the worst kept entry) and sift down.
    const size = this.size;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const right = left + 1;
      let child = left;
      if (right < size) {
        const rightScore = scores[right] as number;
        const leftScore = scores[left] as number;
        if (
          rightScore < leftScore ||
          (rightScore === leftScore && this.laterKey(docs[right] as number, docs[left] as number))
        ) {
          child = right;
        }
      }
      const childScore = scores[child] as number;
      if (!(childScore < score || (childScore === score && this.laterKey(docs[child] as number, doc)))) break;
      scores[index] = scores[child] as number;
      docs[index] = docs[child] as number;
      index = child;
    }
    scores[index] = score;
    docs[index] = doc;
  }

  /** The kept entries, best first. */
  sorted(): Array<{ doc: number; score: number }> {
    const entries: Array<{ doc: number; score: number }> = [];
    for (let i = 0; i < this.size; i++)
      entries.push({ doc: this.docs[i] as number, score: this.scores[i] as number });
    return entries.sort((a, b) => b.score - a.score || (this.laterKey(a.doc, b.doc) ? 1 : -1));
  }

  /** True when docA ranks below docB among equal scores: a later id, or a later doc number. */
  private laterKey(docA: number, docB: number): boolean {
    const ids = this.ids;
    if (ids === undefined || docA === docB) return docA > docB;
    return (ids[docA] as string) > (ids[docB] as string);
  }
}
