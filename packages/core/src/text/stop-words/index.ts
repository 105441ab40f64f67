import { arabicStopWords } from './arabic.js';
import { englishStopWords } from './english.js';
import { luceneEnglishStopWords } from './lucene-english.js';
import { spanishStopWords } from './spanish.js';

export { arabicStopWords, englishStopWords, luceneEnglishStopWords, spanishStopWords };

/** Names of the bundled stop-word lists. */
export type StopWordListName = 'en' | 'en-lucene' | 'es' | 'ar';

/** The bundled lists by name, in the canonical order used in analyser names. */
export const stopWordLists: Readonly<Record<StopWordListName, ReadonlySet<string>>> = {
  en: englishStopWords,
  'en-lucene': luceneEnglishStopWords,
  es: spanishStopWords,
  ar: arabicStopWords,
};
