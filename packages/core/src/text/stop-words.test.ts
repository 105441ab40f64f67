import { describe, expect, it } from 'vitest';
import {
  arabicStopWords,
  englishStopWords,
  luceneEnglishStopWords,
  spanishStopWords,
  stopWordLists,
} from './stop-words/index.js';

describe('stop-word lists', () => {
  it("holds exactly Lucene's 33 English stop words", () => {
    expect([...luceneEnglishStopWords].sort()).toEqual(
      'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
        ' ',
      ),
    );
  });

  it('has a comprehensive English list that includes the Lucene list', () => {
    expect(englishStopWords.size).toBeGreaterThanOrEqual(170);
    for (const word of luceneEnglishStopWords) expect(englishStopWords.has(word)).toBe(true);
    for (const word of ["don't", "isn't", 'themselves', 'because', 'very'])
      expect(englishStopWords.has(word)).toBe(true);
  });

  it('has the Snowball Spanish list with accents', () => {
    expect(spanishStopWords.size).toBe(304);
    for (const word of ['de', 'más', 'también', 'estábamos', 'tuviésemos'])
      expect(spanishStopWords.has(word)).toBe(true);
  });

  it('has an Arabic list', () => {
    expect(arabicStopWords.size).toBeGreaterThan(150);
    for (const word of ['في', 'من', 'الي', 'التي', 'هذه', 'ان']) expect(arabicStopWords.has(word)).toBe(true);
  });

  it('stores every list in lower case, without empty or padded entries', () => {
    for (const list of Object.values(stopWordLists)) {
      for (const word of list) {
        expect(word).toBe(word.trim().toLowerCase());
        expect(word.length).toBeGreaterThan(0);
        expect(word.normalize('NFC')).toBe(word);
      }
    }
  });
});
