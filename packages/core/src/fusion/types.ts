/** One entry of a ranked list. Identity is the id, never the text. */
export interface RankedItem {
  id: string;
  /** The list's own score (any scale); required by score fusion, optional for RRF. */
  score?: number;
}

/**
 * A ranked list of results, best first: an item's rank is its position + 1. A duplicate id
 * counts once, at its first (best) position, and does not take up a rank.
 */
export interface RankedList {
  /** Shown in contributions; the list's index is used where absent. */
  name?: string;
  /** Weight of this list (default 1), unless the call's `weights` option is given. */
  weight?: number;
  /**
   * The lowest score the list's metric can give (0 for BM25, -1 for cosine similarity, 0 for
   * `1 / (1 + d)`), for `theoretical-minmax` normalisation; without it that normalisation uses
   * the list's own minimum, as `minmax` does.
   */
  lowerBound?: number;
  items: readonly RankedItem[];
}

/** How one list took part in an item's fused score. */
export interface Contribution {
  /** The list's name, or its index in the input where it has none. */
  list: string | number;
  /** 1-based rank of the item in that list (duplicates removed). */
  rank: number;
  /** The list's own score for the item, where it had one. */
  score?: number;
  /** The score after the list's normalisation (score fusion only). */
  normalized?: number;
  /**
   * The list's part of the fused score. For RRF and the arithmetic combination the
   * contributions add up to the score; for the geometric and harmonic means they are the
   * weighted inputs `w_i / W * normalized` (whose sum, the arithmetic mean, bounds the score).
   */
  contribution: number;
}

/** One fused result. */
export interface FusedItem {
  id: string;
  score: number;
  /** One entry per list that found the item, in the order of the input lists. */
  contributions: Contribution[];
}

export interface RrfOptions {
  /** Smoothing constant: a finite number >= 0 (default 60). */
  k?: number;
  /** One weight per list (finite, >= 0); overrides each list's `weight`. */
  weights?: readonly number[];
}

/**
 * Per-list score normalisation:
 * - `minmax`: `(s - min) / (max - min)`, in [0, 1];
 * - `zscore`: `z = (s - μ) / σ` (population σ), mapped through the logistic function
 *   `1 / (1 + e^-z)` to (0, 1), so the list's mean maps to 0.5 and every combination works;
 * - `dbsf` (distribution-based): `(s - (μ - 3σ)) / (6σ)`, clipped to [0, 1];
 * - `theoretical-minmax`: `(s - lower) / (max - lower)` with `lower` the metric's minimum (the
 *   list's `lowerBound`: 0 for BM25, -1 for cosine) rather than the list's, which moves with how
 *   many candidates were fetched (Bruch, Gai and Ingber, "An Analysis of Fusion Functions for
 *   Hybrid Retrieval", 2023); an item's value then does not depend on the depth of the list;
 * - `none`: raw scores, for lists already on a common scale.
 * A list whose scores are all equal (a single item, for example) carries nothing beyond
 * membership: every normalisation but `none` and `theoretical-minmax` (above its lower bound)
 * maps each of its items to 1.
 */
export type ScoreNormalization = 'minmax' | 'theoretical-minmax' | 'zscore' | 'dbsf' | 'none';

/** How the normalised scores of the lists are combined (all weighted). */
export type ScoreCombination = 'arithmetic' | 'geometric' | 'harmonic';

/**
 * What an item absent from a list counts as:
 * - `zero`: 0 from that list. Arithmetic: `Σ w_i n_i / Σ_all w_i`, so items found by more
 *   lists win. Geometric and harmonic: the mean becomes 0 unless every list found the item.
 * - `ignore`: the mean is taken over the lists that found the item only.
 */
export type MissingPolicy = 'zero' | 'ignore';

export interface ScoreFusionOptions {
  /** Default `minmax`. */
  normalization?: ScoreNormalization;
  /** Default `arithmetic`. */
  combination?: ScoreCombination;
  /** One weight per list (finite, >= 0); overrides each list's `weight`. */
  weights?: readonly number[];
  /** Default `zero` for `arithmetic`, `ignore` for `geometric` and `harmonic`. */
  missing?: MissingPolicy;
}
