import type { FilterConvention } from '../filter/index.js';
import type { Chunk, Warning } from '../model/index.js';

/** The similarity a store ranks by. Scores are always similarities: higher is better. */
export type DistanceMetric = 'cosine' | 'dot' | 'l2';

/** What a backend can do; the core reads these and falls back (or refuses) accordingly. */
export interface VectorDatabaseCapabilities {
  /** The metric its scores come from. */
  metric: DistanceMetric;
  /** Data survives a restart of the process. */
  persistent: boolean;
  /** `delete` removes chunks. */
  deletion: boolean;
  /** Largest number of chunks one write call to the backend takes (the store splits batches itself). */
  maxBatchSize?: number;
  /** How a native distance becomes the similarity reported, for example `1 - d` for cosine distance. */
  scoreConversion: string;
}

export interface AddOptions {
  /** Precomputed vectors, one per chunk and in the same order; otherwise the store's embedder is used. */
  embeddings?: ReadonlyArray<Float32Array | readonly number[]>;
  signal?: AbortSignal;
  /** Called after each written batch. */
  onProgress?: (progress: { written: number; total: number }) => void;
}

export interface AddResult {
  /** Ids written (inserted or replaced), in input order. */
  ids: string[];
  warnings?: Warning[];
}

/** Options every backend's search takes; each backend adds its own native filter option. */
export interface VectorSearchOptions {
  /** How many nearest chunks to return (a positive integer). */
  topK: number;
  /** Hits with a lower similarity are left out. */
  scoreThreshold?: number;
  signal?: AbortSignal;
}

export interface VectorHit {
  chunk: Chunk;
  /** Similarity, higher is better; in [0, 1] for cosine. */
  score: number;
}

export interface VectorSearchResult {
  hits: VectorHit[];
  warnings?: Warning[];
}

/**
 * Version 1 of the backend contract that Chroma, FAISS, Pinecone, the in-memory store and any
 * contributed backend implement. `NativeOptions` is the backend's own filter option
 * (`{ where }`, `{ filter }`, `{ docIdFilter }`, ...), named by its `filterConvention`.
 */
export interface VectorDatabase<NativeOptions extends object = Record<string, unknown>> {
  readonly specificationVersion: 'v1';
  readonly name: string;
  readonly capabilities: VectorDatabaseCapabilities;
  /** How it takes metadata filters; absent means every filter is evaluated client-side. */
  readonly filterConvention?: FilterConvention;
  /** Vector dimension, once known. */
  readonly dimension?: number;
  /** Inserts or replaces (upserts) chunks by id. Validates the whole batch before the first write. */
  add(chunks: readonly Chunk[], options?: AddOptions): Promise<AddResult>;
  /** Nearest chunks to a query text (embedded by the store's embedder) or a query vector. */
  search(
    query: string | Float32Array | readonly number[],
    options: VectorSearchOptions & Partial<NativeOptions>,
  ): Promise<VectorSearchResult>;
  /** Removes chunks by id; returns how many existed. */
  delete(ids: readonly string[], options?: { signal?: AbortSignal }): Promise<number>;
  count(options?: { signal?: AbortSignal }): Promise<number>;
  close?(): Promise<void>;
}
