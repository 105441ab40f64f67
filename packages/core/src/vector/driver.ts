import type { FilterConvention } from '../filter/index.js';
import type { Chunk, Metadata, Warning } from '../model/index.js';

/** The similarity a store ranks by. Scores are always similarities: higher is better. */
export type DistanceMetric = 'cosine' | 'dot' | 'l2';

/**
 * How the value a database returns for a match becomes Zerda's similarity. Declared by the
 * driver, applied once by core (`toSimilarity`), so a threshold means the same on every backend:
 * - `similarity`: already Zerda's score (cosine similarity, inner product, or `1 / (1 + d)`);
 * - `one-minus-distance`: `1 - d` (a cosine distance; Chroma's inner-product distance `1 - q·x`);
 * - `negated`: `-d` (pgvector's negative inner product `<#>`);
 * - `euclidean-distance`: `1 / (1 + d)` for the Euclidean distance d;
 * - `squared-euclidean-distance`: `1 / (1 + sqrt(d))` for the squared Euclidean distance d.
 * Cosine scores are clamped to [-1, 1] (float rounding can step outside).
 */
export type ScoreConversion =
  | 'similarity'
  | 'one-minus-distance'
  | 'negated'
  | 'euclidean-distance'
  | 'squared-euclidean-distance';

/**
 * A sparse vector: ascending, distinct term ids (0-based, below the encoder's dimension) and their
 * weights. The BM25 sparse encoder makes them; a database with sparse vectors ranks by dot product.
 */
export interface SparseVector {
  readonly indices: Uint32Array;
  readonly values: Float32Array;
}

/** What a driver with sparse vectors stores and ranks (always by dot product). */
export interface SparseCapabilities {
  /** Largest index it accepts, plus one (pgvector's sparsevec dimension is at most 1,000,000,000). */
  readonly dimension: number;
  /** Most non-zero entries one sparse vector may have (pgvector's HNSW index: 1,000; Pinecone: 1,000). */
  readonly maxNonZero: number;
  /** The driver has `queryHybrid`: the database ranks by the dense and sparse dot products summed. */
  readonly hybrid: boolean;
}

/** What a driver declares about its database; core reads it and plans around it. */
export interface DriverCapabilities {
  /** The metric its scores come from. */
  readonly metric: DistanceMetric;
  /** How its native match values become similarities. */
  readonly scoreConversion: ScoreConversion;
  /** Data survives a restart of the process. */
  readonly persistent: boolean;
  /** Most records one `upsert` call takes; core splits larger batches (default: no limit). */
  readonly maxBatchSize?: number;
  /** Most ids one `get` or `delete` call takes; core splits larger lists (default: maxBatchSize). */
  readonly maxIdsPerCall?: number;
  /** Upsert calls core keeps in flight at once (default 1: one after another). */
  readonly maxConcurrentWrites?: number;
  /** Present when the driver stores a sparse vector beside each dense one and has `querySparse`. */
  readonly sparse?: SparseCapabilities;
}

/** A record as written to a database: a chunk with its vector. */
export interface VectorRecord {
  readonly id: string;
  readonly vector: Float32Array;
  readonly text: string;
  readonly docId?: string;
  readonly metadata?: Metadata;
  /** The chunk's sparse (BM25) vector, given only to drivers with `capabilities.sparse`. */
  readonly sparse?: SparseVector;
}

/** One match of a query, best first. `chunk` where the database returned it with the match. */
export interface DriverMatch {
  readonly id: string;
  /** The database's own value (distance or similarity), converted by core per `scoreConversion`. */
  readonly score: number;
  /** The stored chunk; when absent core fetches it with `get`. */
  readonly chunk?: Chunk;
}

export interface DriverCallOptions {
  readonly signal?: AbortSignal | undefined;
  /**
   * Reports partial support, "it worked, but not all of it" (a record stored twice, a score
   * direction guessed): core adds the warning, once, to the result of `add` or `search`. Given to
   * `upsert` and `query`.
   */
  readonly warn?: ((warning: Warning) => void) | undefined;
}

export interface DriverQueryOptions<NativeFilter = unknown> extends DriverCallOptions {
  /** How many nearest records to return (a positive integer; may exceed the record count). */
  readonly topK: number;
  /** A filter in the driver's own convention (already checked by core); absent: no filter. */
  readonly filter?: NativeFilter | undefined;
}

export interface DriverListOptions extends DriverCallOptions {
  /** Where the previous page ended (`nextCursor` of that page); absent: the first page. */
  readonly cursor?: string | undefined;
  /** Most records in this page. */
  readonly limit: number;
  /** Return each chunk's stored vector too (`vectors`), where the database can. */
  readonly includeVectors?: boolean | undefined;
}

export interface DriverListPage {
  readonly chunks: readonly Chunk[];
  /** The stored vectors, one per chunk in the same order, when asked (`includeVectors`) and available. */
  readonly vectors?: readonly Float32Array[] | undefined;
  /** Absent on the last page. */
  readonly nextCursor?: string | undefined;
}

/** A problem a driver finds in a record before anything is written (for example metadata too large). */
export interface RecordProblem {
  /** Position in the batch given to `checkRecords`. */
  readonly index: number;
  readonly reason: string;
}

/**
 * Version 2 of the backend contract: the raw operations a backend author writes. Core turns a
 * driver into the store users call (`createVectorStore`), doing everything a store does once:
 * normalising and validating chunks, embedding, vector checks, batching by `capabilities`,
 * progress, partial-failure reports, topK, scoreThreshold, abort, score conversion and filter
 * resolution. A driver does none of that. An operation the database lacks is left out (`delete`,
 * `list`): the store then lacks it too.
 *
 * Every method may throw; core passes Zerda's errors through and wraps anything else in a
 * BackendError naming the driver and the operation. A driver wraps its SDK's errors itself where
 * it can say more (what to do, whether a retry may help).
 */
export interface VectorDriver<NativeFilter = unknown> {
  readonly specificationVersion: 'v2';
  /** Names the backend in errors and warnings, for example 'chroma'. */
  readonly name: string;
  readonly capabilities: DriverCapabilities;
  /** How it takes metadata filters natively; absent means every filter is evaluated client-side. */
  readonly filterConvention?: FilterConvention<NativeFilter>;
  /** The vector dimension of the stored data, once the driver knows it (for example after `open`). */
  readonly dimension?: number | undefined;
  /**
   * Connects and learns what exists (the collection, its dimension). Core calls it once before
   * the first operation, and again after a failed attempt; optional.
   */
  open?(options: DriverCallOptions): Promise<void>;
  /**
   * Refuses records the database cannot store (metadata keys or sizes, ...): one entry per
   * problem. Called for the whole batch before the first write; optional.
   */
  checkRecords?(records: readonly VectorRecord[]): readonly RecordProblem[];
  /**
   * Inserts or replaces records by id (text, vector, docId and metadata replaced whole, never
   * merged). Given at most `maxBatchSize` records. A driver that splits one call into several
   * requests and fails part-way throws a BatchWriteError naming the ids it wrote.
   */
  upsert(records: readonly VectorRecord[], options: DriverCallOptions): Promise<void>;
  /** The `topK` nearest records, best first, with the database's native score. */
  query(vector: Float32Array, options: DriverQueryOptions<NativeFilter>): Promise<readonly DriverMatch[]>;
  /** The stored chunks among `ids` (any order; unknown ids left out). */
  get(ids: readonly string[], options: DriverCallOptions): Promise<readonly Chunk[]>;
  count(options: DriverCallOptions): Promise<number>;
  /** Removes records by id; returns how many existed. Absent where the database cannot delete. */
  delete?(ids: readonly string[], options: DriverCallOptions): Promise<number>;
  /** Every stored chunk, a page at a time (to rebuild a keyword index from the database). */
  list?(options: DriverListOptions): Promise<DriverListPage>;
  /**
   * The `topK` records with the largest dot product between their sparse vector and `sparse`, best
   * first; `score` is that dot product (no conversion). Records without a sparse vector, or with
   * a zero dot product, are left out. Present with `capabilities.sparse`.
   */
  querySparse?(
    sparse: SparseVector,
    options: DriverQueryOptions<NativeFilter>,
  ): Promise<readonly DriverMatch[]>;
  /**
   * Ranks in the database by `dense · vector + sparse · sparseVector` (core scales the two query
   * vectors to weight them; Pinecone's sparse-dense query). `score` is that sum. Present with
   * `capabilities.sparse.hybrid`.
   */
  queryHybrid?(
    dense: Float32Array,
    sparse: SparseVector,
    options: DriverQueryOptions<NativeFilter>,
  ): Promise<readonly DriverMatch[]>;
  /** Releases connections; optional. */
  close?(): Promise<void>;
}
