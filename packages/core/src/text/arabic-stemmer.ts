/**
 * Light Arabic stemmer in the style of Light10 (Larkey, Ballesteros and Connell), with the
 * same affixes, order and length guards as Lucene's `ArabicStemmer`:
 * - at most one prefix, the first that matches of ال وال بال كال فال لل و; a two- or
 *   three-letter prefix needs at least two letters left, the one-letter و at least three;
 * - then every suffix in turn, of ها ان ات ون ين يه ية ه ة ي, each removed when at least two
 *   letters remain, so stacked suffixes (-يه then -ه ...) come off one after another.
 *
 * It expects normalised text (see `normalizeArabic`): alef forms unified and teh marbuta
 * written as heh, which is why -يه and -ه carry most feminine endings.
 */

const PREFIXES = ['ال', 'وال', 'بال', 'كال', 'فال', 'لل', 'و'] as const;
const SUFFIXES = ['ها', 'ان', 'ات', 'ون', 'ين', 'يه', 'ية', 'ه', 'ة', 'ي'] as const;

/** Strips Arabic prefixes and suffixes from one normalised word. */
export function arabicLightStem(word: string): string {
  let start = 0;
  let end = word.length;
  for (const prefix of PREFIXES) {
    const minimum = prefix.length === 1 ? 4 : prefix.length + 2;
    if (end >= minimum && word.startsWith(prefix)) {
      start = prefix.length;
      break;
    }
  }
  for (const suffix of SUFFIXES) {
    if (end - start >= suffix.length + 2 && word.endsWith(suffix, end)) end -= suffix.length;
  }
  return start === 0 && end === word.length ? word : word.slice(start, end);
}
