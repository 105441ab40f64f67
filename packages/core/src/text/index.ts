export { type Analyzer, TermKeys } from './analyzer.js';
export { normalizeArabic } from './arabic-normalizer.js';
export { arabicLightStem } from './arabic-stemmer.js';
export {
  type AnalyzerOptions,
  createAnalyzer,
  defaultAnalyzer,
  luceneEnglishAnalyzer,
  type StemmerOption,
} from './create-analyzer.js';
export { porterStem } from './porter-stemmer.js';
export {
  arabicStopWords,
  englishStopWords,
  luceneEnglishStopWords,
  type StopWordListName,
  spanishStopWords,
} from './stop-words/index.js';
export { type TokenizerMode, type TokenizerOptions, tokenize } from './tokenizer.js';
