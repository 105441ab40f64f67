import { FusionConfigError } from '../errors/index.js';
import { DEFAULT_WEAK_BRANCH_GUARD, type WeakBranchGuard } from './candidate-pool.js';
import type { ScoreCombination, ScoreNormalization } from './types.js';

/** How branch rankings become one: normalised weighted scores, reciprocal ranks, or both. */
export type FusionMethod = 'weighted' | 'rrf' | 'weighted+rrf';

export const FUSION_METHODS: readonly FusionMethod[] = ['weighted', 'rrf', 'weighted+rrf'];
export const FUSION_NORMALIZATIONS: readonly ScoreNormalization[] = [
  'minmax',
  'theoretical-minmax',
  'zscore',
  'dbsf',
  'none',
];
export const FUSION_COMBINATIONS: readonly ScoreCombination[] = ['arithmetic', 'geometric', 'harmonic'];

/** The version of the fusion setting format this code reads and writes. */
export const FUSION_CONFIG_VERSION = 1;

/**
 * A fusion setting: a small versioned JSON object that `zerda tune` writes and every hybrid entry
 * point reads (`new HybridRetriever({ fusion })`, `zerda eval --fusion-config`). Every key but
 * `version` and `method` is optional; absent keys take the defaults of `DEFAULT_FUSION_CONFIG`.
 */
export interface FusionConfig {
  version: 1;
  method: FusionMethod;
  /** Per-branch score normalisation for the weighted methods. */
  normalization?: ScoreNormalization;
  combination?: ScoreCombination;
  /** Weights by branch name (finite, >= 0); a branch not named keeps its own (1, metadata 0.5). */
  weights?: Record<string, number>;
  /** RRF's k (finite, >= 0). */
  rrfK?: number;
  /** In 'weighted+rrf', how much the RRF bonus (scaled to [0, 1]) adds to the weighted score. */
  rrfBonusWeight?: number;
  /**
   * Candidates each branch fetches, whatever k is (at least k). Absent: twice k. A fixed depth
   * makes the hits for k the first k hits for any larger k up to the depth.
   */
  depth?: number;
  /** The lowest score of each branch's metric, for `theoretical-minmax` (overrides the retriever's). */
  lowerBounds?: Record<string, number>;
  /**
   * The weak-branch guard of the weighted methods: on (default), off, or on with settings. It lowers
   * a branch's weight in the weighted score only; 'rrf' takes none (naming one there is an error),
   * and in 'weighted+rrf' the RRF bonus keeps the given weights.
   */
  guard?: boolean | Partial<WeakBranchGuard>;
  /** BM25 settings the fusion was tuned with (read by `zerda eval`; a built index keeps its own). */
  bm25?: { k1: number; b: number };
  /** Free text: where the setting comes from. */
  description?: string;
}

/** A fusion setting with every default filled in. */
export interface ResolvedFusionConfig {
  method: FusionMethod;
  normalization: ScoreNormalization;
  combination: ScoreCombination;
  weights: Record<string, number>;
  rrfK: number;
  rrfBonusWeight: number;
  depth: number | undefined;
  lowerBounds: Record<string, number>;
  guard: WeakBranchGuard | false;
}

/**
 * The default fusion of `HybridRetriever`, chosen from measurements on CISI and Cranfield with
 * the hash embedder (README, "Fusion"): a convex combination of min-max normalised scores, each
 * branch with its own weight (1; metadata 0.5), with the weak-branch guard on. It was the only family that kept hybrid at or above
 * keyword alone on both collections; theoretical min-max, with cosine's -1 as the floor, lifts
 * the hash embedder's flat cosine scores too close to the best and lost recall there.
 */
export const DEFAULT_FUSION_CONFIG: Readonly<FusionConfig> = Object.freeze({
  version: 1,
  method: 'weighted',
  normalization: 'minmax',
  combination: 'arithmetic',
  rrfK: 60,
  rrfBonusWeight: 0.5,
  guard: true,
});

const keys = new Set([
  'version',
  'method',
  'normalization',
  'combination',
  'weights',
  'rrfK',
  'rrfBonusWeight',
  'depth',
  'lowerBounds',
  'guard',
  'bm25',
  'description',
]);
const guardKeys = new Set(['topN', 'minSpread', 'floor']);

/**
 * Checks a fusion setting (parsed JSON or a JSON string) and returns it typed. Another version,
 * an unknown key, a wrong type, a negative or non-finite weight: a `FusionConfigError` naming
 * the key. `path` is named in messages when the setting comes from a file.
 */
export function parseFusionConfig(input: unknown, options: { path?: string } = {}): FusionConfig {
  const path = options.path;
  const fail = (key: string, value: unknown, message: string, cause?: unknown): never => {
    throw new FusionConfigError({ key, value, message, path, cause });
  };
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (error) {
      fail('', input, `not valid JSON (${error instanceof Error ? error.message : String(error)})`, error);
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return fail('', value, 'expected a JSON object { "version": 1, "method": ... }');
  }
  const object = value as Record<string, unknown>;
  if (!('version' in object)) fail('version', undefined, `missing; this is version ${FUSION_CONFIG_VERSION}`);
  if (object.version !== FUSION_CONFIG_VERSION) {
    fail(
      'version',
      object.version,
      `version ${JSON.stringify(object.version)} is not supported; this Zerda reads version ${FUSION_CONFIG_VERSION}`,
    );
  }
  for (const key of Object.keys(object)) {
    if (!keys.has(key)) fail(key, object[key], `unknown key; expected one of ${[...keys].join(', ')}`);
  }
  const config: FusionConfig = { version: 1, method: 'weighted' };
  const choice = <T extends string>(key: string, allowed: readonly T[]): T | undefined => {
    const v = object[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !allowed.includes(v as T)) {
      fail(key, v, `expected one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${JSON.stringify(v)}`);
    }
    return v as T;
  };
  const method = choice('method', FUSION_METHODS);
  if (method === undefined)
    fail('method', undefined, `missing; expected one of ${FUSION_METHODS.join(', ')}`);
  config.method = method as FusionMethod;
  const normalization = choice('normalization', FUSION_NORMALIZATIONS);
  if (normalization !== undefined) config.normalization = normalization;
  const combination = choice('combination', FUSION_COMBINATIONS);
  if (combination !== undefined) config.combination = combination;
  const number = (key: string, v: unknown, min: number, integer = false): number => {
    if (typeof v !== 'number' || !Number.isFinite(v))
      return fail(key, v, `expected a finite number, got ${JSON.stringify(v)}`);
    if (v < min) fail(key, v, `must be >= ${min}, got ${v}`);
    if (integer && !Number.isInteger(v)) fail(key, v, `must be an integer, got ${v}`);
    return v;
  };
  const record = (key: string, min: number): Record<string, number> | undefined => {
    const v = object[key];
    if (v === undefined) return undefined;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      return fail(
        key,
        v,
        'expected an object of numbers by branch name, for example { "keyword": 0.7, "vector": 0.3 }',
      );
    }
    const out: Record<string, number> = {};
    for (const [name, entry] of Object.entries(v)) out[name] = number(`${key}.${name}`, entry, min);
    return out;
  };
  const weights = record('weights', 0);
  if (weights !== undefined) config.weights = weights;
  const lowerBounds = record('lowerBounds', Number.NEGATIVE_INFINITY);
  if (lowerBounds !== undefined) config.lowerBounds = lowerBounds;
  if (object.rrfK !== undefined) config.rrfK = number('rrfK', object.rrfK, 0);
  if (object.rrfBonusWeight !== undefined)
    config.rrfBonusWeight = number('rrfBonusWeight', object.rrfBonusWeight, 0);
  if (object.depth !== undefined) config.depth = number('depth', object.depth, 1, true);
  const guard = object.guard;
  if (guard !== undefined) {
    if (typeof guard === 'boolean') config.guard = guard;
    else if (guard === null || typeof guard !== 'object' || Array.isArray(guard)) {
      fail('guard', guard, 'expected true, false or an object { "topN", "minSpread", "floor" }');
    } else {
      const settings: Partial<WeakBranchGuard> = {};
      for (const [key, entry] of Object.entries(guard)) {
        if (!guardKeys.has(key))
          fail(`guard.${key}`, entry, `unknown key; expected one of ${[...guardKeys].join(', ')}`);
        if (key === 'topN') settings.topN = number('guard.topN', entry, 2, true);
        if (key === 'minSpread') settings.minSpread = number('guard.minSpread', entry, 0);
        if (key === 'floor') {
          settings.floor = number('guard.floor', entry, 0);
          if (settings.floor > 1) fail('guard.floor', entry, `must be <= 1, got ${settings.floor}`);
        }
      }
      config.guard = settings;
    }
    // RRF is Σ w / (k + rank) exactly: a guard there would make it something else.
    if (config.method === 'rrf' && config.guard !== false) {
      fail(
        'guard',
        guard,
        `the weak-branch guard scales the weights of normalised scores and method "rrf" has none; remove "guard" (or set it to false), or use method "weighted" or "weighted+rrf"`,
      );
    }
  }
  const bm25 = object.bm25;
  if (bm25 !== undefined) {
    if (bm25 === null || typeof bm25 !== 'object' || Array.isArray(bm25))
      fail('bm25', bm25, 'expected { "k1": number, "b": number }');
    const { k1, b, ...rest } = bm25 as Record<string, unknown>;
    for (const key of Object.keys(rest)) fail(`bm25.${key}`, rest[key], 'unknown key; expected k1, b');
    config.bm25 = { k1: number('bm25.k1', k1, 0), b: number('bm25.b', b, 0) };
    if (config.bm25.b > 1) fail('bm25.b', b, `must be <= 1, got ${config.bm25.b}`);
  }
  if (object.description !== undefined) {
    if (typeof object.description !== 'string') fail('description', object.description, 'expected a string');
    config.description = object.description as string;
  }
  return config;
}

/** Fills in the defaults of a (checked) fusion setting. */
export function resolveFusionConfig(config: FusionConfig): ResolvedFusionConfig {
  const guard =
    config.guard === false || config.method === 'rrf'
      ? false
      : {
          ...DEFAULT_WEAK_BRANCH_GUARD,
          ...(config.guard === true || config.guard === undefined ? {} : config.guard),
        };
  return {
    method: config.method,
    normalization: config.normalization ?? (DEFAULT_FUSION_CONFIG.normalization as ScoreNormalization),
    combination: config.combination ?? 'arithmetic',
    weights: { ...(config.weights ?? {}) },
    rrfK: config.rrfK ?? 60,
    rrfBonusWeight: config.rrfBonusWeight ?? 0.5,
    depth: config.depth,
    lowerBounds: { ...(config.lowerBounds ?? {}) },
    guard,
  };
}
