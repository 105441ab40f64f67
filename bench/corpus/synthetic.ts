/**
 * A deterministic synthetic corpus for speed measurements at scale: a Zipf-distributed
 * vocabulary of pronounceable pseudo-words, documents of 50 to 300 tokens, and queries of
 * 2 to 6 terms drawn from the same distribution (so head terms match most documents, as
 * common words do in real text). Everything follows from the seed.
 */

/** mulberry32: a small, fast, seeded 32-bit PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ONSETS = [
  'b',
  'd',
  'f',
  'g',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'z',
  'ch',
  'sh',
  'th',
  'br',
  'tr',
  '',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou'];
const CODAS = ['', '', '', 'n', 'r', 's', 'l', 'm', 'k'];

/**
 * `size` distinct pronounceable lower-case words (letters a to z only), most frequent first:
 * like natural language, the head of the vocabulary is short (one syllable) and the tail long.
 */
export function createVocabulary(size: number, seed = 1): string[] {
  const random = mulberry32(seed);
  const pick = (list: readonly string[]) => list[Math.floor(random() * list.length)] as string;
  const words: string[] = [];
  const seen = new Set<string>();
  let attempts = 0;
  while (words.length < size) {
    const rank = words.length;
    // Syllables grow with rank; after many collisions at a length, allow one more syllable.
    const base = rank < 60 ? 1 : rank < 3_000 ? 2 : rank < 30_000 ? 3 : 4;
    const syllables = base + (attempts > 50 ? 1 : 0);
    let word = '';
    for (let s = 0; s < syllables; s++) word += pick(ONSETS) + pick(VOWELS) + pick(CODAS);
    if (word.length < 2 || seen.has(word)) {
      attempts++;
      continue;
    }
    attempts = 0;
    seen.add(word);
    words.push(word);
  }
  return words;
}

/**
 * Samples ranks 0..n-1 with probability proportional to 1 / (rank + 1)^exponent, in O(1) per
 * sample (Walker's alias method, built in O(n)).
 */
export class ZipfSampler {
  private readonly probability: Float64Array;
  private readonly alias: Uint32Array;

  constructor(
    readonly size: number,
    readonly exponent: number,
  ) {
    const weights = new Float64Array(size);
    let total = 0;
    for (let i = 0; i < size; i++) {
      const w = 1 / (i + 1) ** exponent;
      weights[i] = w;
      total += w;
    }
    this.probability = new Float64Array(size);
    this.alias = new Uint32Array(size);
    const scaled = new Float64Array(size);
    const small: number[] = [];
    const large: number[] = [];
    for (let i = 0; i < size; i++) {
      const value = ((weights[i] as number) * size) / total;
      scaled[i] = value;
      (value < 1 ? small : large).push(i);
    }
    while (small.length > 0 && large.length > 0) {
      const s = small.pop() as number;
      const l = large.pop() as number;
      this.probability[s] = scaled[s] as number;
      this.alias[s] = l;
      const rest = (scaled[l] as number) + (scaled[s] as number) - 1;
      scaled[l] = rest;
      (rest < 1 ? small : large).push(l);
    }
    for (const i of large) this.probability[i] = 1;
    for (const i of small) this.probability[i] = 1;
  }

  /** One rank, given a uniform source. */
  sample(random: () => number): number {
    const u = random() * this.size;
    const column = Math.floor(u);
    return u - column < (this.probability[column] as number) ? column : (this.alias[column] as number);
  }
}

export interface SyntheticOptions {
  /** Seed of everything (default 42). */
  seed?: number;
  /** Distinct words (default 50,000). */
  vocabularySize?: number;
  /** Zipf exponent (default 1.0). */
  exponent?: number;
  /** Tokens per document, inclusive range (default 50 to 300). */
  minTokens?: number;
  maxTokens?: number;
}

export interface SyntheticDocument {
  id: string;
  text: string;
}

/**
 * Seed of the suites' warm-up queries: drawn like the timed ones (whose seed is `queries`'s
 * default, 7), but other queries, so that no timed query has run before it is timed.
 */
export const WARMUP_QUERY_SEED = 8;

/** A vocabulary and its Zipf distribution, from which documents and queries are drawn. */
export class SyntheticCorpus {
  readonly seed: number;
  readonly vocabulary: readonly string[];
  readonly sampler: ZipfSampler;
  readonly minTokens: number;
  readonly maxTokens: number;

  constructor(options: SyntheticOptions = {}) {
    this.seed = options.seed ?? 42;
    const size = options.vocabularySize ?? 50_000;
    this.vocabulary = createVocabulary(size, this.seed);
    this.sampler = new ZipfSampler(size, options.exponent ?? 1.0);
    this.minTokens = options.minTokens ?? 50;
    this.maxTokens = options.maxTokens ?? 300;
    if (this.minTokens < 1 || this.maxTokens < this.minTokens) throw new RangeError('bad token range');
  }

  /**
   * `count` documents with ids `doc-0` ... (space-separated words). Document i is the same
   * for every count, so a smaller corpus is a prefix of a larger one.
   */
  documents(count: number): SyntheticDocument[] {
    const documents = new Array<SyntheticDocument>(count);
    const span = this.maxTokens - this.minTokens + 1;
    const tokens: string[] = [];
    for (let i = 0; i < count; i++) {
      const random = mulberry32((this.seed * 0x9e3779b1) ^ (i + 1));
      const length = this.minTokens + Math.floor(random() * span);
      tokens.length = length;
      for (let t = 0; t < length; t++) tokens[t] = this.vocabulary[this.sampler.sample(random)] as string;
      documents[i] = { id: `doc-${i}`, text: tokens.join(' ') };
    }
    return documents;
  }

  /** `count` queries of `minTerms` to `maxTerms` distinct words from the same distribution. */
  queries(count: number, { seed = 7, minTerms = 2, maxTerms = 6 } = {}): string[] {
    const random = mulberry32(this.seed ^ (seed * 0x85ebca6b));
    const queries: string[] = [];
    for (let q = 0; q < count; q++) {
      const length = minTerms + Math.floor(random() * (maxTerms - minTerms + 1));
      const terms = new Set<string>();
      while (terms.size < length) terms.add(this.vocabulary[this.sampler.sample(random)] as string);
      queries.push([...terms].join(' '));
    }
    return queries;
  }
}
