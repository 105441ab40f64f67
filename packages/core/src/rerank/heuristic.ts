/** The pieces of the heuristic score, each in [0, 1]. */

/** Number of white-space separated words in `text`. */
export function countWords(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space =
      c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a);
    if (space) inWord = false;
    else if (!inWord) {
      inWord = true;
      count++;
    }
  }
  return count;
}

/**
 * 1 for a word count inside [idealMin, idealMax]; below, it rises linearly from 0 (no words) to
 * 1 (idealMin words); above, it falls linearly from 1 to 0 at twice idealMax.
 */
export function lengthBonus(words: number, idealMin: number, idealMax: number): number {
  if (words >= idealMin && words <= idealMax) return 1;
  if (words < idealMin) return idealMin <= 0 ? 1 : Math.max(0, words / idealMin);
  return Math.max(0, 1 - (words - idealMax) / idealMax);
}

/** The share of the query's distinct terms that occur among the chunk's terms (0 for a query without terms). */
export function termOverlap(queryTerms: ReadonlySet<string>, chunkTerms: ReadonlySet<string>): number {
  if (queryTerms.size === 0) return 0;
  let found = 0;
  for (const term of queryTerms) if (chunkTerms.has(term)) found++;
  return found / queryTerms.size;
}
