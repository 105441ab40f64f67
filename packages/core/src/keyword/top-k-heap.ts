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
    const { scores, docs } = this;
    const isWorse = this.isWorse;
    if (this.size < this.k) {
      // Sift up from the end.
      let index = this.size++;
      while (index > 0) {
        const parent = (index - 1) >> 1;
        if (!isWorse(score, doc, scores[parent] as number, docs[parent] as number)) break;
        scores[index] = scores[parent] as number;
        docs[index] = docs[parent] as number;
        index = parent;
      }
      scores[index] = score;
      docs[index] = doc;
      return;
    }
    if (
      isWorse(score, doc, scores[0] as number, docs[0] as number) ||
      (score === scores[0] && doc === docs[0])
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
      if (
        right < size &&
        isWorse(scores[right] as number, docs[right] as number, scores[left] as number, docs[left] as number)
      ) {
        child = right;
      }
      if (!isWorse(scores[child] as number, docs[child] as number, score, doc)) break;
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
    return entries.sort((a, b) => b.score - a.score || (this.isWorse(0, a.doc, 0, b.doc) ? 1 : -1));
  }

  /** True when (scoreA, docA) ranks below (scoreB, docB): a lower score, or an equal one and a later key. */
  private readonly isWorse = (scoreA: number, docA: number, scoreB: number, docB: number): boolean => {
    if (scoreA !== scoreB) return scoreA < scoreB;
    const ids = this.ids;
    if (ids === undefined || docA === docB) return docA > docB;
    return (ids[docA] as string) > (ids[docB] as string);
  };
}
