import {
  type AddOptions,
  type AddResult,
  type Chunk,
  type ChunkProblem,
  ChunkValidationError,
  checkStoreSettings,
  checkVectorSearchOptions,
  type DistanceMetric,
  type Embedder,
  embedChunksForStore,
  embedQueryForStore,
  type FilterConvention,
  faissFilterConvention,
  IndexFormatError,
  InvalidArgumentError,
  matchesDocIdFilter,
  normalizeChunks,
  prepareAddBatch,
  throwIfAborted,
  type VectorDatabase,
  type VectorDatabaseCapabilities,
  type VectorHit,
  type VectorSearchOptions,
  type VectorSearchResult,
  wrapBackendError,
} from '@zerda/core';
import { type FaissIndexType, readFaissSave, writeFaissSave } from './faiss-files.js';
import { readIndexLayout, readVectors, withHnswParameters } from './faiss-index-format.js';
import {
  type FaissIndex,
  type FaissModule,
  loadFaissModule,
  METRIC_INNER_PRODUCT,
  METRIC_L2,
} from './faiss-module.js';
import { writeCheckedVector } from './vector-checks.js';

export type { FaissIndexType } from './faiss-files.js';

/** HNSW graph parameters (FAISS's names). */
export interface FaissHnswSettings {
  /** Neighbours per node (FAISS's M; 2M on the bottom layer). Default 32. Fixed once built. */
  m?: number;
  /** Breadth of the search while inserting: higher builds slower and better. Default 40. */
  efConstruction?: number;
  /** Breadth of a search: higher is slower and finds more of the true neighbours. Default 64. */
  efSearch?: number;
}

export interface FaissStoreSettings {
  /** Embeds chunk texts on `add` (when no `embeddings` are given) and query texts on `search`. */
  embedder?: Embedder;
  /** Vector dimension. Default: the embedder's, else the length of the first vectors added. */
  dimension?: number;
  /**
   * Similarity (default 'cosine'). 'cosine': vectors are normalised to unit length and searched
   * by inner product; 'dot': inner product of the vectors as given; 'l2': Euclidean distance.
   * See `capabilities.scoreConversion` for how each distance becomes the score.
   */
  metric?: DistanceMetric;
  /**
   * 'flat' (default): exact search (FAISS IndexFlatIP, or IndexFlatL2 for 'l2'). 'hnsw': an
   * approximate HNSW graph over the same vectors (FAISS IndexHNSWFlat through the index factory),
   * faster on large stores, not exact.
   */
  indexType?: FaissIndexType;
  /** HNSW parameters (index type 'hnsw' only). */
  hnsw?: FaissHnswSettings;
  /**
   * HNSW cannot remove vectors: deleted and replaced chunks stay in the graph, hidden from search,
   * until the index is rebuilt without them. That happens when they exceed this share of the
   * index (default 0.25), or on `compact()`.
   */
  compactRatio?: number;
  /** The faiss-node module to use (default: `import('faiss-node')` on first use). */
  faiss?: FaissModule;
}

/** The FAISS store's native filter option (the 'faiss' filter convention of @zerda/core). */
export interface FaissFilterOptions {
  /**
   * Allowed document ids: a chunk passes when its document id (`docId`, else `metadata.docId`;
   * for a string-array docId, any element) is in the list. `[]` passes nothing.
   */
  docIdFilter: readonly string[];
}

export type FaissSearchOptions = VectorSearchOptions & Partial<FaissFilterOptions>;

/** Sizes and settings of a store, for monitoring and benchmarks. */
export interface FaissStoreStats {
  /** Live chunks. */
  count: number;
  dimension: number | undefined;
  metric: DistanceMetric;
  indexType: FaissIndexType;
  /** Vectors in the FAISS index, deleted HNSW entries not yet compacted included. */
  indexed: number;
  /** Deleted HNSW entries still in the graph. */
  deleted: number;
  /** The HNSW parameters in effect (index type 'hnsw'). */
  hnsw?: { m: number; efConstruction: number; efSearch: number };
  /** Whether an HNSW store holds an exact flat copy of its vectors (see `search`). */
  exactCopy: boolean;
}

interface Entry {
  label: number;
  chunk: Chunk;
}

const scoreConversions: Record<DistanceMetric, string> = {
  cosine:
    'cosine similarity: the inner product of unit vectors that FAISS returns (equal to 1 - d for cosine distance d)',
  dot: 'the inner product that FAISS returns, as it is (-d for inner-product distance d)',
  l2: "1 / (1 + sqrt(d)) for FAISS's squared Euclidean distance d, that is 1 / (1 + Euclidean distance)",
};

/** Vectors per call into faiss-node (which copies them through a JavaScript array). */
const WRITE_BATCH = 8192;
/** FAISS's removeIds tests each vector against the whole list; above this product, rebuild instead. */
const REMOVE_IDS_WORK = 50_000_000;
const DEFAULT_HNSW = { m: 32, efConstruction: 40, efSearch: 64 } as const;

/**
 * A FAISS index (faiss-node) with a sidecar of chunks, implementing Zerda's `VectorDatabase` v1
 * (`name: 'faiss'`). FAISS stores vectors under consecutive integer labels; the store maps
 * Zerda's string ids to labels and keeps each chunk's text, docId and metadata beside them, so a
 * search returns whole chunks.
 *
 * Filters: FAISS has no metadata, so the store takes only `docIdFilter` (the 'faiss' filter
 * convention) and applies it to FAISS's results while widening the search; everything else is
 * evaluated on the chunks by core's `VectorRetriever`. A search never returns a chunk outside the
 * filter, and never fewer than `topK` hits while more match.
 */
export class FaissStore implements VectorDatabase<FaissFilterOptions> {
  readonly specificationVersion = 'v1' as const;
  readonly name = 'faiss';
  readonly capabilities: VectorDatabaseCapabilities;
  readonly filterConvention: FilterConvention = faissFilterConvention;

  private readonly embedder: Embedder | undefined;
  private readonly metric: DistanceMetric;
  private readonly indexType: FaissIndexType;
  private hnswParameters: { m: number; efConstruction: number; efSearch: number };
  private readonly compactRatio: number;
  private faissModule: FaissModule | undefined;
  private configuredDimension: number | undefined;
  private index: FaissIndex | undefined;
  /** HNSW only: an exact flat index over the same labels, built when a search first needs it. */
  private exact: FaissIndex | undefined;
  /** The chunk id under each FAISS label; undefined for a deleted HNSW entry. */
  private labelIds: (string | undefined)[] = [];
  private readonly entries = new Map<string, Entry>();
  private deleted = 0;

  constructor(settings: FaissStoreSettings = {}) {
    const {
      embedder,
      dimension,
      metric = 'cosine',
      indexType = 'flat',
      hnsw,
      compactRatio = 0.25,
      faiss,
    } = settings;
    checkStoreSettings({ metric, dimension, embedder });
    if (indexType !== 'flat' && indexType !== 'hnsw') {
      throw new InvalidArgumentError({
        argument: 'indexType',
        value: indexType,
        message: "expected 'flat' or 'hnsw'",
      });
    }
    const parameters = { ...DEFAULT_HNSW, ...definedOnly(hnsw ?? {}) };
    for (const [name, value] of Object.entries(parameters)) {
      if (!isPositiveInteger(value) || value > 1_000_000) {
        throw new InvalidArgumentError({
          argument: `hnsw.${name}`,
          value,
          message: 'expected a positive integer (at most 1,000,000)',
        });
      }
    }
    if (hnsw !== undefined && indexType !== 'hnsw') {
      throw new InvalidArgumentError({
        argument: 'hnsw',
        value: hnsw,
        message: "applies to indexType 'hnsw' only",
      });
    }
    if (!(compactRatio > 0 && compactRatio <= 1)) {
      throw new InvalidArgumentError({
        argument: 'compactRatio',
        value: compactRatio,
        message: 'expected a number in (0, 1]',
      });
    }
    this.embedder = embedder;
    this.metric = metric;
    this.indexType = indexType;
    this.hnswParameters = parameters;
    this.compactRatio = compactRatio;
    this.faissModule = faiss;
    this.configuredDimension = dimension ?? embedder?.dimension;
    this.capabilities = Object.freeze({
      metric,
      persistent: false,
      deletion: true,
      scoreConversion: scoreConversions[metric],
    });
  }

  /** Vector dimension, once known (from the settings, the embedder or the first add). */
  get dimension(): number | undefined {
    return this.configuredDimension;
  }

  /**
   * Inserts chunks, or replaces those whose id is already stored. The whole batch is checked
   * first (chunks, duplicate ids, vector count, dimension, finite values); any problem throws a
   * typed error before anything is written.
   */
  async add(input: readonly Chunk[], options: AddOptions = {}): Promise<AddResult> {
    const { embeddings, signal, onProgress } = options;
    throwIfAborted(signal);
    const chunks = prepareAddBatch(input, embeddings);
    if (chunks.length === 0) return { ids: [] };
    const faiss = await this.loadFaiss();
    const vectors = embeddings ?? (await embedChunksForStore(this.embedder, chunks, signal));
    const { dimension, packed } = this.checkBatch(chunks, vectors);
    throwIfAborted(signal);

    // From here on nothing awaits, so no other call sees the batch half-written.
    try {
      const index = this.ensureIndex(faiss, dimension);
      const replaced: number[] = [];
      for (const chunk of chunks) {
        const entry = this.entries.get(chunk.id);
        if (entry !== undefined) replaced.push(entry.label);
      }
      if (replaced.length > 0) this.removeLabels(faiss, replaced);
      const first = this.labelIds.length;
      for (let start = 0; start < chunks.length; start += WRITE_BATCH) {
        const end = Math.min(chunks.length, start + WRITE_BATCH);
        const values = toNumberArray(packed.subarray(start * dimension, end * dimension));
        index.add(values);
        this.exact?.add(values);
        for (let position = start; position < end; position++) {
          const chunk = chunks[position]!;
          this.labelIds.push(chunk.id);
          this.entries.set(chunk.id, { label: first + position, chunk });
        }
        onProgress?.({ written: end, total: chunks.length });
      }
      this.checkConsistency();
      this.compactIfNeeded(faiss);
    } catch (error) {
      throw wrapBackendError(this.name, 'add', error);
    }
    return { ids: chunks.map((chunk) => chunk.id) };
  }

  /**
   * The `topK` chunks most similar to the query (a text, embedded by the store's embedder, or a
   * vector), best first, among those that pass `docIdFilter`.
   *
   * FAISS is asked for more than `topK` when deleted HNSW entries or the docId filter take some
   * of its answers, widening until `topK` chunks pass or the index is exhausted. An HNSW graph
   * reaches only part of a large index from one query (about `efSearch` nodes around the best
   * ones); when that part holds fewer than `topK` passing chunks, the store answers the search
   * exactly from a flat copy of the vectors instead (built at the first such search, kept in
   * step with later writes), so a selective filter still gets its `topK` best hits.
   */
  async search(
    query: string | Float32Array | readonly number[],
    options: FaissSearchOptions,
  ): Promise<VectorSearchResult> {
    const { topK, scoreThreshold, signal, docIdFilter } = checkSearchOptions(options);
    throwIfAborted(signal);
    const vector = typeof query === 'string' ? await embedQueryForStore(this.embedder, query, signal) : query;
    throwIfAborted(signal);
    const dimension = this.configuredDimension;
    if (dimension === undefined) return { hits: [] };
    const prepared = new Float32Array(dimension);
    const problem = writeCheckedVector(vector, dimension, this.metric, prepared, 0, 'refuse');
    if (problem !== undefined) {
      throw new InvalidArgumentError({
        argument: typeof query === 'string' ? 'embedder' : 'query',
        value: typeof query === 'string' ? query : undefined,
        message: typeof query === 'string' ? `the query embedding is unusable: ${problem}` : problem,
      });
    }
    const index = this.index;
    if (index === undefined || this.entries.size === 0) return { hits: [] };

    const allowed = docIdFilter === undefined ? undefined : new Set(docIdFilter);
    const passes = (chunk: Chunk) => allowed === undefined || matchesDocIdFilter(allowed, chunk);
    let candidates = this.entries.size;
    if (allowed !== undefined) {
      candidates = 0;
      for (const { chunk } of this.entries.values()) if (passes(chunk)) candidates++;
    }
    const want = Math.min(topK, candidates);
    if (want === 0) return { hits: [] };

    let found: { label: number; distance: number }[];
    try {
      const queryValues = toNumberArray(prepared);
      found = this.searchIndex(index, queryValues, want, candidates, passes, this.indexType === 'hnsw');
      if (found.length < want) {
        // The HNSW graph did not reach enough passing chunks: answer exactly.
        found = this.searchIndex(this.exactIndex(), queryValues, want, candidates, passes, false);
      }
    } catch (error) {
      throw wrapBackendError(this.name, 'search', error);
    }
    const hits: VectorHit[] = [];
    for (const { label, distance } of found) {
      const score = this.toSimilarity(distance);
      if (scoreThreshold !== undefined && score < scoreThreshold) continue;
      const entry = this.entries.get(this.labelIds[label]!)!;
      hits.push({ chunk: copyChunk(entry.chunk), score });
    }
    return { hits };
  }

  /**
   * Removes chunks by id (unknown ids are ignored); returns how many existed. A flat index
   * removes their vectors at once; an HNSW index hides them from search until it is compacted.
   */
  async delete(ids: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number> {
    throwIfAborted(options.signal);
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
      throw new InvalidArgumentError({
        argument: 'ids',
        value: ids,
        message: 'expected an array of strings',
      });
    }
    const labels: number[] = [];
    for (const id of new Set(ids)) {
      const entry = this.entries.get(id);
      if (entry !== undefined) labels.push(entry.label);
    }
    if (labels.length === 0) return 0;
    const faiss = await this.loadFaiss();
    try {
      this.removeLabels(faiss, labels);
      this.checkConsistency();
      this.compactIfNeeded(faiss);
    } catch (error) {
      throw wrapBackendError(this.name, 'delete', error);
    }
    return labels.length;
  }

  async count(options: { signal?: AbortSignal } = {}): Promise<number> {
    throwIfAborted(options.signal);
    return this.entries.size;
  }

  /**
   * Rebuilds an HNSW index without its deleted entries (done automatically past `compactRatio`);
   * returns how many entries were dropped. A flat index has none (it removes vectors at once).
   */
  async compact(options: { signal?: AbortSignal } = {}): Promise<number> {
    throwIfAborted(options.signal);
    if (this.deleted === 0) return 0;
    const faiss = await this.loadFaiss();
    try {
      return this.rebuild(faiss);
    } catch (error) {
      throw wrapBackendError(this.name, 'compact', error);
    }
  }

  /** Sizes and settings, for monitoring and benchmarks. */
  stats(): FaissStoreStats {
    const stats: FaissStoreStats = {
      count: this.entries.size,
      dimension: this.configuredDimension,
      metric: this.metric,
      indexType: this.indexType,
      indexed: this.labelIds.length,
      deleted: this.deleted,
      exactCopy: this.exact !== undefined,
    };
    if (this.indexType === 'hnsw') stats.hnsw = { ...this.hnswParameters };
    return stats;
  }

  /**
   * Saves the store to `directory` (created if needed): the FAISS index in FAISS's own file
   * format, and a JSON manifest holding the chunks under their labels, with a format version.
   * Atomic: a crash part-way leaves the previous save readable. Taken as a snapshot at the call,
   * so later writes do not leak into it.
   */
  async save(directory: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    throwIfAborted(options.signal);
    const dimension = this.configuredDimension;
    if (dimension === undefined) {
      throw new InvalidArgumentError({
        argument: 'store',
        message:
          'an empty store of unknown dimension has nothing to save; set `dimension` or add vectors first',
      });
    }
    // The snapshot is taken before the first await when there is an index, so that writes made
    // after the call (even without awaiting it) are not in it.
    const index = this.index ?? this.ensureIndex(await this.loadFaiss(), dimension);
    let bytes: Uint8Array;
    try {
      bytes = index.toBuffer();
    } catch (error) {
      throw wrapBackendError(this.name, 'save', error);
    }
    const labels = this.labelIds.map((id) => (id === undefined ? null : this.entries.get(id)!.chunk));
    await writeFaissSave(
      directory,
      {
        metric: this.metric,
        indexType: this.indexType,
        dimension,
        count: this.entries.size,
        ...(this.indexType === 'hnsw' ? { hnsw: { ...this.hnswParameters } } : {}),
        labels,
      },
      bytes,
      options.signal,
    );
  }

  /**
   * Loads a store saved by `save`. The metric, index type, dimension and HNSW M come from the
   * files; settings that contradict them are refused with an IndexFormatError, as are corrupt,
   * truncated or mismatched files (all checked before FAISS reads the index). `hnsw.efSearch`
   * may differ from the saved store's.
   */
  static async load(
    directory: string,
    settings: FaissStoreSettings = {},
    options: { signal?: AbortSignal } = {},
  ): Promise<FaissStore> {
    const save = await readFaissSave(directory, options.signal);
    const { manifest, layout, indexPath, manifestPath } = save;
    const refuse = (message: string): never => {
      throw new IndexFormatError({ message, path: manifestPath });
    };
    if (settings.metric !== undefined && settings.metric !== manifest.metric) {
      refuse(`The saved store uses the ${manifest.metric} metric, the settings ask for ${settings.metric}`);
    }
    if (settings.indexType !== undefined && settings.indexType !== manifest.indexType) {
      refuse(`The saved store is a ${manifest.indexType} index, the settings ask for ${settings.indexType}`);
    }
    const expected = settings.dimension ?? settings.embedder?.dimension;
    if (expected !== undefined && expected !== manifest.dimension) {
      refuse(`The saved store has dimension ${manifest.dimension}, the settings or embedder ${expected}`);
    }
    if (settings.hnsw?.m !== undefined && settings.hnsw.m !== manifest.hnsw?.m) {
      refuse(`The saved HNSW index has M ${manifest.hnsw?.m}, the settings ask for ${settings.hnsw.m}`);
    }
    let chunks: Chunk[];
    try {
      chunks = normalizeChunks(manifest.labels.filter((chunk): chunk is Chunk => chunk !== null));
    } catch (error) {
      if (!ChunkValidationError.isInstance(error)) throw error;
      return refuse(`The saved chunks are invalid: ${error.message}`);
    }

    const hnsw =
      manifest.hnsw === undefined
        ? undefined
        : {
            m: manifest.hnsw.m,
            efConstruction: settings.hnsw?.efConstruction ?? manifest.hnsw.efConstruction,
            efSearch: settings.hnsw?.efSearch ?? manifest.hnsw.efSearch,
          };
    const store = new FaissStore({
      ...settings,
      metric: manifest.metric,
      indexType: manifest.indexType,
      dimension: manifest.dimension,
      ...(hnsw === undefined ? {} : { hnsw }),
    });
    const faiss = await store.loadFaiss();
    let bytes = save.index;
    if (
      hnsw !== undefined &&
      (layout.hnsw?.efSearch !== hnsw.efSearch || layout.hnsw.efConstruction !== hnsw.efConstruction)
    ) {
      bytes = withHnswParameters(bytes, hnsw);
    }
    let index: FaissIndex;
    try {
      index = faiss.Index.fromBuffer(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    } catch (error) {
      throw new IndexFormatError({
        message: 'FAISS could not read the index file',
        path: indexPath,
        cause: error,
      });
    }
    if (index.ntotal() !== manifest.labels.length || index.getDimension() !== manifest.dimension) {
      throw new IndexFormatError({
        message: 'FAISS read an index of another size than the manifest',
        path: indexPath,
      });
    }
    let chunkIndex = 0;
    store.index = index;
    store.labelIds = manifest.labels.map((entry, label) => {
      if (entry === null) {
        store.deleted++;
        return undefined;
      }
      const chunk = chunks[chunkIndex++]!;
      store.entries.set(chunk.id, { label, chunk });
      return chunk.id;
    });
    return store;
  }

  /**
   * Asks FAISS for the labels nearest to the query that pass, widening `k` until `want` pass or
   * the index is exhausted. For an HNSW index, stops early when the graph returns fewer labels
   * than asked for (it reached all it can), leaving the caller to search exactly.
   */
  private searchIndex(
    index: FaissIndex,
    query: number[],
    want: number,
    candidates: number,
    passes: (chunk: Chunk) => boolean,
    approximate: boolean,
  ): { label: number; distance: number }[] {
    const total = index.ntotal();
    // Expect passing chunks in the proportion they hold of the index.
    const share = candidates / total;
    let k = Math.min(total, share === 1 ? want : Math.ceil((want / share) * 1.5) + 8);
    for (;;) {
      const { labels, distances } = index.search(query, k);
      const found: { label: number; distance: number }[] = [];
      for (let position = 0; position < labels.length && found.length < want; position++) {
        const label = labels[position]!;
        if (label < 0) continue;
        const id = this.labelIds[label];
        if (id === undefined) continue;
        if (passes(this.entries.get(id)!.chunk)) found.push({ label, distance: distances[position]! });
      }
      if (found.length >= want || k >= total) return found;
      if (approximate && labels.some((label) => label < 0)) return found;
      k = Math.min(total, k * 4);
    }
  }

  private exactIndex(): FaissIndex {
    if (this.indexType === 'flat') return this.index!;
    if (this.exact === undefined) {
      const faiss = this.faissModule!;
      const dimension = this.configuredDimension!;
      const vectors = readVectors(this.index!.toBuffer());
      const exact =
        this.metric === 'l2' ? new faiss.IndexFlatL2(dimension) : new faiss.IndexFlatIP(dimension);
      for (let start = 0; start < this.labelIds.length; start += WRITE_BATCH) {
        const end = Math.min(this.labelIds.length, start + WRITE_BATCH);
        exact.add(toNumberArray(vectors.subarray(start * dimension, end * dimension)));
      }
      this.exact = exact;
    }
    return this.exact;
  }

  /** Removes labels: from a flat index at once (labels after them shift down), or as HNSW tombstones. */
  private removeLabels(faiss: FaissModule, labels: number[]): void {
    const index = this.index!;
    if (this.indexType === 'hnsw') {
      for (const label of labels) {
        const id = this.labelIds[label]!;
        this.labelIds[label] = undefined;
        this.entries.delete(id);
        this.deleted++;
      }
      return;
    }
    const removed = new Set(labels);
    for (const label of labels) this.entries.delete(this.labelIds[label]!);
    if (labels.length * index.ntotal() <= REMOVE_IDS_WORK) {
      const count = index.removeIds(labels);
      if (count !== labels.length) {
        throw new Error(
          `FAISS removed ${count} vectors of ${labels.length}; the index and its sidecar disagree`,
        );
      }
    } else {
      this.index = this.rebuiltIndex(faiss, index, removed);
    }
    // FAISS keeps the order of the remaining vectors: relabel the sidecar the same way.
    const kept: string[] = [];
    this.labelIds.forEach((id, label) => {
      if (!removed.has(label)) kept.push(id!);
    });
    this.labelIds = kept;
    kept.forEach((id, label) => {
      this.entries.get(id)!.label = label;
    });
  }

  private compactIfNeeded(faiss: FaissModule): void {
    if (this.deleted > 0 && this.deleted >= this.compactRatio * this.labelIds.length) this.rebuild(faiss);
  }

  /** Rebuilds the index without deleted entries; returns how many were dropped. */
  private rebuild(faiss: FaissModule): number {
    const dropped = this.deleted;
    const removed = new Set<number>();
    this.labelIds.forEach((id, label) => {
      if (id === undefined) removed.add(label);
    });
    this.index = this.rebuiltIndex(faiss, this.index!, removed);
    this.exact = undefined;
    const kept = this.labelIds.filter((id): id is string => id !== undefined);
    kept.forEach((id, label) => {
      this.entries.get(id)!.label = label;
    });
    this.labelIds = kept;
    this.deleted = 0;
    this.checkConsistency();
    return dropped;
  }

  /** A new index of the same type holding the vectors of `index` except the `removed` labels, in order. */
  private rebuiltIndex(faiss: FaissModule, index: FaissIndex, removed: ReadonlySet<number>): FaissIndex {
    const dimension = this.configuredDimension!;
    const bytes = index.toBuffer();
    const layout = readIndexLayout(bytes);
    const vectors = readVectors(bytes, layout);
    const rebuilt = this.newIndex(faiss, dimension);
    let batch: number[] = [];
    for (let label = 0; label < layout.count; label++) {
      if (removed.has(label)) continue;
      for (let j = 0; j < dimension; j++) batch.push(vectors[label * dimension + j]!);
      if (batch.length >= WRITE_BATCH * dimension) {
        rebuilt.add(batch);
        batch = [];
      }
    }
    if (batch.length > 0) rebuilt.add(batch);
    return rebuilt;
  }

  /** The sidecar and FAISS must agree on the number of labels; anything else is a bug to report, not hide. */
  private checkConsistency(): void {
    const indexed = this.index?.ntotal() ?? 0;
    if (indexed !== this.labelIds.length || this.labelIds.length - this.deleted !== this.entries.size) {
      throw new Error(
        `the FAISS index holds ${indexed} vectors, the sidecar ${this.labelIds.length} labels (${this.deleted} deleted) and ${this.entries.size} chunks`,
      );
    }
  }

  private ensureIndex(faiss: FaissModule, dimension: number): FaissIndex {
    this.index ??= this.newIndex(faiss, dimension);
    this.configuredDimension = dimension;
    return this.index;
  }

  private newIndex(faiss: FaissModule, dimension: number): FaissIndex {
    const metricCode = this.metric === 'l2' ? METRIC_L2 : METRIC_INNER_PRODUCT;
    if (this.indexType === 'flat') {
      return metricCode === METRIC_L2 ? new faiss.IndexFlatL2(dimension) : new faiss.IndexFlatIP(dimension);
    }
    // The factory sets FAISS's defaults (efConstruction 40, efSearch 16) and faiss-node has no
    // way to change them, so they are written into the (empty) index's serialised form.
    const { m, efConstruction, efSearch } = this.hnswParameters;
    const empty = faiss.Index.fromFactory(dimension, `HNSW${m}`, metricCode).toBuffer();
    const configured = withHnswParameters(empty, { efConstruction, efSearch });
    return faiss.Index.fromBuffer(
      Buffer.from(configured.buffer, configured.byteOffset, configured.byteLength),
    );
  }

  private async loadFaiss(): Promise<FaissModule> {
    this.faissModule ??= await loadFaissModule();
    return this.faissModule;
  }

  private toSimilarity(distance: number): number {
    switch (this.metric) {
      case 'cosine':
        // Rounding can take a unit vector's inner product a hair past ±1.
        return Math.min(1, Math.max(-1, distance));
      case 'dot':
        return distance;
      case 'l2':
        return 1 / (1 + Math.sqrt(Math.max(0, distance)));
    }
  }

  /**
   * Checks every vector of the batch and packs them (unit length for cosine) into one array, or
   * throws one ChunkValidationError listing every problem.
   */
  private checkBatch(
    chunks: Chunk[],
    vectors: ReadonlyArray<unknown>,
  ): { dimension: number; packed: Float32Array } {
    const first = vectors[0];
    // The first vectors added fix the dimension of a store that was not told it.
    const dimension =
      this.configuredDimension ??
      (Array.isArray(first) || ArrayBuffer.isView(first)
        ? (first as ArrayLike<unknown>).length || undefined
        : undefined);
    const problems: ChunkProblem[] = [];
    if (dimension === undefined) {
      throw new ChunkValidationError({
        problems: [
          {
            index: 0,
            id: chunks[0]!.id,
            reason:
              'the dimension cannot be taken from the first vector (it is empty or not an array of numbers)',
          },
        ],
      });
    }
    const packed = new Float32Array(chunks.length * dimension);
    chunks.forEach((chunk, index) => {
      const problem = writeCheckedVector(vectors[index], dimension, this.metric, packed, index * dimension);
      if (problem !== undefined) problems.push({ index, id: chunk.id, reason: problem });
    });
    if (problems.length > 0) throw new ChunkValidationError({ problems });
    return { dimension, packed };
  }
}

/** `new FaissStore(settings)`. */
export function createFaissStore(settings?: FaissStoreSettings): FaissStore {
  return new FaissStore(settings);
}

/** Options that name another backend's filter: honouring them is impossible here, ignoring them would be wrong. */
const FOREIGN_FILTER_OPTIONS = ['filter', 'where'] as const;

function checkSearchOptions(options: FaissSearchOptions): FaissSearchOptions {
  checkVectorSearchOptions(options);
  const { docIdFilter } = options;
  if (
    docIdFilter !== undefined &&
    (!Array.isArray(docIdFilter) || !docIdFilter.every((id) => typeof id === 'string'))
  ) {
    throw new InvalidArgumentError({
      argument: 'docIdFilter',
      value: docIdFilter,
      message: 'expected an array of document ids (strings)',
    });
  }
  const record = options as unknown as Record<string, unknown>;
  for (const option of FOREIGN_FILTER_OPTIONS) {
    if (record[option] !== undefined) {
      throw new InvalidArgumentError({
        argument: option,
        value: record[option],
        message:
          'the FAISS store filters only by document id (`docIdFilter`); pass metadata filters to a VectorRetriever (or resolveFilter), which evaluates what FAISS cannot',
      });
    }
  }
  return options;
}

/** A copy the caller may change without touching the stored chunk. */
function copyChunk(chunk: Chunk): Chunk {
  const copy: Chunk = { id: chunk.id, text: chunk.text };
  if (chunk.docId !== undefined) copy.docId = chunk.docId;
  if (chunk.metadata !== undefined) {
    const metadata: NonNullable<Chunk['metadata']> = {};
    for (const [key, value] of Object.entries(chunk.metadata))
      metadata[key] = Array.isArray(value) ? [...value] : value;
    copy.metadata = metadata;
  }
  return copy;
}

/** faiss-node takes plain arrays only; a preallocated array filled in a loop is the fastest copy. */
function toNumberArray(values: Float32Array): number[] {
  const array = new Array<number>(values.length);
  for (let index = 0; index < values.length; index++) array[index] = values[index]!;
  return array;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
