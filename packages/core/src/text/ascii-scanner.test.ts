import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AsciiTokenScanner } from './ascii-scanner.js';
import { createAnalyzer } from './create-analyzer.js';
import { scanTokens, TokenSpans } from './tokenizer.js';

const scanner = AsciiTokenScanner.create();

function theScanner(): AsciiTokenScanner {
  if (scanner === undefined) throw new Error('WebAssembly SIMD is available on Node 20');
  return scanner;
}

/** Every span's five numbers, as `scanTokens` writes them and as the WebAssembly scan does. */
function spanNumbers(spans: TokenSpans): number[] {
  return Array.from(spans.data.subarray(0, spans.count * 5));
}

function expected(text: string, lucene: boolean): number[] {
  const spans = new TokenSpans();
  scanTokens(text, lucene, spans);
  return spanNumbers(spans);
}

function scanned(text: string, lucene: boolean): number[] | undefined {
  const spans = theScanner().scan(text, lucene);
  return spans === undefined ? undefined : spanNumbers(spans);
}

/** ASCII text dense in what the joiner rules look at: joiners, digits, possessives, long runs. */
const joinerText = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'S', 's', 'Z', '0', '1', '9') },
      { weight: 4, arbitrary: fc.constantFrom("'", '.', ',', ';', ':', '-', '_') },
      { weight: 3, arbitrary: fc.constantFrom(' ', '  ', '\n', '\t', '!', '"', '(', '/', '\0', '\x7f') },
      { weight: 1, arbitrary: fc.constantFrom("'s", 'abcdefghijklm', 'x'.repeat(17), '12345678901234567') },
    ),
    { maxLength: 80 },
  )
  .map((parts) => parts.join(''));

describe('AsciiTokenScanner', () => {
  it('runs on Node 20', () => {
    expect(scanner).toBeInstanceOf(AsciiTokenScanner);
  });

  it('finds the spans scanTokens finds, in both modes, joiner rules and packed words included', () => {
    fc.assert(
      fc.property(joinerText, fc.boolean(), (text, lucene) => {
        expect(scanned(text, lucene)).toEqual(expected(text, lucene));
      }),
      { numRuns: 20_000, seed: 19 },
    );
  });

  it('classes every ASCII character as scanTokens does, between letters, digits and at the ends', () => {
    for (let code = 0; code < 128; code++) {
      const c = String.fromCharCode(code);
      const text = `${c}a${c}b 1${c}2 a${c}1 1${c}a ab${c}${c}cd${c}`;
      for (const lucene of [false, true]) expect(scanned(text, lucene)).toEqual(expected(text, lucene));
    }
  });

  it('grows for long texts and long tokens, and scans short texts correctly after them', () => {
    const long = `${'word '.repeat(30_000)}${'y'.repeat(5_000)} covid-19 don't u.s.a 1990's 3.5`;
    expect(scanned(long, false)).toEqual(expected(long, false));
    const short = "it's 1,000 x86-64 snake_case";
    expect(scanned(short, false)).toEqual(expected(short, false));
    expect(scanned(short, true)).toEqual(expected(short, true));
  });

  it('scans texts that are not all ASCII: their ASCII in WebAssembly, the rest as scanTokens does', () => {
    const notAscii = fc
      .array(
        fc.oneof(
          { weight: 6, arbitrary: joinerText },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              'é',
              '’',
              '“',
              '—',
              'الطاقة',
              '\u0301',
              '\u00ad',
              '漢',
              'カナ',
              '😀',
              '\ud800',
              '\udc00',
              '٣',
            ),
          },
        ),
        { maxLength: 10 },
      )
      .map((parts) => parts.join(''));
    const encoder = new TextEncoder();
    let byKernel = 0;
    fc.assert(
      fc.property(notAscii, fc.boolean(), (text, lucene) => {
        const spans = scanned(text, lucene);
        if (spans === undefined) {
          // Only a text mostly outside ASCII, by its first 64 characters or its UTF-8 length, is
          // left to scanTokens.
          const head = Math.min(64, text.length);
          let outside = 0;
          for (let i = 0; i < head; i++) if (text.charCodeAt(i) >= 0x80) outside++;
          const headOutside = outside > head / 8;
          const bytesOutside = encoder.encode(text).length - text.length > text.length / 8;
          expect(headOutside || bytesOutside).toBe(true);
        } else {
          byKernel++;
          expect(spans).toEqual(expected(text, lucene));
        }
      }),
      { numRuns: 20_000, seed: 19 },
    );
    expect(byKernel).toBeGreaterThan(10_000);
    // A word that goes on past ASCII: into an accent, an Arabic letter, a format character, a
    // combining mark; after a joiner; an emoji and a lone surrogate before later words.
    for (const tail of ['é', 'ب', '\u00adx', '\u0301', "'é", '-١', '.é', ' 😀 x', ' \ud800 y']) {
      const text = `${'word '.repeat(10)}end${tail} after ${'more words '.repeat(10)}`;
      expect(scanned(text, false)).toEqual(expected(text, false));
      expect(scanned(text, true)).toEqual(expected(text, true));
    }
  });

  it('leaves Arabic and Chinese text to scanTokens', () => {
    expect(theScanner().scan('الطاقة الشمسية في المدن', false)).toBeUndefined();
    expect(theScanner().scan('太阳能 solar', false)).toBeUndefined();
  });

  it('leaves texts over 262,144 characters to scanTokens', () => {
    expect(theScanner().scan('a '.repeat(2 ** 17 + 1), false)).toBeUndefined();
    expect(scanned('a '.repeat(2 ** 17), false)).toEqual(expected('a '.repeat(2 ** 17), false));
  });

  it('gives the analyser the terms of each token, wherever the text holds other characters', () => {
    // Han ideographs around the text: it is scanned as an ASCII stretch within a text, or (when
    // short) by scanTokens, and its terms are those of the text alone.
    const analyzers = [createAnalyzer(), createAnalyzer({ tokenizer: 'lucene', stemmer: 'none' })];
    fc.assert(
      fc.property(joinerText, (text) => {
        for (const analyzer of analyzers) {
          const terms = analyzer.analyze(text);
          expect(analyzer.analyze(`漢 ${text} 字`)).toEqual(['漢', ...terms, '字']);
        }
      }),
      { numRuns: 5_000, seed: 19 },
    );
  });
});
