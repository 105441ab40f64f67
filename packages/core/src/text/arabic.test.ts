import { describe, expect, it } from 'vitest';
import { normalizeArabic } from './arabic-normalizer.js';
import { arabicLightStem } from './arabic-stemmer.js';
import { createAnalyzer, defaultAnalyzer } from './create-analyzer.js';
import { arabicStopWords } from './stop-words/index.js';

describe('normalizeArabic', () => {
  it('removes tashkeel, superscript alef, Quranic marks and tatweel', () => {
    expect(normalizeArabic('إِسْلَامِيَّة')).toBe('اسلاميه');
    expect(normalizeArabic('كِتَابٌ')).toBe('كتاب');
    expect(normalizeArabic('هٰذا')).toBe('هذا');
    expect(normalizeArabic('كتـــاب')).toBe('كتاب');
    expect(normalizeArabic('الرَّحِيمِ\u06DA\u0610')).toBe('الرحيم');
  });

  it('unifies alef forms, alef maqsura and teh marbuta', () => {
    expect(normalizeArabic('أحمد إبراهيم آمن ٱلله')).toBe('احمد ابراهيم امن الله');
    expect(normalizeArabic('مستشفى')).toBe('مستشفي');
    expect(normalizeArabic('مكتبة')).toBe('مكتبه');
  });

  it('turns Arabic-Indic digits and separators into ASCII', () => {
    expect(normalizeArabic('٠١٢٣٤٥٦٧٨٩ ۰۱۲۳۴۵۶۷۸۹')).toBe('0123456789 0123456789');
    expect(normalizeArabic('٣٫٥ ١٬٠٠٠')).toBe('3.5 1,000');
  });

  it('returns text without Arabic unchanged (the same string)', () => {
    const text = 'Plain English text, 123.';
    expect(normalizeArabic(text)).toBe(text);
    expect(normalizeArabic('')).toBe('');
    expect(normalizeArabic('Mixed كتاب text')).toBe('Mixed كتاب text');
  });
});

describe('arabicLightStem', () => {
  it.each([
    ['والكتاب', 'كتاب'],
    ['المكتبات', 'مكتب'],
    ['الكتاب', 'كتاب'],
    ['بالعربيه', 'عرب'],
    ['كالبحر', 'بحر'],
    ['فالعلم', 'علم'],
    ['للطالب', 'طالب'],
    ['وكتب', 'كتب'],
    ['كتابها', 'كتاب'],
    ['معلمون', 'معلم'],
    ['معلمين', 'معلم'],
    ['كاتبان', 'كاتب'],
    ['مكتبه', 'مكتب'],
    ['عربي', 'عرب'],
    ['اسلاميه', 'اسلام'],
  ])('%s -> %s', (word, stem) => {
    expect(arabicLightStem(word)).toBe(stem);
  });

  it('keeps the length guards: short words stay whole', () => {
    expect(arabicLightStem('ولد')).toBe('ولد'); // و needs at least 4 letters
    expect(arabicLightStem('الم')).toBe('الم'); // ال needs 2 letters left
    expect(arabicLightStem('به')).toBe('به');
    expect(arabicLightStem('')).toBe('');
  });

  it('leaves non-Arabic words alone', () => {
    expect(arabicLightStem('hello')).toBe('hello');
  });
});

describe('Arabic analysis', () => {
  // Query without diacritics and with bare alef; documents with diacritics and hamza forms.
  it.each([
    ['إِسْلَامِيَّة', 'اسلاميه'],
    ['أحمد', 'احمد'],
    ['مكتبة', 'مكتبه'],
    ['مستشفى', 'مستشفي'],
    ['الْمَكْتَبَاتُ', 'المكتبات'],
    ['كتـــاب', 'كتاب'],
    ['آمن', 'امن'],
    ['٢٠٢٤', '2024'],
    ['ﻛﺘﺎﺏ', 'كتاب'], // presentation forms, as PDFs extract them
  ])('%s and %s analyse to the same terms', (document, query) => {
    const terms = defaultAnalyzer.analyze(document);
    expect(terms.length).toBeGreaterThan(0);
    expect(defaultAnalyzer.analyze(query)).toEqual(terms);
  });

  it('matches in both directions in running text', () => {
    const document = 'زارَ أحمدُ المكتبةَ الإسلاميّة في المُستشفى';
    const query = 'احمد مكتبه اسلاميه مستشفي';
    const documentTerms = new Set(defaultAnalyzer.analyze(document));
    for (const term of defaultAnalyzer.analyze(query)) expect(documentTerms.has(term)).toBe(true);
    const queryTerms = new Set(defaultAnalyzer.analyze(query));
    for (const term of defaultAnalyzer.analyze('أَحْمَد مكتبة إسلامية مستشفى'))
      expect(queryTerms.has(term)).toBe(true);
  });

  it('drops Arabic stop words, whatever their spelling', () => {
    // على is not a stop word: normalised, it is spelled like the name علي.
    expect(defaultAnalyzer.analyze('في هذه إلى أن إنّ الذى على الكتاب')).toEqual(['عل', 'كتاب']);
    expect(defaultAnalyzer.analyze('مِنْ فِي إِلَى أَنَّ')).toEqual([]);
  });

  it('still drops stop words when normalisation of the emitted terms is off', () => {
    const analyzer = createAnalyzer({ normalizeArabic: false, stemmer: 'none' });
    expect(analyzer.analyze('إلى أحمد')).toEqual(['أحمد']);
  });

  it('analyses mixed Arabic and English text, stemming each by its script', () => {
    expect(defaultAnalyzer.analyze('The libraries والمكتبات are growing')).toEqual([
      'librari',
      'مكتب',
      'grow',
    ]);
  });

  it('stores the Arabic stop words already normalised', () => {
    for (const word of arabicStopWords) expect(normalizeArabic(word)).toBe(word);
  });
});
