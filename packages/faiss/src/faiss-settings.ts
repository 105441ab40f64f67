import { type DistanceMetric, type Embedder, InvalidArgumentError } from '@zerda/core';
import { checkPositiveIntegers } from '@zerda/core/backend';
import type { FaissModule } from './faiss-module.js';

export type FaissIndexType = 'flat' | 'hnsw';

/** HNSW graph parameters (FAISS's names). The defaults are `HNSW_DEFAULTS`. */
export interface FaissHnswSettings {
  /** Neighbours per node (FAISS's M; 2M on the bottom layer). Default 32. Fixed once built. */
  m?: number;
  /** Breadth of the search while inserting: higher builds slower and better. Default 160. */
  efConstruction?: number;
  /** Breadth of a search: higher is slower and finds more of the true neighbours. Default 64. */
  efSearch?: number;
}

/**
 * The HNSW defaults, from the bench sweep (`ZERDA_BENCH_FAISS_SWEEP=1 pnpm bench --suite
 * faiss-sweep`, 100,000 x 384 clustered vectors): recall@10 1.0 there against 0.93 for the
 * earlier efConstruction 40, at the same search cost (efSearch 64). The graph's quality is what
 * recall needs: at efConstruction 40 even efSearch 256 reached only 0.95. efSearch 16 reaches 0.96
 * on those vectors in 0.6x the time, but only 0.8 on less clustered ones (this package's tests),
 * below the earlier default; efSearch 64 is at or above it on every set measured.
 */
export const HNSW_DEFAULTS = Object.freeze({ m: 32, efConstruction: 160, efSearch: 64 });

export interface FaissStoreSettings {
  /** Embeds chunk texts on `add` (when no `embeddings` are given) and query texts on `search`. */
  embedder?: Embedder;
  /** Vector dimension. Default: the embedder's, else the length of the first vectors added. */
  dimension?: number;
  /**
   * Similarity (default 'cosine'). 'cosine': vectors are scaled to unit length and searched by
   * inner product; 'dot': inner product of the vectors as given; 'l2': `1 / (1 + d)` for the
   * Euclidean distance d (FAISS returns d², converted by core).
   */
  metric?: DistanceMetric;
  /**
   * 'flat' (default): exact search (FAISS IndexFlatIP, or IndexFlatL2 for 'l2'). 'hnsw': an
   * approximate HNSW graph over the same vectors (FAISS IndexHNSWFlat), faster on large stores.
   */
  indexType?: FaissIndexType;
  /** HNSW parameters (index type 'hnsw' only). */
  hnsw?: FaissHnswSettings;
  /**
   * HNSW cannot remove vectors: deleted and replaced chunks stay in the graph, hidden from search,
   * until it is rebuilt without them: when they pass this share of the index (default 0.25), or on `compact()`.
   */
  compactRatio?: number;
  /** Refuse (FilterError) a `filter` FAISS cannot evaluate whole instead of evaluating the rest here. */
  strictFilters?: boolean;
  /** The faiss-node module to use (default: `import('faiss-node')` on first use). */
  client?: FaissModule;
}

/** What shapes the FAISS index, checked and with the defaults filled in. */
export interface FaissIndexSettings {
  readonly metric: DistanceMetric;
  readonly indexType: FaissIndexType;
  readonly hnsw: { readonly m: number; readonly efConstruction: number; readonly efSearch: number };
  readonly compactRatio: number;
}

/** The index settings of `settings`; an InvalidArgumentError names the first that is wrong. */
export function resolveIndexSettings(settings: FaissStoreSettings): FaissIndexSettings {
  const { metric = 'cosine', indexType = 'flat', hnsw, compactRatio = 0.25 } = settings;
  const refuse = (argument: string, value: unknown, message: string): never => {
    throw new InvalidArgumentError({ argument, value, message });
  };
  if (metric !== 'cosine' && metric !== 'dot' && metric !== 'l2')
    refuse('metric', metric, "expected 'cosine', 'dot' or 'l2'");
  if (indexType !== 'flat' && indexType !== 'hnsw')
    refuse('indexType', indexType, "expected 'flat' or 'hnsw'");
  if (hnsw !== undefined && indexType !== 'hnsw') refuse('hnsw', hnsw, "applies to indexType 'hnsw' only");
  const resolved: { m: number; efConstruction: number; efSearch: number } = { ...HNSW_DEFAULTS };
  for (const name of ['m', 'efConstruction', 'efSearch'] as const) {
    const value = hnsw?.[name] === undefined ? HNSW_DEFAULTS[name] : hnsw[name];
    checkPositiveIntegers({ [`hnsw.${name}`]: value });
    // FAISS allocates per unit of these; a larger value is a mistake, not a setting.
    if (value > 1_000_000) refuse(`hnsw.${name}`, value, 'expected at most 1,000,000');
    resolved[name] = value;
  }
  if (!(compactRatio > 0 && compactRatio <= 1))
    refuse('compactRatio', compactRatio, 'expected a number in (0, 1]');
  return { metric, indexType, hnsw: resolved, compactRatio };
}
