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

  it('leaves non-ASCII texts and texts over a million characters to scanTokens', () => {
    expect(theScanner().scan('naïve café', false)).toBeUndefined();
    expect(theScanner().scan('lone \ud800 surrogate', false)).toBeUndefined();
    expect(theScanner().scan('a '.repeat(2 ** 19 + 1), false)).toBeUndefined();
    expect(scanned('a '.repeat(2 ** 19), false)).toEqual(expected('a '.repeat(2 ** 19), false));
  });

  it('gives the analyser the terms it gets from scanTokens', () => {
    // A non-ASCII word at the end sends the same text down scanTokens: the terms before it match.
    const analyzers = [createAnalyzer(), createAnalyzer({ tokenizer: 'lucene', stemmer: 'none' })];
    fc.assert(
      fc.property(joinerText, (text) => {
        for (const analyzer of analyzers) {
          const terms = analyzer.analyze(text);
          expect(analyzer.analyze(`${text} é`)).toEqual([...terms, 'é']);
        }
      }),
      { numRuns: 5_000, seed: 19 },
    );
  });
});
