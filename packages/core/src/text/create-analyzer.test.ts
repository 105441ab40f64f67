import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { normalizeArabic } from './arabic-normalizer.js';
import { arabicLightStem } from './arabic-stemmer.js';
import {
  type AnalyzerOptions,
  createAnalyzer,
  defaultAnalyzer,
  luceneEnglishAnalyzer,
} from './create-analyzer.js';
import { porterStem } from './porter-stemmer.js';
import { arabicStopWords, englishStopWords } from './stop-words/index.js';
import { tokenize } from './tokenizer.js';

describe('createAnalyzer', () => {
  it('lower-cases, drops stop words and stems by default', () => {
    expect(defaultAnalyzer.analyze('The quick brown foxes were jumping over the lazy dogs!')).toEqual([
      'quick',
      'brown',
      'fox',
      'jump',
      'lazi',
      'dog',
    ]);
  });

  it('analyses an all-stop-word text to nothing', () => {
    expect(defaultAnalyzer.analyze("The and of it's to be or not to be, that is what they'll do")).toEqual(
      [],
    );
    expect(luceneEnglishAnalyzer.analyze('To be or not to be: that is the question')).toEqual(['question']);
    expect(defaultAnalyzer.analyze('')).toEqual([]);
  });

  it('reproduces Lucene English analysis with luceneEnglishAnalyzer', () => {
    expect(
      luceneEnglishAnalyzer.analyze("The Foxes' dens were John's; state-of-the-art COVID-19 models"),
    ).toEqual(['fox', 'den', 'were', 'john', 'state', 'art', 'covid', '19', 'model']);
  });

  it('keeps codes and numbers as terms', () => {
    expect(defaultAnalyzer.analyze('GPT-4 beats x86-64 by 3.5 points in 2024')).toEqual([
      'gpt-4',
      'beat',
      'x86-64',
      '3.5',
      'point',
      '2024',
    ]);
  });

  it('folds compatibility forms before lower-casing', () => {
    expect(defaultAnalyzer.analyze('ﬁnance ＡＢＣ')).toEqual(['financ', 'abc']);
  });

  it('honours stopWords: false, other lists and explicit sets', () => {
    expect(createAnalyzer({ stopWords: false, stemmer: 'none' }).analyze('the cat')).toEqual(['the', 'cat']);
    expect(createAnalyzer({ stopWords: [], stemmer: 'none' }).analyze('the cat')).toEqual(['the', 'cat']);
    expect(
      createAnalyzer({ stopWords: ['es'], stemmer: 'none' }).analyze('El perro y la casa MÁS grande'),
    ).toEqual(['perro', 'casa', 'grande']);
    const custom = createAnalyzer({ stopWords: new Set(['Cat', 'إلى']), stemmer: 'none' });
    expect(custom.analyze('the cat went الى the CAT')).toEqual(['the', 'went', 'the']);
  });

  it('honours the stemmer option', () => {
    const text = 'running libraries والمكتبات';
    expect(createAnalyzer({ stemmer: 'none' }).analyze(text)).toEqual(['running', 'libraries', 'والمكتبات']);
    expect(createAnalyzer({ stemmer: 'porter' }).analyze(text)).toEqual(['run', 'librari', 'والمكتبات']);
    expect(createAnalyzer({ stemmer: 'arabic' }).analyze(text)).toEqual(['running', 'libraries', 'مكتب']);
    expect(createAnalyzer({ stemmer: (term) => term.slice(0, 3) }).analyze(text)).toEqual([
      'run',
      'lib',
      'وال',
    ]);
    // A stemmer's empty result drops the term rather than emitting ''.
    expect(createAnalyzer({ stemmer: (term) => (term === 'running' ? '' : term) }).analyze(text)).toEqual([
      'libraries',
      'والمكتبات',
    ]);
  });

  it("'auto' leaves words of other scripts unstemmed", () => {
    expect(defaultAnalyzer.analyze('Кошки running 東京')).toEqual(['кошки', 'run', '東', '京']);
  });

  it('honours lowercase: false, still matching stop words in any case', () => {
    const analyzer = createAnalyzer({ lowercase: false, stemmer: 'none' });
    expect(analyzer.analyze('The Quick THE fox')).toEqual(['Quick', 'fox']);
  });

  it('honours normalizeArabic: false', () => {
    const analyzer = createAnalyzer({ normalizeArabic: false, stemmer: 'none' });
    expect(analyzer.analyze('مكتبة أحمد')).toEqual(['مكتبة', 'أحمد']);
  });

  it('rejects unknown options with InvalidArgumentError', () => {
    const bad = (options: unknown) => () => createAnalyzer(options as AnalyzerOptions);
    expect(bad({ stopWords: ['fr'] })).toThrow(InvalidArgumentError);
    expect(bad({ stopWords: 'en' })).toThrow(InvalidArgumentError);
    expect(bad({ stemmer: 'snowball' })).toThrow(InvalidArgumentError);
    expect(bad({ tokenizer: 'whitespace' })).toThrow(InvalidArgumentError);
  });

  describe('name', () => {
    it('describes the configuration', () => {
      expect(defaultAnalyzer.name).toBe('zerda-analyzer/v1;tok=zerda;stop=en+ar;stem=auto;lower;arnorm');
      expect(luceneEnglishAnalyzer.name).toBe(
        'zerda-analyzer/v1;tok=lucene;stop=en-lucene;stem=porter;lower',
      );
      expect(createAnalyzer().name).toBe(defaultAnalyzer.name);
    });

    it('changes whenever an option changes', () => {
      const variants: AnalyzerOptions[] = [
        {},
        { stopWords: ['en'] },
        { stopWords: ['ar'] },
        { stopWords: ['en-lucene'] },
        { stopWords: ['es'] },
        { stopWords: false },
        { stopWords: new Set(['a']) },
        { stopWords: new Set(['b']) },
        { stemmer: 'porter' },
        { stemmer: 'arabic' },
        { stemmer: 'none' },
        { stemmer: (term) => term },
        { lowercase: false },
        { normalizeArabic: false },
        { tokenizer: 'lucene' },
      ];
      const names = variants.map((options) => createAnalyzer(options).name);
      expect(new Set(names).size).toBe(variants.length);
    });

    it('does not depend on how equal options are written', () => {
      expect(createAnalyzer({ stopWords: ['ar', 'en', 'ar'] }).name).toBe(defaultAnalyzer.name);
      expect(createAnalyzer({ stopWords: [] }).name).toBe(createAnalyzer({ stopWords: false }).name);
      expect(createAnalyzer({ stopWords: new Set(['b', 'A']) }).name).toBe(
        createAnalyzer({ stopWords: new Set(['a', 'B']) }).name,
      );
      expect(createAnalyzer({ stopWords: new Set(['a', 'b']) }).name).toMatch(/;stop=custom:2:[0-9a-f]{8};/);
      expect(createAnalyzer({ stemmer: (term) => term }).name).toContain(';stem=custom;');
    });
  });

  describe('term cache', () => {
    // The pipeline written out plainly, without the cache or the scanner's hashing.
    const reference = (text: string): string[] =>
      tokenize(text)
        .map((token) => normalizeArabic(token.normalize('NFKC').toLowerCase()))
        .filter((term) => term.length > 0 && !englishStopWords.has(term) && !arabicStopWords.has(term))
        .map((term) => (/[\u0600-\u06ff]/.test(term) ? arabicLightStem(term) : porterStem(term)));

    it('does not change results: cold, warm and reference analyses agree', () => {
      const texts = [
        "The libraries' catalogues were being reorganised; John's catalogue wasn't.",
        'Information retrieval: indexing, searching and ranking of documents (3.5 million in 2024).',
        'والمكتبات العامة في المدينة، ومكتبة الجامعة أيضًا',
        'don’t DON’T don\u00ADt COVID-19 covid-19 Covid\u201119',
      ];
      const warm = createAnalyzer();
      for (const text of texts) warm.analyze(text);
      for (const text of texts) {
        const cold = createAnalyzer().analyze(text);
        expect(warm.analyze(text)).toEqual(cold);
        expect(warm.analyze(text)).toEqual(cold);
        expect(cold).toEqual(reference(text));
      }
    });

    it('runs a custom stemmer once per distinct token', () => {
      const seen: string[] = [];
      const analyzer = createAnalyzer({
        stemmer: (term) => {
          seen.push(term);
          return term.toUpperCase();
        },
      });
      expect(analyzer.analyze('cat dog cat Cat dog')).toEqual(['CAT', 'DOG', 'CAT', 'CAT', 'DOG']);
      expect(analyzer.analyze('dog cat')).toEqual(['DOG', 'CAT']);
      // 'cat' and 'Cat' are different surface tokens, both analysed once.
      expect(seen).toEqual(['cat', 'dog', 'cat']);
    });

    it('caches a token once whether the scanner packed it or its text was read', () => {
      const seen: string[] = [];
      const analyzer = createAnalyzer({
        stopWords: false,
        stemmer: (term) => {
          seen.push(term);
          return term;
        },
      });
      // 'john' packed; "john's" reaches the cache by its text (possessive removed); long words are not packed.
      const text = "john john's characters characters's gpt-4 gpt-4 don't don’t";
      expect(analyzer.analyze(text)).toEqual([
        'john',
        'john',
        'characters',
        'characters',
        'gpt-4',
        'gpt-4',
        "don't",
        "don't",
      ]);
      expect(seen).toEqual(['john', 'characters', 'gpt-4', "don't"]);
    });

    it('allows a custom stemmer to call an analyser (re-entrancy)', () => {
      const inner = createAnalyzer({ stopWords: false });
      const outer = createAnalyzer({ stemmer: (term) => inner.analyze(`the ${term} jumping`).join('+') });
      expect(outer.analyze('cats and dogs')).toEqual(['the+cat+jump', 'the+dog+jump']);
    });

    it('stays correct across many distinct tokens (cache growth)', () => {
      const analyzer = createAnalyzer({ stemmer: 'none', stopWords: false });
      const words = Array.from({ length: 30_000 }, (_, i) => `w${i.toString(36)}x`);
      expect(analyzer.analyze(words.join(' '))).toEqual(words);
      expect(analyzer.analyze(words.slice(0, 1000).reverse().join(' '))).toEqual(
        words.slice(0, 1000).reverse(),
      );
    });
  });

  describe('properties', () => {
    // Text built from pieces that exercise the joiner, possessive and normalisation rules.
    const pieces = fc.constantFrom(
      ..." \n.,;:-_'’‘ssS0123456789aeiouytnrlAZ\u00AD\u200B\u200D\u064E\u0640أإآىةابتكلمنهوي٣٫ñé\u0301東カ😀-".split(
        '',
      ),
      'the ',
      "john's ",
      'covid-19',
      'state-of-the-art',
      '3.5',
      '1,000',
      'والكتاب',
      'إِسْلَامِيَّة',
      'ﬁ',
      'ﷺ',
    );
    const texts = fc.oneof(
      fc.array(pieces, { maxLength: 40 }).map((parts) => parts.join('')),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: 'grapheme', maxLength: 60 }),
    );
    const analyzers = [
      defaultAnalyzer,
      luceneEnglishAnalyzer,
      createAnalyzer({ lowercase: false, normalizeArabic: false, stopWords: ['es'] }),
    ];

    it('never returns empty strings and is deterministic', () => {
      fc.assert(
        fc.property(texts, (text) => {
          for (const analyzer of analyzers) {
            const first = analyzer.analyze(text);
            for (const term of first) {
              expect(term.length).toBeGreaterThan(0);
              expect(term).not.toMatch(/\s/);
            }
            expect(analyzer.analyze(text)).toEqual(first);
          }
        }),
        { numRuns: 400 },
      );
    });

    it('gives the same terms with a cold cache as with a warm one', () => {
      fc.assert(
        fc.property(texts, (text) => {
          expect(createAnalyzer().analyze(text)).toEqual(defaultAnalyzer.analyze(text));
        }),
        { numRuns: 200 },
      );
    });

    it('tokenize never returns empty tokens', () => {
      fc.assert(
        fc.property(texts, (text) => {
          for (const mode of ['zerda', 'lucene'] as const) {
            for (const token of tokenize(text, { mode })) expect(token.length).toBeGreaterThan(0);
          }
        }),
        { numRuns: 400 },
      );
    });
  });
});
