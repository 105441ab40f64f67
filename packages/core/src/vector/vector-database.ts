import type { FilterConvention, FilterInput, FilterNode, NativeFilter } from '../filter/index.js';
import type { Chunk, Warning } from '../model/index.js';
import type { DriverCapabilities, SparseVector, VectorDriver } from './driver.js';
import type { Embedder } from './embedder.js';

export type { DistanceMetric } from './driver.js';

export interface AddOptions {
  /** Precomputed vectors, one per chunk and in the same order; otherwise the store's embedder is used. */
  embeddings?: ReadonlyArray<Float32Array | readonly number[]>;
  signal?: AbortSignal;
  /** Called after each written batch. */
  onProgress?: (progress: { written: number; total: number }) => void;
  /**
   * One sparse (BM25) vector per chunk, in the same order, written with the dense one. Only for a
   * store with `capabilities.sparse`; each is checked against its limits before anything is written.
   */
  sparseVectors?: ReadonlyArray<SparseVector>;
}

export interface AddResult {
  /** Ids written (inserted or replaced), in input order. */
  ids: string[];
  warnings?: Warning[];
}

export interface VectorSearchOptions<Native = unknown> {
  /** How many nearest chunks to return (a positive integer). */
  topK: number;
  /** Hits with a lower similarity are left out. */
  scoreThreshold?: number;
  /**
   * A filter in Zerda's language: the part the backend can evaluate goes native, the rest is
   * evaluated on the candidates, widening the fetch until `topK` match or the store is exhausted
   * (the result then carries an 'unsupported' warning).
   */
  filter?: FilterInput | FilterNode;
  /** A filter in the backend's own convention (made by `nativeFilter` or `resolveFilter`). */
  nativeFilter?: NativeFilter<Native>;
  /** Refuse (FilterError) a `filter` the backend cannot evaluate whole (default: the store's setting). */
  strictFilters?: boolean;
  signal?: AbortSignal;
}

/** `searchHybrid`: how the database weighs the dense and the sparse dot products it sums. */
export interface HybridSearchOptions<Native = unknown> extends VectorSearchOptions<Native> {
  /** Multiplies the dense query vector (default 1). */
  denseWeight?: number;
  /** Multiplies the sparse query vector (default 1). */
  sparseWeight?: number;
}

export interface VectorHit {
  chunk: Chunk;
  /** Similarity, higher is better (cosine in [-1, 1]). */
  score: number;
}

export interface VectorSearchResult {
  hits: VectorHit[];
  warnings: Warning[];
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ListOptions extends CallOptions {
  /** Chunks per page (default 1,000). */
  pageSize?: number;
}

/** One page of `listRecords`: chunks and, where the database returns them, their stored vectors. */
export interface ListedRecords {
  chunks: Chunk[];
  /** One per chunk, in the same order; undefined where the database cannot return vectors. */
  vectors: Float32Array[] | undefined;
}

/** What a store can do: the driver's capabilities, and which optional operations it has. */
export interface VectorDatabaseCapabilities extends DriverCapabilities {
  /** `delete` exists. */
  readonly deletion: boolean;
  /** `list` exists. */
  readonly listing: boolean;
}

/**
 * The store users call (contract v2), made by core from any driver with `createVectorStore`:
 * Chroma, FAISS, Pinecone, Postgres, the in-memory store and any contributed backend look alike.
 * `delete` and `list` exist where the driver has them.
 */
export interface VectorDatabase<Native = unknown> {
  readonly specificationVersion: 'v2';
  readonly name: string;
  readonly capabilities: VectorDatabaseCapabilities;
  /** How it takes metadata filters; absent means every filter is evaluated client-side. */
  readonly filterConvention?: FilterConvention<Native> | undefined;
  /** Vector dimension, once known. */
  readonly dimension: number | undefined;
  /** The driver underneath, for backend-specific operations. */
  readonly driver: VectorDriver<Native>;
  /** The embedder that embeds chunks on `add` and text queries on `search`, if the store has one. */
  readonly embedder: Embedder | undefined;
  /** Inserts or replaces (upserts) chunks by id. Validates the whole batch before the first write. */
  add(chunks: readonly unknown[], options?: AddOptions): Promise<AddResult>;
  /** Nearest chunks to a query text (embedded by the store's embedder) or a query vector. */
  search(
    query: string | Float32Array | readonly number[],
    options: VectorSearchOptions<Native>,
  ): Promise<VectorSearchResult>;
  /** The stored chunks among `ids`, in the order of `ids` (unknown ids left out). */
  get(ids: readonly string[], options?: CallOptions): Promise<Chunk[]>;
  count(options?: CallOptions): Promise<number>;
  /** Removes chunks by id; returns how many existed. Only where the driver can delete. */
  delete?(ids: readonly string[], options?: CallOptions): Promise<number>;
  /** Every stored chunk, a page at a time. Only where the driver can list. */
  list?(options?: ListOptions): AsyncIterable<Chunk[]>;
  /** Every stored chunk with its stored vector where the database returns them. Only where the driver can list. */
  listRecords?(options?: ListOptions): AsyncIterable<ListedRecords>;
  /**
   * The chunks whose sparse vectors have the largest dot product with `sparse` (a BM25 query
   * vector: the keyword branch run by the database). Scores are those dot products. Only where the
   * driver has sparse vectors.
   */
  searchSparse?(sparse: SparseVector, options: VectorSearchOptions<Native>): Promise<VectorSearchResult>;
  /**
   * Ranked by the database on `denseWeight · (dense dot product) + sparseWeight · (sparse dot
   * product)` in one query (Pinecone's sparse-dense query). Only where the driver has `queryHybrid`.
   */
  searchHybrid?(
    query: string | Float32Array | readonly number[],
    sparse: SparseVector,
    options: HybridSearchOptions<Native>,
  ): Promise<VectorSearchResult>;
  close(): Promise<void>;
}

/** The store's `delete`, present when the driver has one. */
export interface Deletable {
  delete(ids: readonly string[], options?: CallOptions): Promise<number>;
}

/** The store's `list`, present when the driver has one. */
export interface Listable {
  list(options?: ListOptions): AsyncIterable<Chunk[]>;
  listRecords(options?: ListOptions): AsyncIterable<ListedRecords>;
}

/** The store's `searchSparse`, present when the driver has sparse vectors. */
export interface SparseSearchable<Native = unknown> {
  searchSparse(sparse: SparseVector, options: VectorSearchOptions<Native>): Promise<VectorSearchResult>;
}

/** The store's `searchHybrid`, present when the database fuses dense and sparse itself. */
export interface HybridSearchable<Native = unknown> {
  searchHybrid(
    query: string | Float32Array | readonly number[],
    sparse: SparseVector,
    options: HybridSearchOptions<Native>,
  ): Promise<VectorSearchResult>;
}

type NativeOf<D> = D extends VectorDriver<infer Native> ? Native : unknown;

/** The store made from driver type `D`: `delete` and `list` exactly where `D` has them. */
export type VectorStoreOf<D extends VectorDriver<unknown>> = VectorDatabase<NativeOf<D>> &
  (D extends { delete: (...args: never[]) => unknown } ? Deletable : unknown) &
  (D extends { list: (...args: never[]) => unknown } ? Listable : unknown) &
  (D extends { querySparse: (...args: never[]) => unknown } ? SparseSearchable<NativeOf<D>> : unknown) &
  (D extends { queryHybrid: (...args: never[]) => unknown } ? HybridSearchable<NativeOf<D>> : unknown);
