/**
 * Turns text into index terms. The same analyser serves indexing, queries, the reranker's
 * term overlap and near-duplicate detection, so their behaviour agrees.
 */
export interface Analyzer {
  /** A short, stable description of the configuration (saved with indexes, checked on load). */
  readonly name: string;
  /** The analysed terms of `text` in order: normalised, stop words removed, stemmed. */
  analyze(text: string): string[];
}
