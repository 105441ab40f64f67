import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzeQuery } from './context/index.js';
import { ZerdaError } from './errors/index.js';
import { parseFilter } from './filter/index.js';
import { KeywordRetriever } from './keyword/index.js';
import { normalizeChunks } from './model/index.js';
import { createAnalyzer, defaultAnalyzer, luceneEnglishAnalyzer, tokenize } from './text/index.js';

/*
 * Fuzzing the entry points that take text or untyped objects from users: arbitrary input may be
 * refused, but only with a typed Zerda error, and every case finishes quickly (a hang or a stack
 * overflow is a failure). Sizes are kept small except for a few runs of a 1 MB string.
 */

/** How long one case may take (generous: the machine running the tests may be loaded). */
const CASE_MS = 2_000;

/** Runs `run`; passes if it returns, or throws a Zerda error; fails on anything else or when slow. */
function typedOrFine(run: () => unknown, limitMs = CASE_MS): void {
  const started = performance.now();
  try {
    run();
  } catch (error) {
    if (!ZerdaError.isInstance(error)) throw error;
  }
  const elapsed = performance.now() - started;
  if (elapsed > limitMs) throw new Error(`took ${elapsed.toFixed(0)} ms (limit ${limitMs} ms)`);
}

/** Characters that trip text handling: lone surrogates, bidi controls, joiners, marks, Arabic forms. */
const trickyCharacter = fc.constantFrom(
  '\uD800', // unpaired high surrogate
  '\uDFFF', // unpaired low surrogate
  '\u200E', // left-to-right mark
  '\u200F', // right-to-left mark
  '\u202E', // right-to-left override
  '\u2066', // left-to-right isolate
  '\u200D', // zero-width joiner
  '\u200C', // zero-width non-joiner
  '\uFEFF', // byte order mark
  '\u0301', // combining acute accent
  '\u0640', // Arabic tatweel
  '\u064B', // Arabic fathatan
  '\u0622', // alef with madda
  'ى',
  'ة',
  '\u00AD', // soft hyphen
  '\u0000',
  '\r\n',
  '\u2028',
  '👩‍👩‍👧', // a ZWJ emoji sequence
  '🇸🇦',
  'ǅ',
  'ß',
  'İ',
  'ﬁ',
  '١٢٣',
  "'s",
  '_',
  '-',
  '.',
);

/** One UTF-16 code unit, any value (so unpaired surrogates too). */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));

/** Text mixing whole code points, raw code units, tricky characters, words and spaces. */
const hostileText = (maxLength: number) =>
  fc
    .array(
      fc.oneof(
        { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
        { weight: 2, arbitrary: codeUnit },
        { weight: 3, arbitrary: trickyCharacter },
        { weight: 2, arbitrary: fc.constantFrom('solar ', 'الطاقة ', 'running ', ' ', '  ', '\t', 'x') },
      ),
      { maxLength },
    )
    .map((parts) => parts.join(''));

/** One megabyte of hostile text, built by repeating a random sample (fast to generate). */
const megabyteText = hostileText(200).map((sample) => {
  const unit = sample.length > 0 ? sample : 'x';
  return unit.repeat(Math.ceil(1_000_000 / unit.length)).slice(0, 1_000_000);
});

const analyzers = [
  defaultAnalyzer,
  luceneEnglishAnalyzer,
  createAnalyzer({ stopWords: [], stemmer: 'none' }),
];

describe('fuzz: the tokenizer and the analysers', () => {
  it('take any string (lone surrogates, bidi marks, joiners): terms are non-empty, deterministic strings', () => {
    fc.assert(
      fc.property(hostileText(80), (text) => {
        typedOrFine(() => {
          for (const analyzer of analyzers) {
            const terms = analyzer.analyze(text);
            expect(terms.every((term) => typeof term === 'string' && term.length > 0)).toBe(true);
            expect(analyzer.analyze(text)).toEqual(terms);
          }
          const tokens = tokenize(text);
          expect(tokens.every((token) => token.length > 0)).toBe(true);
          expect(tokenize(text, { mode: 'lucene' }).every((token) => token.length > 0)).toBe(true);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('take a 1 MB string in bounded time, with output no bigger than the input', () => {
    fc.assert(
      fc.property(megabyteText, (text) => {
        typedOrFine(() => {
          for (const analyzer of analyzers) {
            const terms = analyzer.analyze(text);
            expect(terms.length).toBeLessThanOrEqual(text.length);
          }
          expect(tokenize(text).length).toBeLessThanOrEqual(text.length);
        }, 20_000);
      }),
      { numRuns: 3 },
    );
  }, 180_000);

  it('BM25 indexes and searches any text, a 1 MB chunk included', () => {
    fc.assert(
      fc.property(
        fc.array(hostileText(40), { minLength: 1, maxLength: 8 }),
        hostileText(30),
        (texts, query) => {
          typedOrFine(() => {
            const retriever = new KeywordRetriever();
            retriever.add(texts.map((text, index) => ({ id: `c${index}`, text })));
            const hits = retriever.index.search(query, 5);
            expect(hits.every((hit) => Number.isFinite(hit.score))).toBe(true);
          });
        },
      ),
      { numRuns: 100 },
    );
    fc.assert(
      fc.property(megabyteText, (text) => {
        typedOrFine(() => {
          const retriever = new KeywordRetriever();
          retriever.add([{ id: 'big', text }]);
          retriever.index.search(text.slice(0, 200), 3);
        }, 30_000);
      }),
      { numRuns: 3 },
    );
  }, 180_000);
});

describe('fuzz: the query analyser', () => {
  it('analyses any question, returning its fields; refuses a non-string with a typed error', () => {
    fc.assert(
      fc.property(fc.oneof(hostileText(120), fc.anything()), (query) => {
        typedOrFine(() => {
          const analysis = analyzeQuery(query as string);
          expect(typeof analysis.language).toBe('string');
          expect(analysis.keywords.every((keyword) => typeof keyword === 'string')).toBe(true);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('analyses a 1 MB question in bounded time', () => {
    fc.assert(
      fc.property(megabyteText, (text) => {
        typedOrFine(() => analyzeQuery(text), 30_000);
      }),
      { numRuns: 2 },
    );
  }, 120_000);

  it('analyses 1 MB questions that once took quadratic time in entity extraction', () => {
    // Each unit repeated: a run of letters and dots or hyphens (every start scanned the code
    // pattern to the end of the run), many numbers or codes (every entity checked against all
    // found so far), many leading function words (shifted out one by one).
    for (const unit of ['A.', 'Ab-', 'a1_.', '1 ', 'A1 ', 'Of of ']) {
      const text = unit.repeat(Math.ceil(1_000_000 / unit.length)).slice(0, 1_000_000);
      typedOrFine(() => expect(analyzeQuery(text).entities.length).toBeLessThanOrEqual(2), 30_000);
    }
  }, 180_000);
});

/** Objects that look like filters: field names and operators, nested, with values of every kind. */
const filterLike = fc.letrec((tie) => ({
  value: fc.oneof(
    fc.anything({ maxDepth: 2 }),
    fc.string(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), { maxLength: 4 }),
  ),
  key: fc.oneof(
    fc.constantFrom(
      '$and',
      '$or',
      '$not',
      '$eq',
      '$ne',
      '$gt',
      '$gte',
      '$lt',
      '$lte',
      '$in',
      '$nin',
      '$exists',
    ),
    fc.constantFrom('$regex', '$where', '__proto__', 'constructor', '', 'year', 'id', 'docId', 'a.b'),
    fc.string({ maxLength: 6 }),
  ),
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.dictionary(tie('key') as fc.Arbitrary<string>, tie('value'), { maxKeys: 4 }),
    fc.dictionary(tie('key') as fc.Arbitrary<string>, tie('node'), { maxKeys: 3 }),
    fc.array(tie('node'), { maxLength: 3 }),
  ),
}));

describe('fuzz: the filter parser', () => {
  it('parses or refuses with a FilterError any value and any filter-like object', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), filterLike.node), (input) => {
        typedOrFine(() => {
          try {
            parseFilter(input);
          } catch (error) {
            expect((error as Error).name).toBe('FilterError');
            throw error;
          }
        });
      }),
      { numRuns: 500 },
    );
  });

  it('refuses filters nested thousands deep, or referring to themselves, with a FilterError', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 65, max: 50_000 }),
        fc.constantFrom('$not', '$and', '$or'),
        (depth, operator) => {
          let filter: unknown = { year: 1 };
          for (let i = 0; i < depth; i++)
            filter = operator === '$not' ? { $not: filter } : { [operator]: [filter] };
          expect(() => parseFilter(filter)).toThrow(/levels deep/);
        },
      ),
      { numRuns: 20 },
    );
  });
});

/** Things a user might pass as chunks: objects with the usual fields, holding values of any type. */
const chunkLike = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.anything({ maxDepth: 1 })),
    text: fc.oneof(hostileText(20), fc.anything({ maxDepth: 1 })),
    pageContent: fc.oneof(hostileText(20), fc.anything({ maxDepth: 1 })),
    content: fc.anything({ maxDepth: 1 }),
    docId: fc.anything({ maxDepth: 1 }),
    metadata: fc.oneof(
      fc.dictionary(fc.string({ maxLength: 5 }), fc.anything({ maxDepth: 2 }), { maxKeys: 4 }),
      fc.anything({ maxDepth: 2 }),
    ),
  },
  { requiredKeys: [] },
);

describe('fuzz: chunk normalisation', () => {
  it('normalises or refuses with a typed error any list of chunk-like values, and anything at all', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(fc.oneof(chunkLike, fc.anything({ maxDepth: 2 })), { maxLength: 6 }),
          fc.anything(),
        ),
        (input) => {
          typedOrFine(() => {
            const chunks = normalizeChunks(input as Iterable<unknown>);
            for (const chunk of chunks) {
              expect(typeof chunk.id).toBe('string');
              expect(typeof chunk.text).toBe('string');
            }
          });
        },
      ),
      { numRuns: 500 },
    );
  });
});
