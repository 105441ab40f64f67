import { InvalidArgumentError, throwIfAborted } from '../../errors/index.js';
import { type Analyzer, defaultAnalyzer, normalizeArabic, tokenize } from '../../text/index.js';
import { LruCache } from '../../util/index.js';
import type { Embedder } from '../embedder.js';
import { FeatureCounter } from './feature-counter.js';
import { finish, hashRange, hashStart, hashString, hashUnit } from './hash.js';

/** How much each kind of feature weighs in the vector (each kind is normalised first). */
export interface HashEmbedderWeights {
  /** Analysed word unigrams (default 1). */
  words?: number;
  /** Pairs of adjacent analysed words (default 0.5). */
  bigrams?: number;
  /** Character n-grams of the normalised words (default 0.5). */
  charNGrams?: number;
}

export interface HashEmbedderOptions {
  /** Vector length (default 384). */
  dimension?: number;
  /** Produces the word features (default `defaultAnalyzer`); words it drops get no character n-grams either. */
  analyzer?: Analyzer;
  /** Lengths `[min, max]` of the character n-grams, in code points (default `[3, 5]`); `false` for none. */
  charNGrams?: readonly [number, number] | false;
  /** Adjacent-word features (default true). */
  bigrams?: boolean;
  /** Picks another, equally good, hash family (default 0): vectors of different seeds are unrelated. */
  seed?: number;
  weights?: HashEmbedderWeights;
  /** Texts embedded between two checks of the AbortSignal (default 256). */
  batchSize?: number;
}

const KIND_WORD = 1;
const KIND_BIGRAM = 2;
const KIND_CHAR = 3;
const MAX_DIMENSION = 1 << 20;
// Buckets per feature. A short text has few word features; spreading each over several buckets
// keeps one unlucky collision from dominating its vector. Character n-grams are many already.
const WORD_PROBES = 3;
const BIGRAM_PROBES = 2;

/**
 * The embedded default embedder: no model, no network, deterministic across runs and platforms.
 * A text becomes a bag of features (its analysed words, adjacent word pairs, and character
 * n-grams of its normalised words with `<` `>` boundary markers), each hashed to a bucket with a
 * hashed sign (so collisions cancel on average instead of piling up). Counts are weighted
 * `1 + ln tf`; each kind of feature is normalised on its own and weighted (words weigh more than
 * character n-grams), and the sum is L2-normalised. Morphological variants and shared words give
 * a high cosine; unrelated texts give a cosine near 0.
 *
 * A text with no features (empty, or only stop words) gives the zero vector. Its cosine with any
 * vector is defined as 0: it matches nothing, rather than dividing by zero.
 */
export class HashEmbedder implements Embedder {
  readonly dimension: number;
  /** A stable description of the configuration, to store beside vectors and compare on load. */
  readonly name: string;
  readonly #analyzer: Analyzer;
  readonly #ngrams: readonly [number, number] | false;
  readonly #bigrams: boolean;
  readonly #weights: Required<HashEmbedderWeights>;
  readonly #batchSize: number;
  readonly #start: { word: number; bigram: number; char: number };
  // Scratch buffers: embedding is synchronous per text, so one pair per instance suffices.
  readonly #sum: Float64Array;
  readonly #block: Float64Array;
  readonly #counter = new FeatureCounter();
  /** Character n-gram hashes per normalised word (empty for stop words), bounded. */
  readonly #ngramCache = new LruCache<string, Uint32Array>(20_000);

  constructor(options: HashEmbedderOptions = {}) {
    const dimension = options.dimension ?? 384;
    if (!Number.isInteger(dimension) || dimension < 1 || dimension > MAX_DIMENSION) {
      throw new InvalidArgumentError({
        argument: 'dimension',
        value: dimension,
        message: `must be an integer from 1 to ${MAX_DIMENSION}`,
      });
    }
    const analyzer = options.analyzer ?? defaultAnalyzer;
    if (analyzer == null || typeof analyzer.analyze !== 'function') {
      throw new InvalidArgumentError({
        argument: 'analyzer',
        value: analyzer,
        message: 'must have an analyze(text) method',
      });
    }
    const ngrams = options.charNGrams ?? [3, 5];
    if (
      ngrams !== false &&
      (!Array.isArray(ngrams) ||
        ngrams.length !== 2 ||
        !Number.isInteger(ngrams[0]) ||
        !Number.isInteger(ngrams[1]) ||
        ngrams[0] < 1 ||
        ngrams[1] < ngrams[0])
    ) {
      throw new InvalidArgumentError({
        argument: 'charNGrams',
        value: ngrams,
        message: 'must be false or [min, max] with integers 1 <= min <= max',
      });
    }
    const seed = options.seed ?? 0;
    if (!Number.isSafeInteger(seed)) {
      throw new InvalidArgumentError({ argument: 'seed', value: seed, message: 'must be an integer' });
    }
    const batchSize = options.batchSize ?? 256;
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new InvalidArgumentError({
        argument: 'batchSize',
        value: batchSize,
        message: 'must be a positive integer',
      });
    }
    const weights = {
      words: options.weights?.words ?? 1,
      bigrams: options.weights?.bigrams ?? 0.5,
      charNGrams: options.weights?.charNGrams ?? 0.5,
    };
    for (const [kind, weight] of Object.entries(weights)) {
      if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
        throw new InvalidArgumentError({
          argument: `weights.${kind}`,
          value: weight,
          message: 'must be a finite number >= 0',
        });
      }
    }
    const bigrams = options.bigrams ?? true;
    if (
      weights.words === 0 &&
      (!bigrams || weights.bigrams === 0) &&
      (ngrams === false || weights.charNGrams === 0)
    ) {
      throw new InvalidArgumentError({
        argument: 'weights',
        value: weights,
        message: 'every feature kind is disabled or weighs 0, so every vector would be zero',
      });
    }

    this.dimension = dimension;
    this.#analyzer = analyzer;
    this.#ngrams = ngrams === false ? false : [ngrams[0], ngrams[1]];
    this.#bigrams = bigrams;
    this.#weights = weights;
    this.#batchSize = batchSize;
    const s = seed >>> 0;
    this.#start = {
      word: hashStart(s, KIND_WORD),
      bigram: hashStart(s, KIND_BIGRAM),
      char: hashStart(s, KIND_CHAR),
    };
    this.#sum = new Float64Array(dimension);
    this.#block = new Float64Array(dimension);
    this.name =
      `hash-v1(dim=${dimension};words=${weights.words};bigrams=${bigrams ? weights.bigrams : 'off'};` +
      `chars=${ngrams === false ? 'off' : `${ngrams[0]}-${ngrams[1]}:${weights.charNGrams}`};seed=${s};` +
      `analyzer=${analyzer.name})`;
  }

  /** One unit vector (or the zero vector) per text, in order; checks the signal between batches. */
  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (!Array.isArray(texts)) {
      throw new InvalidArgumentError({
        argument: 'texts',
        value: texts,
        message: 'expected an array of strings',
      });
    }
    const { signal } = options;
    throwIfAborted(signal);
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      if (start > 0) {
        // Let timers and I/O run, so that an abort fired meanwhile is seen.
        await yieldToEventLoop();
        throwIfAborted(signal);
      }
      const end = Math.min(texts.length, start + this.#batchSize);
      for (let i = start; i < end; i++) vectors.push(this.#embedOne(texts[i] as string, `texts[${i}]`));
    }
    return vectors;
  }

  async embedQuery(text: string, options: { signal?: AbortSignal } = {}): Promise<Float32Array> {
    throwIfAborted(options.signal);
    return this.embedSync(text);
  }

  /** The vector of one text, synchronously (the same as `embed` gives). */
  embedSync(text: string): Float32Array {
    return this.#embedOne(text, 'text');
  }

  #embedOne(text: string, argument: string): Float32Array {
    if (typeof text !== 'string') {
      throw new InvalidArgumentError({ argument, value: text, message: 'expected a string' });
    }
    const sum = this.#sum;
    sum.fill(0);
    const terms = this.#analyzer.analyze(text);
    const w = this.#weights;
    let nonZero = false;
    if (w.words > 0 && terms.length > 0) {
      nonZero = this.#add(this.#countWords(terms), w.words, WORD_PROBES) || nonZero;
    }
    if (this.#bigrams && w.bigrams > 0 && terms.length > 1) {
      nonZero = this.#add(this.#countBigrams(terms), w.bigrams, BIGRAM_PROBES) || nonZero;
    }
    if (this.#ngrams !== false && w.charNGrams > 0) {
      nonZero = this.#add(this.#countCharNGrams(text), w.charNGrams, 1) || nonZero;
    }
    const vector = new Float32Array(this.dimension);
    if (!nonZero) return vector;
    let norm = 0;
    for (let i = 0; i < sum.length; i++) norm += (sum[i] as number) ** 2;
    // Features can cancel exactly (opposite signs in one bucket): treat that as no features.
    if (norm === 0) return vector;
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < sum.length; i++) vector[i] = (sum[i] as number) * scale;
    return vector;
  }

  #countWords(terms: readonly string[]): FeatureCounter {
    const counter = this.#counter;
    for (const term of terms) counter.add(hashString(this.#start.word, term));
    return counter;
  }

  #countBigrams(terms: readonly string[]): FeatureCounter {
    const counter = this.#counter;
    for (let i = 1; i < terms.length; i++) {
      const a = terms[i - 1] as string;
      const b = terms[i] as string;
      // A separator unit that no term contains keeps ("ab","c") apart from ("a","bc").
      let h = hashRange(this.#start.bigram, a, 0, a.length);
      h = hashUnit(h, 0);
      counter.add(finish(hashRange(h, b, 0, b.length)));
    }
    return counter;
  }

  #countCharNGrams(text: string): FeatureCounter {
    const counter = this.#counter;
    for (const word of normalizedWords(text)) {
      const grams = this.#wordNGrams(word);
      for (let i = 0; i < grams.length; i++) counter.add(grams[i] as number);
    }
    return counter;
  }

  /** The n-gram hashes of one word (none for a word the analyser drops), memoised: vocabularies repeat. */
  #wordNGrams(word: string): Uint32Array {
    let grams = this.#ngramCache.get(word);
    if (grams !== undefined) return grams;
    grams = this.#analyzer.analyze(word).length === 0 ? EMPTY : this.#computeNGrams(word);
    this.#ngramCache.set(word, grams);
    return grams;
  }

  #computeNGrams(word: string): Uint32Array {
    const [min, max] = this.#ngrams as readonly [number, number];
    const start = this.#start.char;
    const padded = `<${word}>`;
    const out: number[] = [];
    if (!hasSurrogates(padded)) {
      const points = padded.length;
      for (let n = min; n <= max && n <= points; n++) {
        for (let s = 0; s + n <= points; s++) out.push(finish(hashRange(start, padded, s, s + n)));
      }
      return Uint32Array.from(out);
    }
    // Code-point boundaries, so an n-gram never splits a surrogate pair.
    const offsets: number[] = [];
    for (let i = 0; i < padded.length; i++) {
      const c = padded.charCodeAt(i);
      if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
        const prev = padded.charCodeAt(i - 1);
        if (prev >= 0xd800 && prev <= 0xdbff) continue;
      }
      offsets.push(i);
    }
    offsets.push(padded.length);
    const points = offsets.length - 1;
    for (let n = min; n <= max && n <= points; n++) {
      for (let s = 0; s + n <= points; s++) {
        out.push(finish(hashRange(start, padded, offsets[s] as number, offsets[s + n] as number)));
      }
    }
    return Uint32Array.from(out);
  }

  /**
   * Adds one kind of feature, each spread over `probes` buckets, normalised to unit length and
   * scaled by `weight`; false if it had none.
   */
  #add(counter: FeatureCounter, weight: number, probes: number): boolean {
    if (counter.size === 0) return false;
    const block = this.#block;
    block.fill(0);
    const dimension = this.dimension;
    counter.forEach((hash, tf) => {
      const value = tf === 1 ? 1 : 1 + Math.log(tf);
      for (let p = 0; p < probes; p++) {
        const h = p === 0 ? hash : finish(hash ^ Math.imul(p, 0x9e3779b9));
        // Bit 0 picks the sign, the other 31 bits the bucket: independent bits of one hash.
        const bucket = (h >>> 1) % dimension;
        block[bucket] = (block[bucket] as number) + (h & 1 ? -value : value);
      }
    });
    counter.reset();
    let norm = 0;
    for (let i = 0; i < dimension; i++) norm += (block[i] as number) ** 2;
    if (norm === 0) return false;
    const scale = weight / Math.sqrt(norm);
    const sum = this.#sum;
    for (let i = 0; i < dimension; i++) sum[i] = (sum[i] as number) + (block[i] as number) * scale;
    return true;
  }
}

const EMPTY = new Uint32Array(0);

function hasSurrogates(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return true;
  }
  return false;
}

/**
 * The words of `text` for character n-grams: the analyser module's tokens, normalised as the
 * default analyser normalises them (NFKC, lower case, Arabic spelling variants folded) but not
 * stemmed, so that n-grams see the word as written.
 */
export function normalizedWords(text: string): string[] {
  const tokens = tokenize(text);
  for (let i = 0; i < tokens.length; i++) {
    let token = tokens[i] as string;
    if (!isAscii(token)) {
      const folded = token.normalize('NFKC');
      // A few letters fold to a phrase (ﷺ); a word never contains a space.
      token = normalizeArabic((folded.includes(' ') ? token.normalize('NFC') : folded).toLowerCase());
    } else {
      token = token.toLowerCase();
    }
    tokens[i] = token;
  }
  return tokens;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}
