import { InvalidArgumentError } from '../errors/index.js';
import { type Analyzer, defaultAnalyzer } from '../text/index.js';

/** A set of analysed terms as sorted, distinct term ids (shared by every set of one batch). */
export type TermSet = Int32Array;

/** How duplicate pairs are found: every pair, MinHash with LSH, or by candidate count. */
export type NearDuplicateMethod = 'exact' | 'minhash' | 'auto';

/**
 * How signatures are computed. 'one-permutation' (default): one hash per term, spread over
 * bands x rows bins, each bin keeping its minimum, empty bins filled by optimal densification
 * (Shrivastava, ICML 2017): O(terms + bins) per text. 'k-permutation': the classic scheme, bands
 * x rows independent hash functions each minimised over every term: O(terms x bins). Both give
 * bins that agree with probability equal to the Jaccard similarity.
 */
export type MinHashScheme = 'one-permutation' | 'k-permutation';

export interface MinHashOptions {
  /** LSH bands (default 20). */
  bands?: number;
  /** Rows (signature values) per band (default 6); bands x rows values in all. */
  rows?: number;
  /** Seed of the hash functions (default 0x5eed), so runs are reproducible. */
  seed?: number;
  /** Default 'one-permutation'. */
  scheme?: MinHashScheme;
}

export interface NearDuplicateOptions {
  /** Two texts are near-duplicates when the Jaccard similarity of their term sets is >= this (default 0.85). */
  threshold?: number;
  /** Default 'auto': exact below `minHashAbove` candidates, MinHash from there on. */
  method?: NearDuplicateMethod;
  /** Candidate count from which 'auto' uses MinHash (default 200). */
  minHashAbove?: number;
  minHash?: MinHashOptions;
  /** Turns texts into terms (default: the shared `defaultAnalyzer`). */
  analyzer?: Analyzer;
}

/** A near-duplicate pair: indexes `a < b` into the input, and their exact Jaccard similarity. */
export interface DuplicatePair {
  a: number;
  b: number;
  similarity: number;
}

export const DEFAULT_DUPLICATE_THRESHOLD = 0.85;
export const DEFAULT_MINHASH_ABOVE = 200;
const DEFAULT_BANDS = 20;
const DEFAULT_ROWS = 6;
const DEFAULT_SEED = 0x5eed;
/** Slack for floating-point comparisons with the threshold. */
const EPSILON = 1e-9;

/**
 * The analysed word set of each text, as sorted distinct term ids. Ids are assigned per call,
 * so only sets from the same call may be compared.
 */
export function buildTermSets(texts: readonly string[], analyzer: Analyzer = defaultAnalyzer): TermSet[] {
  const ids = new Map<string, number>();
  return texts.map((text) => {
    const seen = new Set<number>();
    for (const term of analyzer.analyze(text)) {
      let id = ids.get(term);
      if (id === undefined) {
        id = ids.size;
        ids.set(term, id);
      }
      seen.add(id);
    }
    return Int32Array.from(seen).sort();
  });
}

/** Jaccard similarity |A ∩ B| / |A ∪ B| of two term sets; 0 when both are empty. */
export function jaccard(a: TermSet, b: TermSet): number {
  if (a.length === 0 && b.length === 0) return 0;
  const shared = intersectionSize(a, b);
  return shared / (a.length + b.length - shared);
}

function intersectionSize(a: TermSet, b: TermSet): number {
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (x === y) {
      shared++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return shared;
}

/**
 * The Jaccard similarity of a and b when it is >= threshold, else -1. Stops as soon as the
 * intersection can no longer reach the size the threshold demands.
 */
function similarityAtLeast(a: TermSet, b: TermSet, threshold: number): number {
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return -1;
  // J >= t  <=>  |A ∩ B| >= t (|A| + |B|) / (1 + t).
  const needed = (threshold * (la + lb)) / (1 + threshold) - EPSILON;
  if (Math.min(la, lb) < needed) return -1;
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < la && j < lb) {
    // Upper bound on the final intersection: what is shared so far plus what remains of the shorter side.
    if (shared + Math.min(la - i, lb - j) < needed) return -1;
    const x = a[i] as number;
    const y = b[j] as number;
    if (x === y) {
      shared++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  if (shared < needed) return -1;
  return shared / (la + lb - shared);
}

/**
 * Every pair with Jaccard >= threshold, by exhaustive comparison. Pairs whose sizes alone rule
 * them out (J <= min/max) are skipped without being compared, which gives the same answer.
 */
export function findDuplicatePairsExact(
  sets: readonly TermSet[],
  threshold = DEFAULT_DUPLICATE_THRESHOLD,
): DuplicatePair[] {
  checkThreshold(threshold);
  const order = sets
    .map((set, index) => ({ index, size: set.length }))
    .filter((entry) => entry.size > 0)
    .sort((x, y) => x.size - y.size || x.index - y.index);
  const pairs: DuplicatePair[] = [];
  for (let p = 0; p < order.length; p++) {
    const { index: i, size } = order[p] as { index: number; size: number };
    const maxSize = size / threshold + EPSILON;
    const a = sets[i] as TermSet;
    for (let q = p + 1; q < order.length; q++) {
      const other = order[q] as { index: number; size: number };
      if (other.size > maxSize) break;
      const similarity = similarityAtLeast(a, sets[other.index] as TermSet, threshold);
      if (similarity >= 0) pairs.push(orderedPair(i, other.index, similarity));
    }
  }
  return sortPairs(pairs);
}

/**
 * Pairs with Jaccard >= threshold found through MinHash signatures and locality-sensitive
 * hashing: texts whose signatures agree on every row of some band become candidates, and each
 * candidate is then checked exactly, so every pair returned is a true near-duplicate (no false
 * positives); a true pair is missed only when no band agrees, with probability
 * (1 - J^rows)^bands (about 1e-4 at J = 0.85 with the default 20 bands of 6 rows).
 */
export function findDuplicatePairsMinHash(
  sets: readonly TermSet[],
  threshold = DEFAULT_DUPLICATE_THRESHOLD,
  options: MinHashOptions = {},
): DuplicatePair[] {
  checkThreshold(threshold);
  const bands = positiveInteger(options.bands ?? DEFAULT_BANDS, 'minHash.bands');
  const rows = positiveInteger(options.rows ?? DEFAULT_ROWS, 'minHash.rows');
  const scheme = options.scheme ?? 'one-permutation';
  if (scheme !== 'one-permutation' && scheme !== 'k-permutation') {
    throw new InvalidArgumentError({
      argument: 'minHash.scheme',
      value: scheme,
      message: "expected 'one-permutation' or 'k-permutation'",
    });
  }
  const seed = options.seed ?? DEFAULT_SEED;
  const signatures =
    scheme === 'one-permutation'
      ? onePermutationSignatures(sets, bands * rows, seed)
      : minHashSignatures(sets, bands * rows, seed);
  const hashes = bands * rows;
  const n = sets.length;
  const seen = new Set<number>();
  const pairs: DuplicatePair[] = [];
  const buckets = new Map<number, number[]>();
  for (let band = 0; band < bands; band++) {
    buckets.clear();
    for (let i = 0; i < n; i++) {
      if ((sets[i] as TermSet).length === 0) continue;
      let key = band * 0x9e3779b1;
      const offset = i * hashes + band * rows;
      for (let r = 0; r < rows; r++) key = fmix32((key ^ (signatures[offset + r] as number)) + r);
      const bucket = buckets.get(key);
      if (bucket === undefined) {
        buckets.set(key, [i]);
        continue;
      }
      for (const j of bucket) {
        const pairKey = j * n + i;
        if (seen.has(pairKey)) continue;
        seen.add(pairKey);
        const a = sets[j] as TermSet;
        const b = sets[i] as TermSet;
        const small = Math.min(a.length, b.length);
        const large = Math.max(a.length, b.length);
        if (small < threshold * large - EPSILON) continue;
        const similarity = similarityAtLeast(a, b, threshold);
        if (similarity >= 0) pairs.push(orderedPair(j, i, similarity));
      }
      bucket.push(i);
    }
  }
  return sortPairs(pairs);
}

/**
 * One-permutation MinHash signatures with optimal densification: `bins` values per set,
 * row-major. Each term is hashed once; its hash picks a bin and competes for that bin's minimum.
 * An empty bin copies the value of the first non-empty bin in a probe sequence that depends only
 * on the bin's index and the seed, so two sets with the same non-empty bins fill alike.
 */
export function onePermutationSignatures(
  sets: readonly TermSet[],
  bins: number,
  seed = DEFAULT_SEED,
): Uint32Array {
  const signatures = new Uint32Array(sets.length * bins).fill(0xffffffff);
  const filled = new Uint8Array(bins);
  const values = new Uint32Array(bins);
  for (let i = 0; i < sets.length; i++) {
    const set = sets[i] as TermSet;
    if (set.length === 0) continue;
    filled.fill(0);
    values.fill(0xffffffff);
    for (let t = 0; t < set.length; t++) {
      const h = fmix32(((set[t] as number) + 0x9e3779b9) ^ seed) >>> 0;
      // The high bits choose the bin (a multiply-shift range reduction); the whole hash competes.
      const bin = Math.floor((h / 4294967296) * bins);
      filled[bin] = 1;
      if (h < (values[bin] as number)) values[bin] = h;
    }
    const offset = i * bins;
    for (let bin = 0; bin < bins; bin++) {
      if (filled[bin]) {
        signatures[offset + bin] = values[bin] as number;
        continue;
      }
      for (let attempt = 1; ; attempt++) {
        const probe = Math.floor(
          ((fmix32(bin * 0x85ebca6b + attempt * 0xc2b2ae35 + seed) >>> 0) / 4294967296) * bins,
        );
        if (filled[probe]) {
          signatures[offset + bin] = values[probe] as number;
          break;
        }
      }
    }
  }
  return signatures;
}

/** Classic MinHash signatures: `count` independent hash functions, minimised, row-major (set i at `i * count`). */
export function minHashSignatures(sets: readonly TermSet[], count: number, seed = DEFAULT_SEED): Uint32Array {
  // h_k(x) = (a_k * mix(x) + b_k) mod 2^32 with odd a_k: a bijection of 32-bit values per k.
  const multipliers = new Int32Array(count);
  const offsets = new Int32Array(count);
  let state = seed | 0;
  for (let k = 0; k < count; k++) {
    state = fmix32(state + 0x6d2b79f5);
    multipliers[k] = state | 1;
    state = fmix32(state + 0x6d2b79f5);
    offsets[k] = state;
  }
  const signatures = new Uint32Array(sets.length * count).fill(0xffffffff);
  const mins = new Uint32Array(count);
  for (let i = 0; i < sets.length; i++) {
    const set = sets[i] as TermSet;
    if (set.length === 0) continue;
    mins.fill(0xffffffff);
    for (let t = 0; t < set.length; t++) {
      const x = fmix32((set[t] as number) ^ seed);
      for (let k = 0; k < count; k++) {
        const h = (Math.imul(multipliers[k] as number, x) + (offsets[k] as number)) >>> 0;
        if (h < (mins[k] as number)) mins[k] = h;
      }
    }
    signatures.set(mins, i * count);
  }
  return signatures;
}

/** Murmur3's 32-bit finaliser. */
function fmix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

export interface NearDuplicateResult<T> {
  /** The items kept, in input order. */
  kept: T[];
  /** Each removed item with the kept item it duplicates and their similarity. */
  removed: Array<{ item: T; duplicateOf: T; similarity: number }>;
  /** The method that was used ('exact' or 'minhash'). */
  method: 'exact' | 'minhash';
  /** Every near-duplicate pair found (indexes into the input). */
  pairs: DuplicatePair[];
}

/**
 * Removes near-duplicates from items given best first: an item is dropped when it is a
 * near-duplicate of an earlier item that was kept, so of each duplicate group the best copy stays.
 */
export function removeNearDuplicates<T>(
  items: readonly T[],
  textOf: (item: T) => string,
  options: NearDuplicateOptions = {},
): NearDuplicateResult<T> {
  const { pairs, method } = findNearDuplicates(
    items.map((item) => textOf(item)),
    options,
  );
  const partners = new Map<number, Array<{ other: number; similarity: number }>>();
  for (const { a, b, similarity } of pairs) {
    const list = partners.get(b) ?? [];
    list.push({ other: a, similarity });
    partners.set(b, list);
  }
  const keptIndexes = new Set<number>();
  const kept: T[] = [];
  const removed: NearDuplicateResult<T>['removed'] = [];
  items.forEach((item, index) => {
    // Partners of `index` with a smaller index come earlier: the first kept one absorbs it.
    const earlier = (partners.get(index) ?? [])
      .filter((p) => keptIndexes.has(p.other))
      .sort((x, y) => y.similarity - x.similarity || x.other - y.other)[0];
    if (earlier === undefined) {
      keptIndexes.add(index);
      kept.push(item);
    } else {
      removed.push({ item, duplicateOf: items[earlier.other] as T, similarity: earlier.similarity });
    }
  });
  return { kept, removed, method, pairs };
}

/** The near-duplicate pairs among texts (indexes a < b), with the method used. */
export function findNearDuplicates(
  texts: readonly string[],
  options: NearDuplicateOptions = {},
): { pairs: DuplicatePair[]; method: 'exact' | 'minhash' } {
  const threshold = options.threshold ?? DEFAULT_DUPLICATE_THRESHOLD;
  checkThreshold(threshold);
  const method = chooseMethod(texts.length, options);
  const sets = buildTermSets(texts, options.analyzer);
  const pairs =
    method === 'exact'
      ? findDuplicatePairsExact(sets, threshold)
      : findDuplicatePairsMinHash(sets, threshold, options.minHash);
  return { pairs, method };
}

function chooseMethod(count: number, options: NearDuplicateOptions): 'exact' | 'minhash' {
  const method = options.method ?? 'auto';
  if (method === 'exact' || method === 'minhash') return method;
  if (method !== 'auto') {
    throw new InvalidArgumentError({
      argument: 'method',
      value: method,
      message: "expected 'exact', 'minhash' or 'auto'",
    });
  }
  const above = options.minHashAbove ?? DEFAULT_MINHASH_ABOVE;
  return count >= above ? 'minhash' : 'exact';
}

function orderedPair(i: number, j: number, similarity: number): DuplicatePair {
  return i < j ? { a: i, b: j, similarity } : { a: j, b: i, similarity };
}

function sortPairs(pairs: DuplicatePair[]): DuplicatePair[] {
  return pairs.sort((x, y) => x.a - y.a || x.b - y.b);
}

export function checkThreshold(threshold: number, argument = 'threshold'): void {
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1)) {
    throw new InvalidArgumentError({ argument, value: threshold, message: 'must be a number in (0, 1]' });
  }
}

function positiveInteger(value: number, argument: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError({ argument, value, message: 'must be a positive integer' });
  }
  return value;
}
