import type { DistanceMetric, Embedder, VectorDatabase } from '@zerda/core';

/** What the suite asks `create` for. */
export interface ConformanceCreateOptions {
  /** The vector length the test uses. */
  dimension: number;
  /** One of `capabilities.metrics`. */
  metric: DistanceMetric;
  /**
   * Given only to tests that need the store to embed texts: the store must then use it for `add`
   * without `embeddings` and for text queries.
   */
  embedder?: Embedder;
  /** Given only to the sparse-vector tests: create the store with sparse vectors enabled. */
  sparse?: boolean;
}

/** What the backend under test can do; optional abilities gate their tests (`it.skipIf`). */
export interface ConformanceCapabilities {
  /** The metrics `create` accepts; the score tests run once per metric, the others use the first. */
  metrics: readonly DistanceMetric[];
  /** `delete` removes chunks (else the deletion tests are skipped, and reported as skipped). */
  deletion: boolean;
  /**
   * String-array metadata values are stored and filtered with "any element" semantics. When
   * false, adding a chunk with one must fail with a ChunkValidationError and write nothing, and
   * the random records of the filter tests have no arrays.
   */
  arrayMetadata: boolean;
  /** `create` honours `embedder` (default true). */
  embedder?: boolean;
  /**
   * A store whose server cannot be reached (nothing listens on its port), created with the same
   * options as `create`. `search`, `add` and `count` must each reject with a BackendError that
   * keeps the underlying error as `cause`, within `unreachableTimeoutMs`. Omitted: those tests
   * are skipped (and reported as skipped).
   */
  unreachable?: (options: ConformanceCreateOptions) => VectorDatabase | Promise<VectorDatabase>;
  /** Bound for the unreachable tests, in ms (default 10_000). */
  unreachableTimeoutMs?: number;
  /**
   * `create({ sparse: true })` makes a store with sparse vectors (`capabilities.sparse`), and
   * whether it fuses dense and sparse in the database (`searchHybrid`). Omitted: the sparse tests
   * are skipped (and reported as skipped).
   */
  sparse?: { hybrid: boolean };
}

export interface TestVectorDatabaseOptions<Store extends VectorDatabase = VectorDatabase> {
  /** Names the suite: `VectorDatabase conformance: <name>`. */
  name: string;
  /** A fresh, EMPTY store. Called once or more in each test. */
  create: (options: ConformanceCreateOptions) => Store | Promise<Store>;
  /** Cleanup, called after each test for every store that test created. Default: `store.close?.()`. */
  destroy?: (store: Store) => void | Promise<void>;
  capabilities: ConformanceCapabilities;
  /** More describe/it blocks, declared inside the suite's describe. */
  additionalTests?: () => void;
  /** Runs of each property-based test (default 20; each run makes one store). */
  propertyRuns?: number;
  /** fast-check seed, to replay a failure (fast-check prints it). */
  seed?: number;
  /** Timeout of each test in ms (default 30_000; property tests get 4x). */
  testTimeoutMs?: number;
}
