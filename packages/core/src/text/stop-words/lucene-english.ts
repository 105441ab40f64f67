import { wordSet } from './words.js';

/**
 * Exactly Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET` (33 words), the list Anserini and
 * Pyserini use for their BM25 baselines; reproducing their scores needs this very list.
 */
export const luceneEnglishStopWords: ReadonlySet<string> = wordSet(`
  a an and are as at be but by for if in into is it no not of on or such that the their then there
  these they this to was will with
`);
