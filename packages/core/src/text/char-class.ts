/**
 * Character classes for the tokenizer, after the word-break properties of Unicode UAX #29
 * (the basis of Lucene's StandardTokenizer). A class is computed once per code unit and kept
 * in a typed array, so the scanner's hot loop is one array read per character.
 */

/** Not computed yet. */
const UNKNOWN = 0;
/** Space, punctuation, symbols, emoji: never part of a token. */
export const OTHER = 1;
/** Letters of any script (\p{L}, \p{Nl}) other than those below. */
export const LETTER = 2;
/** Decimal digits of any script (\p{Nd}). */
export const DIGIT = 3;
/** Combining marks (\p{M}): kept inside a word, ignored elsewhere. */
export const MARK = 4;
/** Invisible format characters (soft hyphen, ZWJ, ZWNJ, bidi marks, variation selectors): dropped. */
export const FORMAT = 5;
/** Han ideographs and Hiragana: each character is a token of its own, as in Lucene. */
export const IDEOGRAPH = 6;
/** Katakana: runs of Katakana form a token, which does not join other letters. */
export const KATAKANA = 7;
// Joiners: characters that stay inside a token only between the right neighbours. They are
// numbered from APOSTROPHE upwards so the scanner can test for any joiner with one comparison.
/** ' ‘ ’ ＇: between two letters (don't) or two digits. */
export const APOSTROPHE = 8;
/** . and its variants: between two letters (u.s.a) or two digits (3.5). */
export const POINT = 9;
/** , ; ، ٫ ٬ and variants: between two digits only (1,000). */
export const NUMBER_SEPARATOR = 10;
/** · and other mid-letter punctuation (Catalan l·l): between two letters. */
export const MID_LETTER = 11;
/** : and its variants: between two letters in Lucene mode only. */
export const COLON = 12;
/** - ‐ ‑: inside alphanumeric codes (covid-19) in Zerda mode only. */
export const HYPHEN = 13;
/** _ and other connector punctuation: between any two word characters (snake_case). */
export const CONNECTOR = 14;

const classes = new Uint8Array(0x10000);

function assign(codes: readonly number[], value: number): void {
  for (const code of codes) classes[code] = value;
}

assign([0x27, 0x2018, 0x2019, 0xff07], APOSTROPHE);
assign([0x2e, 0x2024, 0xfe52, 0xff0e], POINT);
assign(
  [
    0x2c, 0x3b, 0x37e, 0x589, 0x60c, 0x60d, 0x66b, 0x66c, 0x7f8, 0x2044, 0xfe10, 0xfe14, 0xfe50, 0xfe54,
    0xff0c, 0xff1b,
  ],
  NUMBER_SEPARATOR,
);
assign([0xb7, 0x387, 0x5f4, 0x2027], MID_LETTER);
assign([0x3a, 0xfe13, 0xfe55, 0xff1a], COLON);
assign([0x2d, 0x2010, 0x2011], HYPHEN);
assign([0x5f, 0x203f, 0x2040, 0x2054, 0xfe33, 0xfe34, 0xfe4d, 0xfe4e, 0xfe4f, 0xff3f], CONNECTOR);
// A zero-width space separates words, unlike the other format characters.
assign([0x200b], OTHER);
// The prolonged sound mark is Common script but belongs to Katakana words.
assign([0x30fc], KATAKANA);
// Variation selectors and the keycap mark would otherwise stick to digits of emoji sequences.
assign([0x20e3], FORMAT);
for (let c = 0xfe00; c <= 0xfe0f; c++) classes[c] = FORMAT;
// Surrogates are classified by code point in `astralClass`.
for (let c = 0xd800; c <= 0xdfff; c++) classes[c] = OTHER;
for (let c = 0; c < 0x80; c++) {
  if (classes[c] !== UNKNOWN) continue;
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) classes[c] = LETTER;
  else if (c >= 0x30 && c <= 0x39) classes[c] = DIGIT;
  else classes[c] = OTHER;
}

const LETTER_RE = /[\p{L}\p{Nl}]/u;
const IDEOGRAPH_RE = /[\p{Script=Han}\p{Script=Hiragana}]/u;
const KATAKANA_RE = /\p{Script=Katakana}/u;
const DIGIT_RE = /\p{Nd}/u;
const MARK_RE = /\p{M}/u;
const FORMAT_RE = /\p{Cf}/u;

function classify(char: string): number {
  if (LETTER_RE.test(char)) {
    if (IDEOGRAPH_RE.test(char)) return IDEOGRAPH;
    if (KATAKANA_RE.test(char)) return KATAKANA;
    return LETTER;
  }
  if (DIGIT_RE.test(char)) return DIGIT;
  if (MARK_RE.test(char)) return MARK;
  if (FORMAT_RE.test(char)) return FORMAT;
  return OTHER;
}

const astralClasses = new Map<number, number>();

function astralClass(codePoint: number): number {
  let value = astralClasses.get(codePoint);
  if (value === undefined) {
    // Astral tag characters (used in emoji flag sequences) are format characters too.
    value = classify(String.fromCodePoint(codePoint));
    if (astralClasses.size < 10_000) astralClasses.set(codePoint, value);
  }
  return value;
}

/**
 * The class of the character at `index`, whose code unit is `code` (>= 0x80; ASCII is read
 * from `asciiClasses` directly). A valid surrogate pair is classified by its code point; the
 * caller advances by two code units for it (see `charWidth`). A lone surrogate is OTHER.
 */
export function nonAsciiClass(text: string, index: number, code: number): number {
  if (code < 0xd800 || code > 0xdbff) {
    const value = classes[code]!;
    if (value !== UNKNOWN) return value;
    const computed = classify(String.fromCharCode(code));
    classes[code] = computed;
    return computed;
  }
  const low = text.charCodeAt(index + 1);
  if (low >= 0xdc00 && low <= 0xdfff) return astralClass(((code - 0xd800) << 10) + (low - 0xdc00) + 0x10000);
  return OTHER;
}

/** Classes of the ASCII characters, for the scanner's fast path. */
export const asciiClasses: Uint8Array = classes.subarray(0, 0x80);

/** Code units taken by the character at a position classified as a word character. */
export function charWidth(code: number): number {
  return code >= 0xd800 && code <= 0xdbff ? 2 : 1;
}
