import { InvalidArgumentError } from '../errors/index.js';

/**
 * Turns text into index terms. The same analyser serves indexing, queries, the reranker's
 * term overlap and near-duplicate detection, so their behaviour agrees.
 *
 * Only `name` and `analyze` are required. An analyser may also implement `analyzeKeys`, a fast
 * path that indexes use when present (`BM25Index` does): the same terms as `analyze`, handed
 * over as integer keys into the analyser's own term table instead of strings, so that indexing
 * allocates no string and hashes no string per token.
 */
export interface Analyzer {
  /** A short, stable description of the configuration (saved with indexes, checked on load). */
  readonly name: string;
  /** The analysed terms of `text` in order: normalised, stop words removed, stemmed. */
  analyze(text: string): string[];
  /**
   * Optional. Analyses `text` exactly as `analyze` does and writes its terms, in order, to `out`
   * as keys: `out.keys[0 .. out.count)`, with `out.term(key)` the term a key stands for. Equal
   * keys are equal terms; two keys may stand for one term (two words with one stem). Keys are
   * small non-negative integers (the analyser numbers the words it has seen from 0, so they can
   * index an array): a caller may remember what it derived from a key (a term id) for as long as
   * `out.space` stays the same, and must forget it when `space` changes (the analyser's bounded
   * table started over, which happens only between calls, never within one).
   */
  analyzeKeys?(text: string, out: TermKeys): void;
}

/** The output of `Analyzer.analyzeKeys`, reused from call to call by whoever analyses. */
export class TermKeys {
  /** The term keys of the last text analysed, [0, count); grown by the analyser as needed. */
  keys: Int32Array = new Int32Array(256);
  count = 0;
  /** Which numbering the keys belong to; keys of different spaces are unrelated. */
  space = 0;
  /** The term that a key of the current space stands for. */
  term: (key: number) => string = noTerm;
}

function noTerm(key: number): string {
  throw new InvalidArgumentError({
    argument: 'key',
    value: key,
    message: 'no text has been analysed into these keys',
  });
}
