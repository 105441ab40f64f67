import { InvalidArgumentError } from '../errors/index.js';
import {
  APOSTROPHE,
  asciiClasses,
  CONNECTOR,
  charWidth,
  DIGIT,
  FORMAT,
  HYPHEN,
  IDEOGRAPH,
  KATAKANA,
  LETTER,
  MARK,
  MID_LETTER,
  NUMBER_SEPARATOR,
  nonAsciiClass,
  POINT,
} from './char-class.js';
import { PACKED_MAX_LENGTH } from './term-cache.js';

/**
 * - `'zerda'` (default): the rules below.
 * - `'lucene'`: as close to Lucene's StandardTokenizer (UAX #29 word boundaries) as these rules
 *   get, for reproducing Lucene/Anserini baselines: every hyphen splits, a colon between letters
 *   joins (`a:b`), typographic apostrophes are kept as written, and a digit followed by `'s` is
 *   left to split as Lucene splits it (`1990's` -> `1990`, `s`).
 */
export type TokenizerMode = 'zerda' | 'lucene';

export interface TokenizerOptions {
  /** Default `'zerda'`. */
  mode?: TokenizerMode;
}

/**
 * Splits text into word tokens, in their original case. The rules (UAX #29 word boundaries,
 * as Lucene's StandardTokenizer, with the departures noted):
 * - a token is a run of letters and digits of any script, with the combining marks inside it
 *   (Arabic diacritics, accents written as separate marks); invisible format characters (soft
 *   hyphen, zero-width joiners, bidi marks) are dropped from it;
 * - Han ideographs and Hiragana are one token per character; Katakana runs are tokens;
 * - `.` `,` `;` `'` between two digits stay inside (3.5, 1,000, 1.000.000); `.` and `'` between
 *   two letters too (u.s.a, don't, o'neill); `_` between word characters (snake_case);
 * - a hyphen stays inside a token when the part after it contains a digit and the token has a
 *   letter, which keeps alphanumeric codes whole (covid-19, gpt-4, x86-64, iso-8859-1, gpt-3.5)
 *   while ordinary compounds and numeric ranges split (state-of-the-art -> state, of, the, art;
 *   10-20 -> 10, 20; covid-19-related -> covid-19, related). Lucene splits at every hyphen.
 * - apostrophes: kept between letters, so contractions stay one token (`don't`, which the English
 *   stop list holds); typographic ’ ‘ ＇ become ' so both spellings match; a trailing English
 *   possessive `'s` is removed as Lucene's EnglishPossessiveFilter does (john's -> john, also
 *   it's -> it); apostrophes elsewhere (students', 'quoted') are not part of tokens;
 * - everything else (spaces, punctuation, symbols, emoji) separates tokens and is never a token.
 */
export function tokenize(text: string, options?: TokenizerOptions): string[] {
  if (typeof text !== 'string') {
    throw new InvalidArgumentError({ argument: 'text', value: text, message: 'must be a string' });
  }
  const lucene = options?.mode === 'lucene';
  const spans = new TokenSpans();
  scanTokens(text, lucene, spans);
  const out = new Array<string>(spans.count);
  for (let t = 0; t < spans.count; t++) out[t] = spans.text(text, t, lucene);
  return out;
}

/**
 * Where the tokens of a text lie, in a reusable typed array: per token its start, its end with
 * two flags, and its characters packed into three integers during the scan (an ASCII token's
 * cache key, see `packedHash`). The analyser looks tokens up in its cache straight from these, so
 * a token seen before costs no allocation and, when short, no comparison of characters.
 */
export class TokenSpans {
  /** Number of tokens. */
  count = 0;
  /**
   * Token t: start at [5t]; end * 4 + flags at [5t + 1] (NEEDS_CLEANING, NOT_PACKED); the three
   * words of its packed characters (see `TermCache`) at [5t + 2 .. 5t + 4], valid unless
   * NOT_PACKED is set.
   */
  data = new Int32Array(5 * 512);

  push(start: number, end: number, flags: number, word0: number, word1: number, word2: number): void {
    let data = this.data;
    const at = this.count * 5;
    if (at + 5 > data.length) {
      const grown = new Int32Array(data.length * 2);
      grown.set(data);
      this.data = data = grown;
    }
    data[at] = start;
    data[at + 1] = (end << 2) | flags;
    data[at + 2] = word0;
    data[at + 3] = word1;
    data[at + 4] = word2;
    this.count++;
  }

  /** The text of token t: format characters dropped and, in Zerda mode, apostrophes and hyphens unified. */
  text(text: string, t: number, lucene: boolean): string {
    const start = this.data[t * 5]!;
    const packed = this.data[t * 5 + 1]!;
    const end = packed >>> 2;
    return packed & NEEDS_CLEANING ? cleanToken(text, start, end, lucene) : text.slice(start, end);
  }
}

/** Span flag: the token text is not the plain source range (format characters, apostrophe forms). */
export const NEEDS_CLEANING = 1;
/**
 * Span flag: the packed characters are not the token's (longer than 12 characters, non-ASCII, a
 * joined hyphen, a possessive removed); its cache key is found from its text instead.
 */
export const NOT_PACKED = 2;

function classAt(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code < 0x80 ? asciiClasses[code]! : nonAsciiClass(text, index, code);
}

/**
 * The scanner behind `tokenize`, appending token positions to `out`. A hand-written loop over
 * char codes with a class table, which matters when indexing millions of tokens. Scans from
 * `from`, which must not be inside a token; with `once`, stops after the first token. Returns
 * where it stopped.
 */
export function scanTokens(text: string, lucene: boolean, out: TokenSpans, from = 0, once = false): number {
  const n = text.length;
  let i = from;
  while (i < n) {
    let code = text.charCodeAt(i);
    let cls = code < 0x80 ? asciiClasses[code]! : nonAsciiClass(text, i, code);
    if (cls !== LETTER && cls !== DIGIT) {
      if (cls === IDEOGRAPH) {
        const width = charWidth(code);
        out.push(i, i + width, NOT_PACKED, 0, 0, 0);
        i += width;
        if (once) return i;
      } else if (cls === KATAKANA) {
        i = scanKatakana(text, i, out);
        if (once) return i;
      } else {
        i++;
      }
      continue;
    }

    const start = i;
    let last = cls; // class of the last letter or digit, for the joiner rules
    let hasLetter = cls === LETTER;
    let flags = 0; // NEEDS_CLEANING, NOT_PACKED
    // The ASCII token's characters so far, a byte each, shifted in at the low end of word0 and on
    // through word1 to word2: the last 12.
    let word0 = code;
    let word1 = 0;
    let word2 = 0;
    let end = -1; // set when the token ends before `i` (a digit's possessive 's is skipped)
    if (code < 0x80) i++;
    else {
      flags = NOT_PACKED;
      i += charWidth(code);
    }
    while (i < n) {
      code = text.charCodeAt(i);
      if (code < 0x80) {
        cls = asciiClasses[code]!;
        if (cls === LETTER) {
          last = LETTER;
          hasLetter = true;
          word2 = (word2 << 8) | (word1 >>> 24);
          word1 = (word1 << 8) | (word0 >>> 24);
          word0 = (word0 << 8) | code;
          i++;
          continue;
        }
        if (cls === DIGIT) {
          last = DIGIT;
          word2 = (word2 << 8) | (word1 >>> 24);
          word1 = (word1 << 8) | (word0 >>> 24);
          word0 = (word0 << 8) | code;
          i++;
          continue;
        }
      } else {
        flags |= NOT_PACKED;
        cls = nonAsciiClass(text, i, code);
        if (cls === LETTER || cls === DIGIT) {
          last = cls;
          if (cls === LETTER) hasLetter = true;
          i += charWidth(code);
          continue;
        }
        if (cls === MARK || cls === FORMAT) {
          if (cls === FORMAT) flags |= NEEDS_CLEANING;
          i += charWidth(code);
          continue;
        }
      }
      if (cls < APOSTROPHE || i + 1 >= n) break;

      // A joiner: look at the character after it.
      const next = classAt(text, i + 1);
      if (cls === HYPHEN) {
        if (lucene || (next !== LETTER && next !== DIGIT)) break;
        // Scan the part after the hyphen to see whether it holds a digit.
        let j = i + 1;
        let partDigit = false;
        let partLetter = false;
        let partLast = last;
        let partDirty = false;
        while (j < n) {
          const c = text.charCodeAt(j);
          const k = c < 0x80 ? asciiClasses[c]! : nonAsciiClass(text, j, c);
          if (k === LETTER) partLetter = true;
          else if (k === DIGIT) partDigit = true;
          else if (k === FORMAT) partDirty = true;
          else if (k !== MARK) break;
          if (k === LETTER || k === DIGIT) partLast = k;
          j += c < 0x80 ? 1 : charWidth(c);
        }
        if (!partDigit || !(hasLetter || partLetter)) break;
        flags |= NOT_PACKED;
        if (code !== 0x2d || partDirty) flags |= NEEDS_CLEANING;
        hasLetter ||= partLetter;
        last = partLast;
        i = j;
        continue;
      }
      if (cls === APOSTROPHE) {
        if (next === last && (next === LETTER || next === DIGIT)) {
          if (code !== 0x27) flags |= lucene ? NOT_PACKED : NEEDS_CLEANING;
          word2 = (word2 << 8) | (word1 >>> 24);
          word1 = (word1 << 8) | (word0 >>> 24);
          word0 = (word0 << 8) | code;
          i++;
          continue;
        }
        // A digit's possessive ("the 1990's"): drop the 's as for a word.
        if (!lucene && last === DIGIT && isPossessiveS(text, i + 1, n)) {
          end = i;
          i += 2;
        }
        break;
      }
      let joins: boolean;
      if (cls === POINT) joins = next === last && (next === LETTER || next === DIGIT);
      else if (cls === NUMBER_SEPARATOR) joins = next === DIGIT && last === DIGIT;
      else if (cls === MID_LETTER) joins = next === LETTER && last === LETTER;
      else if (cls === CONNECTOR) joins = next === LETTER || next === DIGIT;
      else joins = lucene && next === LETTER && last === LETTER; // COLON
      if (!joins) break;
      if (code >= 0x80) flags |= NEEDS_CLEANING | NOT_PACKED;
      word2 = (word2 << 8) | (word1 >>> 24);
      word1 = (word1 << 8) | (word0 >>> 24);
      word0 = (word0 << 8) | code;
      i++;
    }
    if (end < 0) {
      end = possessiveEnd(text, start, i);
      if (end !== i) flags |= NOT_PACKED;
    }
    if (end - start > PACKED_MAX_LENGTH) flags |= NOT_PACKED;
    out.push(start, end, flags, word0, word1, word2);
    if (once) return i;
  }
  return n;
}

function isPossessiveS(text: string, index: number, n: number): boolean {
  const c = text.charCodeAt(index);
  if (c !== 0x73 && c !== 0x53) return false;
  if (index + 1 >= n) return true;
  const after = classAt(text, index + 1);
  return after !== LETTER && after !== DIGIT && after !== MARK;
}

/** Where a token ends once an English possessive is removed, as Lucene's EnglishPossessiveFilter: a final 's, ’s or ＇s. */
function possessiveEnd(text: string, start: number, end: number): number {
  if (end - start >= 3) {
    const s = text.charCodeAt(end - 1);
    if (s === 0x73 || s === 0x53) {
      const q = text.charCodeAt(end - 2);
      if (q === 0x27 || q === 0x2019 || q === 0xff07) return end - 2;
    }
  }
  return end;
}

/** The token text of [start, end) without format characters, apostrophes and hyphens unified in Zerda mode. */
function cleanToken(text: string, start: number, end: number, lucene: boolean): string {
  let token = '';
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      token += text[i];
      continue;
    }
    const cls = nonAsciiClass(text, i, code);
    if (cls === FORMAT) {
      if (charWidth(code) === 2) i++;
      continue;
    }
    if (!lucene && cls === APOSTROPHE) token += "'";
    else if (!lucene && cls === HYPHEN) token += '-';
    else token += text[i];
  }
  return token;
}

/** A Katakana run (with its marks and connectors) from `start`; returns where it ends. */
function scanKatakana(text: string, start: number, out: TokenSpans): number {
  const n = text.length;
  let i = start + 1;
  let flags = NOT_PACKED;
  while (i < n) {
    const code = text.charCodeAt(i);
    const cls = code < 0x80 ? asciiClasses[code]! : nonAsciiClass(text, i, code);
    if (cls === KATAKANA || cls === MARK) i += charWidth(code);
    else if (cls === FORMAT) {
      flags |= NEEDS_CLEANING;
      i += charWidth(code);
    } else if (cls === CONNECTOR && i + 1 < n && classAt(text, i + 1) === KATAKANA) i++;
    else break;
  }
  out.push(start, i, flags, 0, 0, 0);
  return i;
}
