import { type Analyzer, defaultAnalyzer, luceneEnglishAnalyzer } from '@zerda/core';

/** The analysers the `zerda` commands know by name (`--analyzer`). */
export const namedAnalyzers = {
  /** Lucene's English analysis: 33 stop words, possessive removal, Porter stemming. */
  'lucene-english': () => luceneEnglishAnalyzer,
  /** Zerda's default analyser: English and Arabic (and Spanish) stop words, stemming by script. */
  default: () => defaultAnalyzer,
} as const satisfies Record<string, () => Analyzer>;

export type AnalyzerName = keyof typeof namedAnalyzers;

export function isAnalyzerName(name: string): name is AnalyzerName {
  return Object.hasOwn(namedAnalyzers, name);
}
