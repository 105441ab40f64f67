import { InvalidArgumentError } from '../errors/index.js';
import { type Analyzer, TermKeys } from './analyzer.js';
import { hasArabicBlock, normalizeArabic } from './arabic-normalizer.js';
import { arabicLightStem } from './arabic-stemmer.js';
import { AsciiTokenScanner } from './ascii-scanner.js';
import { porterStem } from './porter-stemmer.js';
import { type StopWordListName, stopWordLists } from './stop-words/index.js';
import { detach, hashRange, packedHash, TermCache } from './term-cache.js';
import { NEEDS_CLEANING, NOT_PACKED, scanTokens, type TokenizerMode, TokenSpans } from './tokenizer.js';

/** How to stem: `'auto'` picks by script (see `AnalyzerOptions.stemmer`); a function must be pure. */
export type StemmerOption = 'auto' | 'porter' | 'arabic' | 'none' | ((term: string) => string);

export interface AnalyzerOptions {
  /**
   * Which stop words to drop: bundled list names, an explicit set, or false for none. Default
   * `['en', 'ar']`. Words of an explicit set go through the same Unicode, case and Arabic
   * normalisation as the terms. Matching ignores case and Arabic spelling variants even when
   * `lowercase` or `normalizeArabic` is off, since the lists are written normalised.
   */
  stopWords?: ReadonlyArray<StopWordListName> | ReadonlySet<string> | false;
  /**
   * `'auto'` (default): Porter for Latin-script words, the Arabic light stemmer for Arabic
   * words, others untouched; `'porter'` or `'arabic'` for every word; `'none'`; or a function
   * from term to stem (pure: results are cached per surface form; an empty result drops the term).
   */
  stemmer?: StemmerOption;
  /** Lower-case terms (locale-independent). Default true. The Porter stemmer expects lower case. */
  lowercase?: boolean;
  /** Apply `normalizeArabic` to terms. Default true. */
  normalizeArabic?: boolean;
  /** Tokenizer rules, see `TokenizerMode`. Default `'zerda'`. */
  tokenizer?: TokenizerMode;
}

const STOP_LIST_ORDER: readonly StopWordListName[] = ['en', 'en-lucene', 'es', 'ar'];
const STEMMER_NAMES = new Set(['auto', 'porter', 'arabic', 'none']);

/**
 * Bound on the per-analyser cache from surface token to final term. Natural-language
 * vocabularies repeat heavily (Zipf), so the cache lets the stemmers run about once per
 * distinct word; clearing it when full keeps memory bounded on endless streams of new tokens.
 */
const CACHE_LIMIT = 200_000;

/**
 * Creates an analyser: tokenize (see `tokenize`), then per token: Unicode NFKC normalisation
 * (non-ASCII tokens only: ligatures, full-width forms, Arabic presentation forms), lower-casing,
 * Arabic normalisation, stop-word removal, stemming. Empty terms are never returned.
 */
export function createAnalyzer(options: AnalyzerOptions = {}): Analyzer {
  const lowercase = options.lowercase ?? true;
  const arabicNormalization = options.normalizeArabic ?? true;
  const mode = options.tokenizer ?? 'zerda';
  if (mode !== 'zerda' && mode !== 'lucene') {
    throw new InvalidArgumentError({
      argument: 'tokenizer',
      value: mode,
      message: "expected 'zerda' or 'lucene'",
    });
  }
  const stemmerOption = options.stemmer ?? 'auto';
  if (typeof stemmerOption !== 'function' && !STEMMER_NAMES.has(stemmerOption)) {
    throw new InvalidArgumentError({
      argument: 'stemmer',
      value: stemmerOption,
      message: "expected 'auto', 'porter', 'arabic', 'none' or a function",
    });
  }
  const { stopWords, stopName } = resolveStopWords(options.stopWords ?? ['en', 'ar']);

  const name = [
    'zerda-analyzer/v1',
    `tok=${mode}`,
    `stop=${stopName}`,
    `stem=${typeof stemmerOption === 'function' ? 'custom' : stemmerOption}`,
    ...(lowercase ? ['lower'] : []),
    ...(arabicNormalization ? ['arnorm'] : []),
  ].join(';');

  return new ZerdaAnalyzer(name, {
    lucene: mode === 'lucene',
    lowercase,
    arabicNormalization,
    stopWords,
    stem: stemmerFor(stemmerOption),
  });
}

interface Pipeline {
  readonly lucene: boolean;
  readonly lowercase: boolean;
  readonly arabicNormalization: boolean;
  readonly stopWords: ReadonlySet<string> | undefined;
  readonly stem: (term: string, arabic: boolean) => string;
}

// A class rather than closures: every analyser then shares one hot, monomorphic `analyze`.
class ZerdaAnalyzer implements Analyzer {
  private readonly cache = new TermCache(CACHE_LIMIT);
  /** Keys behind `analyze`, reused; a re-entrant call (from a custom stemmer) gets its own. */
  private readonly scratchKeys = new TermKeys();
  /** Each token's cache hash, reused by top-level calls; a re-entrant call gets its own. */
  private hashes = new Int32Array(512);
  /** Keeps what `TermCache.prefetch` read, so that its reads are not elided. */
  private sink = 0;
  /** Nesting of calls in progress: the cache starts over only when none is (keys stay valid). */
  private depth = 0;
  /** `TermKeys.term` for this analyser's keys, made once. */
  private readonly termOfKey = (key: number): string => {
    const term = this.cache.term(key);
    if (typeof term !== 'string') {
      throw new InvalidArgumentError({
        argument: 'key',
        value: key,
        message: 'not a term key of this analyser',
      });
    }
    return term;
  };

  constructor(
    readonly name: string,
    private readonly pipeline: Pipeline,
  ) {}

  analyze(text: string): string[] {
    const keys = this.depth === 0 ? this.scratchKeys : new TermKeys();
    this.analyzeKeys(text, keys);
    const cache = this.cache;
    const count = keys.count;
    const list = keys.keys;
    // Built with push so the array stays packed, which is faster for the indexes that read it.
    const terms: string[] = [];
    for (let t = 0; t < count; t++) terms.push(cache.term(list[t]!) as string);
    return terms;
  }

  analyzeKeys(text: string, out: TermKeys): void {
    if (typeof text !== 'string') {
      throw new InvalidArgumentError({ argument: 'text', value: text, message: 'must be a string' });
    }
    const lucene = this.pipeline.lucene;
    const cache = this.cache;
    // Only between top-level calls, so that every key handed out in one call shares one numbering.
    if (this.depth === 0) cache.startOverIfFull();
    this.depth++;
    // One span buffer serves every call; a re-entrant call (from a custom stemmer) gets its own.
    const topLevel = !spansInUse;
    spansInUse = true;
    try {
      const spans = topLevel ? scanShared(text, lucene) : scanFresh(text, lucene);
      const data = spans.data;
      const count = spans.count;
      let keys = out.keys;
      if (keys.length < count) out.keys = keys = new Int32Array(Math.max(count, keys.length * 2));
      // First every token's hash, and the cache slots they lead to read all at once (see
      // `TermCache.prefetch`); then the lookups, which find those slots in cache.
      let hashes = this.depth === 1 ? this.hashes : new Int32Array(count);
      if (hashes.length < count) this.hashes = hashes = new Int32Array(Math.max(count, hashes.length * 2));
      for (let t = 0; t < count; t++) {
        const at = t * 5;
        const endAndFlags = data[at + 1]!;
        hashes[t] =
          (endAndFlags & (NEEDS_CLEANING | NOT_PACKED)) === 0
            ? packedHash(data[at + 2]!, data[at + 3]!, data[at + 4]!)
            : (endAndFlags & NEEDS_CLEANING) === 0
              ? hashRange(text, data[at]!, endAndFlags >>> 2)
              : 0;
      }
      this.sink ^= cache.prefetch(hashes, count);
      let written = 0;
      for (let t = 0; t < count; t++) {
        const at = t * 5;
        const endAndFlags = data[at + 1]!;
        let found: number;
        if ((endAndFlags & (NEEDS_CLEANING | NOT_PACKED)) === 0) {
          // An ASCII token of up to 12 characters (most tokens): its key is what the scanner packed.
          found = cache.findPacked(data[at + 2]!, data[at + 3]!, data[at + 4]!, hashes[t]!);
          if (found === 0) found = this.miss(text.slice(data[at]!, endAndFlags >>> 2), hashes[t]!);
        } else if ((endAndFlags & NEEDS_CLEANING) === 0) {
          const start = data[at]!;
          const end = endAndFlags >>> 2;
          found = cache.find(text, start, end, hashes[t]!);
          if (found === 0) found = this.miss(text.slice(start, end), hashes[t]!);
        } else {
          // Needs cleaning (format characters, apostrophe forms): cached by the cleaned text.
          const token = spans.text(text, t, lucene);
          const hash = hashRange(token, 0, token.length);
          found = cache.find(token, 0, token.length, hash);
          if (found === 0) found = this.miss(token, hash);
        }
        // Negative: a dropped token (stop word, empty once normalised).
        if (found > 0) keys[written++] = found - 1;
      }
      out.count = written;
      out.space = cache.space;
      out.term = this.termOfKey;
    } finally {
      this.depth--;
      if (topLevel) spansInUse = false;
    }
  }

  /** Analyses a token not in the cache and caches its term; returns its entry as `TermCache.find` does. */
  private miss(surface: string, hash: number): number {
    const token = detach(surface);
    const term = this.analyzeToken(token);
    return this.cache.set(token, hash, term);
  }

  /** The term for one surface token, or null when it is dropped. */
  private analyzeToken(token: string): string | null {
    const { lowercase, arabicNormalization, stopWords, stem } = this.pipeline;
    let term = token;
    let arabic = false;
    if (!isAscii(term)) {
      term = unicodeNormalize(term);
      arabic = hasArabicBlock(term);
    }
    if (lowercase) term = term.toLowerCase();
    if (arabic && arabicNormalization) term = normalizeArabic(term);
    if (term.length === 0) return null;
    if (stopWords !== undefined) {
      let key = lowercase ? term : term.toLowerCase();
      if (arabic && !arabicNormalization) key = normalizeArabic(key);
      if (stopWords.has(key)) return null;
    }
    const stemmed = stem(term, arabic);
    return stemmed.length === 0 ? null : stemmed;
  }
}

const sharedSpans = new TokenSpans();
/**
 * The WebAssembly scan of ASCII texts into spans of its own, made on first use (null until then,
 * undefined where it cannot run), so that loading core compiles and allocates nothing for it.
 */
let asciiScanner: AsciiTokenScanner | undefined | null = null;
/** Whether a call holds the shared spans (the scanner's or `sharedSpans`). */
let spansInUse = false;

/** The spans of `text` in the buffers top-level calls share: the scanner's, or `sharedSpans`. */
function scanShared(text: string, lucene: boolean): TokenSpans {
  if (asciiScanner === null) asciiScanner = AsciiTokenScanner.create();
  const scanned = asciiScanner?.scan(text, lucene);
  if (scanned !== undefined) return scanned;
  sharedSpans.count = 0;
  scanTokens(text, lucene, sharedSpans);
  return sharedSpans;
}

/** The spans of `text` in a buffer of their own, for a re-entrant call. */
function scanFresh(text: string, lucene: boolean): TokenSpans {
  const spans = new TokenSpans();
  scanTokens(text, lucene, spans);
  return spans;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
}

/**
 * NFKC folds compatibility forms (ligatures, full-width letters and digits, Arabic presentation
 * forms) into the letters they stand for. The few letters whose NFKC form is a phrase (ﷺ)
 * keep their NFC form, so a term never contains a space.
 */
function unicodeNormalize(token: string): string {
  const folded = token.normalize('NFKC');
  return folded.includes(' ') ? token.normalize('NFC') : folded;
}

/** Latin script (with digits and in-word punctuation): what Porter may stem in 'auto' mode. */
function isLatin(term: string): boolean {
  for (let i = 0; i < term.length; i++) {
    const c = term.charCodeAt(i);
    if (c < 0x250 || (c >= 0x1e00 && c <= 0x1eff) || (c >= 0x300 && c <= 0x36f)) continue;
    return false;
  }
  return true;
}

function stemmerFor(option: StemmerOption): (term: string, arabic: boolean) => string {
  switch (option) {
    case 'auto':
      return (term, arabic) => (arabic ? arabicLightStem(term) : isLatin(term) ? porterStem(term) : term);
    case 'porter':
      return (term) => porterStem(term);
    case 'arabic':
      return (term) => arabicLightStem(term);
    case 'none':
      return (term) => term;
    default: {
      const custom = option;
      return (term) => custom(term);
    }
  }
}

function resolveStopWords(option: ReadonlyArray<StopWordListName> | ReadonlySet<string> | false): {
  stopWords: ReadonlySet<string> | undefined;
  stopName: string;
} {
  if (option === false) return { stopWords: undefined, stopName: 'none' };
  if (isReadonlySet(option)) {
    const words = new Set<string>();
    for (const word of option) {
      if (typeof word !== 'string') {
        throw new InvalidArgumentError({
          argument: 'stopWords',
          value: word,
          message: 'stop words must be strings',
        });
      }
      const normalized = normalizeArabic(unicodeNormalize(word).toLowerCase());
      if (normalized.length > 0) words.add(normalized);
    }
    const sorted = [...words].sort();
    return { stopWords: words, stopName: `custom:${sorted.length}:${hashWords(sorted)}` };
  }
  if (!Array.isArray(option)) {
    throw new InvalidArgumentError({
      argument: 'stopWords',
      value: option,
      message: 'expected an array of list names, a Set of words or false',
    });
  }
  const names = new Set<StopWordListName>();
  for (const listName of option) {
    if (!STOP_LIST_ORDER.includes(listName)) {
      throw new InvalidArgumentError({
        argument: 'stopWords',
        value: listName,
        message: `unknown stop-word list; expected one of ${STOP_LIST_ORDER.join(', ')}`,
      });
    }
    names.add(listName);
  }
  const ordered = STOP_LIST_ORDER.filter((listName) => names.has(listName));
  if (ordered.length === 0) return { stopWords: undefined, stopName: 'none' };
  if (ordered.length === 1) return { stopWords: stopWordLists[ordered[0]!], stopName: ordered[0]! };
  const union = new Set<string>();
  for (const listName of ordered) for (const word of stopWordLists[listName]) union.add(word);
  return { stopWords: union, stopName: ordered.join('+') };
}

function isReadonlySet(value: unknown): value is ReadonlySet<string> {
  // Any set-like object will do, not only a built-in Set.
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { has?: unknown }).has === 'function' &&
    typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function'
  );
}

/** FNV-1a (32-bit) over the sorted words, so equal sets give equal analyser names. */
function hashWords(sorted: readonly string[]): string {
  let hash = 0x811c9dc5;
  for (const word of sorted) {
    for (let i = 0; i < word.length; i++) {
      hash ^= word.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    hash ^= 0x0a; // separator
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/** The default analyser: Zerda tokenizer, English and Arabic stop words, stemming by script. */
export const defaultAnalyzer: Analyzer = createAnalyzer();

/**
 * Lucene's (and Anserini's) default English analysis, for reproducing their BM25 baselines:
 * StandardTokenizer-like tokens, possessive removal, lower case, Lucene's 33 stop words, Porter.
 * Remaining differences touch rare text only: emoji are not tokens, non-ASCII tokens are NFKC
 * folded, invisible format characters are dropped, `_` joins only between word characters.
 * With a Lucene-formula BM25 it reproduces the reference CISI and Cranfield scores of
 * `datasets/README.md` to the fourth decimal.
 */
export const luceneEnglishAnalyzer: Analyzer = createAnalyzer({
  tokenizer: 'lucene',
  stopWords: ['en-lucene'],
  stemmer: 'porter',
  normalizeArabic: false,
});
