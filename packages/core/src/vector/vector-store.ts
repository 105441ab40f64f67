import { chunked, mapWithConcurrency } from '../backend/pool.js';
import { abortable } from '../backend/timeout.js';
import {
  BackendError,
  BatchWriteError,
  type ChunkProblem,
  ChunkValidationError,
  ContractVersionError,
  FilterError,
  InvalidArgumentError,
  throwIfAborted,
  ZerdaError,
} from '../errors/index.js';
import {
  compileFilter,
  type FilterConvention,
  isNativeFilter,
  type NativeFilter,
  parseFilter,
  resolveFilter,
} from '../filter/index.js';
import type { Chunk, Warning } from '../model/index.js';
import type {
  DistanceMetric,
  DriverCallOptions,
  DriverMatch,
  SparseCapabilities,
  SparseVector,
  VectorDriver,
  VectorRecord,
} from './driver.js';
import type { Embedder } from './embedder.js';
import { scoreConversions, toSimilarity } from './score-conversion.js';
import { scaleSparse, sparseVectorProblem } from './sparse-vectors.js';
import {
  checkVectorSearchOptions,
  embedChunksForStore,
  embedQueryForStore,
  prepareAddBatch,
} from './store-helpers.js';
import type {
  AddOptions,
  AddResult,
  CallOptions,
  HybridSearchOptions,
  ListedRecords,
  ListOptions,
  VectorDatabase,
  VectorDatabaseCapabilities,
  VectorHit,
  VectorSearchOptions,
  VectorSearchResult,
  VectorStoreOf,
} from './vector-database.js';
import { checkVector, isNumberArray } from './vector-input.js';

export interface VectorStoreSettings {
  /** Embeds chunk texts on `add` (when no `embeddings` are given) and query texts on `search`. */
  embedder?: Embedder | undefined;
  /** Vector dimension. Default: the embedder's, else the driver's, else the first vectors added. */
  dimension?: number | undefined;
  /** Refuse any `filter` the backend cannot evaluate whole (FilterError) instead of evaluating the rest here. */
  strictFilters?: boolean | undefined;
  /** First fetch when part of a filter is evaluated here, as a multiple of topK (default 2). */
  initialFetchFactor?: number | undefined;
  /** Factor by which that fetch widens until topK match or the store is exhausted (default 4). */
  widenFactor?: number | undefined;
}

const storeBrand = Symbol.for('zerda.vectorStore');
const DEFAULT_PAGE_SIZE = 1000;

/**
 * Turns a driver (contract v2) into the store users call. Everything a store does beyond the
 * driver's raw operations happens here, once for every backend: see `VectorDatabase`. Anything
 * that is not a v2 driver is refused with a ContractVersionError naming the version found.
 */
export function createVectorStore<Driver extends VectorDriver<unknown>>(
  driver: Driver,
  settings: VectorStoreSettings = {},
): VectorStoreOf<Driver> {
  return new VectorStore(driver, settings) as unknown as VectorStoreOf<Driver>;
}

/** True for a store made by `createVectorStore` (by any installed copy of core). */
export function isVectorStore(value: unknown): value is VectorDatabase {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[storeBrand] === true
  );
}

/**
 * What retrievers and collections do with what they are handed: a store made by core passes; a
 * v2 driver is made into a store; anything else (a v1 store, an unknown version) is a
 * ContractVersionError that says what to do.
 */
export function toVectorStore(value: unknown, argument = 'store'): VectorDatabase {
  if (isVectorStore(value)) return value;
  checkDriver(value, argument);
  return createVectorStore(value as VectorDriver);
}

function checkDriver(value: unknown, argument: string): asserts value is VectorDriver {
  if (value === null || typeof value !== 'object') {
    throw new InvalidArgumentError({
      argument,
      value,
      message: 'expected a vector store (createChromaStore, createInMemoryVectorStore, ...) or a v2 driver',
    });
  }
  const found = (value as { specificationVersion?: unknown }).specificationVersion;
  if (found !== 'v2') {
    const name = (value as { name?: unknown }).name;
    throw new ContractVersionError({
      contract: 'vector database',
      found,
      expected: 'v2',
      message: `${typeof name === 'string' ? `'${name}'` : 'The vector database'} implements contract ${found === undefined ? 'with no specificationVersion' : `version ${JSON.stringify(found)}`}; this @zerda/core takes drivers of version 'v2' (see CONTRIBUTING.md: a driver implements upsert, query, get and count, and createVectorStore(driver) makes the store). Upgrade the backend package, or port the store to a v2 driver.`,
    });
  }
  const driver = value as VectorDriver;
  for (const method of ['upsert', 'query', 'get', 'count'] as const) {
    if (typeof driver[method] !== 'function') {
      throw new InvalidArgumentError({
        argument,
        message: `the v2 driver '${driver.name}' has no ${method}()`,
      });
    }
  }
  const { metric, scoreConversion } = driver.capabilities ?? ({} as VectorDriver['capabilities']);
  if (metric !== 'cosine' && metric !== 'dot' && metric !== 'l2') {
    throw new InvalidArgumentError({
      argument: `${argument}.capabilities.metric`,
      value: metric,
      message: "expected 'cosine', 'dot' or 'l2'",
    });
  }
  if (!scoreConversions.includes(scoreConversion)) {
    throw new InvalidArgumentError({
      argument: `${argument}.capabilities.scoreConversion`,
      value: scoreConversion,
      message: `expected one of ${scoreConversions.map((c) => `'${c}'`).join(', ')}`,
    });
  }
}

/**
 * The store made from a driver. Built with `createVectorStore`; core's own stores (the in-memory
 * store) extend it to add what only they have (stats, save).
 */
export class VectorStore<Native = unknown> implements VectorDatabase<Native> {
  readonly [storeBrand] = true;
  readonly specificationVersion = 'v2' as const;
  readonly driver: VectorDriver<Native>;
  declare delete?: (ids: readonly string[], options?: CallOptions) => Promise<number>;
  declare list?: (options?: ListOptions) => AsyncIterable<Chunk[]>;
  declare listRecords?: (options?: ListOptions) => AsyncIterable<ListedRecords>;
  declare searchSparse?: (
    sparse: SparseVector,
    options: VectorSearchOptions<Native>,
  ) => Promise<VectorSearchResult>;
  declare searchHybrid?: (
    query: string | Float32Array | readonly number[],
    sparse: SparseVector,
    options: HybridSearchOptions<Native>,
  ) => Promise<VectorSearchResult>;

  readonly #embedder: Embedder | undefined;
  readonly #strictFilters: boolean;
  readonly #initialFetchFactor: number;
  readonly #widenFactor: number;
  #dimension: number | undefined;
  #opened: Promise<void> | undefined;

  constructor(driver: VectorDriver<Native>, settings: VectorStoreSettings) {
    checkDriver(driver, 'driver');
    const { embedder, dimension, strictFilters = false, initialFetchFactor = 2, widenFactor = 4 } = settings;
    if (dimension !== undefined && !(Number.isSafeInteger(dimension) && dimension > 0)) {
      throw new InvalidArgumentError({
        argument: 'dimension',
        value: dimension,
        message: 'expected a positive integer',
      });
    }
    if (embedder !== undefined && dimension !== undefined && embedder.dimension !== dimension) {
      throw new InvalidArgumentError({
        argument: 'dimension',
        value: dimension,
        message: `the embedder produces ${embedder.dimension} dimensions`,
      });
    }
    if (!(Number.isFinite(initialFetchFactor) && initialFetchFactor >= 1)) {
      throw new InvalidArgumentError({
        argument: 'initialFetchFactor',
        value: initialFetchFactor,
        message: 'expected a number of at least 1',
      });
    }
    if (!(Number.isFinite(widenFactor) && widenFactor > 1)) {
      throw new InvalidArgumentError({
        argument: 'widenFactor',
        value: widenFactor,
        message: 'expected a number above 1',
      });
    }
    this.driver = driver;
    this.#embedder = embedder;
    this.#dimension = dimension ?? embedder?.dimension;
    this.#strictFilters = strictFilters;
    this.#initialFetchFactor = initialFetchFactor;
    this.#widenFactor = widenFactor;
    // Optional operations exist exactly where the driver has them (no method that only throws).
    if (typeof driver.delete === 'function') this.delete = (ids, options) => this.#delete(ids, options);
    if (typeof driver.list === 'function') {
      this.list = (options) => this.#list(options);
      this.listRecords = (options) => this.#listRecords(options ?? {}, true);
    }
    const { querySparse, queryHybrid } = driver;
    if (typeof querySparse === 'function') {
      this.searchSparse = async (sparse, options) => {
        const limits = this.#sparseLimits('searchSparse');
        checkVectorSearchOptions(options);
        checkSparseQuery(sparse, limits);
        return this.#rank(
          options,
          async () => (topK, filter, call) => querySparse.call(driver, sparse, { topK, filter, ...call }),
        );
      };
    }
    if (typeof queryHybrid === 'function') {
      this.searchHybrid = async (query, sparse, options) => {
        const limits = this.#sparseLimits('searchHybrid');
        const { denseWeight = 1, sparseWeight = 1, ...rest } = checkHybridOptions(options);
        checkSparseQuery(sparse, limits);
        // The database sums the two dot products: weighting the query vectors weighs the sums.
        const weighted = scaleSparse(sparse, sparseWeight);
        return this.#rank(rest, async () => {
          const vector = await this.#checkedQueryVector(query, rest.signal);
          const dense = denseWeight === 1 ? vector : vector.map((x) => x * denseWeight);
          return (topK, filter, call) => queryHybrid.call(driver, dense, weighted, { topK, filter, ...call });
        });
      };
    }
  }

  get name(): string {
    return this.driver.name;
  }

  get embedder(): Embedder | undefined {
    return this.#embedder;
  }

  get filterConvention(): FilterConvention<Native> | undefined {
    return this.driver.filterConvention;
  }

  get capabilities(): VectorDatabaseCapabilities {
    return {
      ...this.driver.capabilities,
      deletion: typeof this.driver.delete === 'function',
      listing: typeof this.driver.list === 'function',
    };
  }

  get dimension(): number | undefined {
    return this.#dimension ?? this.driver.dimension;
  }

  get #metric(): DistanceMetric {
    return this.driver.capabilities.metric;
  }

  async add(input: readonly unknown[], options: AddOptions = {}): Promise<AddResult> {
    const { embeddings, signal, onProgress, sparseVectors } = options;
    throwIfAborted(signal);
    const chunks = prepareAddBatch(input, embeddings);
    if (sparseVectors !== undefined) this.#checkSparseVectors(sparseVectors, chunks.length);
    if (chunks.length === 0) return { ids: [] };
    const vectors: ReadonlyArray<unknown> =
      embeddings ?? (await embedChunksForStore(this.#embedder, chunks, signal));
    throwIfAborted(signal);
    await this.#open(signal);
    const records = this.#toRecords(chunks, vectors, sparseVectors);

    const { maxBatchSize, maxConcurrentWrites = 1 } = this.driver.capabilities;
    const batches = chunked(records, maxBatchSize ?? records.length);
    const written = new Set<string>();
    const warnings: Warning[] = [];
    const warn = (warning: Warning) => addWarning(warnings, warning);
    try {
      await mapWithConcurrency(
        batches,
        maxConcurrentWrites,
        async (batch) => {
          try {
            await this.driver.upsert(batch, { signal, warn });
          } catch (error) {
            // A driver that split the batch itself says which of its records it wrote.
            if (BatchWriteError.isInstance(error)) for (const id of error.writtenIds) written.add(id);
            throw error;
          }
          for (const record of batch) written.add(record.id);
          this.#dimension ??= batch[0]?.vector.length;
          onProgress?.({ written: written.size, total: records.length });
        },
        { signal },
      );
    } catch (error) {
      throw this.#partialWriteError(error, records, written);
    }
    const ids = chunks.map((chunk) => chunk.id);
    return warnings.length > 0 ? { ids, warnings } : { ids };
  }

  async search(
    query: string | Float32Array | readonly number[],
    options: VectorSearchOptions<Native>,
  ): Promise<VectorSearchResult> {
    checkVectorSearchOptions(options);
    return this.#rank(
      options,
      async () => {
        const vector = await this.#checkedQueryVector(query, options.signal);
        return (topK, filter, call) => this.driver.query(vector, { topK, filter, ...call });
      },
      // Read per hit: a driver may learn its score direction from its first answer.
      (score) =>
        toSimilarity(this.driver.capabilities.scoreConversion, this.driver.capabilities.metric, score),
    );
  }

  /**
   * What every search does around the driver's query: the filter resolved (native part pushed
   * down, the rest evaluated here with a widening fetch), every hit re-checked, the threshold, one
   * tie order. `prepare` readies the query (embedding, checks) once the filters are known to be
   * valid; `convert` turns the driver's scores into similarities (sparse dot products are).
   */
  async #rank(
    options: VectorSearchOptions<Native>,
    prepare: () => Promise<
      (topK: number, filter: Native | undefined, call: DriverCallOptions) => Promise<readonly DriverMatch[]>
    >,
    convert: (score: number) => number = (score) => score,
  ): Promise<VectorSearchResult> {
    const { topK, scoreThreshold, filter, nativeFilter, signal } = options;
    throwIfAborted(signal);
    if (filter !== undefined && nativeFilter !== undefined) {
      throw new InvalidArgumentError({
        argument: 'nativeFilter',
        message: 'give either `filter` (Zerda language) or `nativeFilter` (the backend’s own), not both',
      });
    }
    const given = nativeFilter === undefined ? undefined : this.#checkNativeFilter(nativeFilter);
    // Resolving validates the filter: a bad one fails before the database is called.
    const resolved =
      filter === undefined
        ? undefined
        : resolveFilter(this, filter, { strict: options.strictFilters ?? this.#strictFilters });
    const query = await prepare();
    await this.#open(signal);

    const warnings: Warning[] = [...(resolved?.warnings ?? [])];
    const warn = (warning: Warning) => addWarning(warnings, warning);
    const native = given ?? (resolved?.native === undefined ? undefined : (resolved.native.filter as Native));
    const fetch = async (count: number): Promise<VectorHit[]> => {
      const matches = await this.#call('search', () => query(count, native, { signal, warn }));
      return this.#toHits(matches, signal, convert);
    };

    // Every hit is checked against the whole filter, the pushed part included: a database caught
    // mid-write can return a record its filter does not match (seen with Chroma under concurrent
    // upserts), and such a hit is left out, with a warning, never returned.
    const matches =
      filter === undefined || (resolved?.pushed === undefined && resolved?.residual === undefined)
        ? undefined
        : compileFilter(parseFilter(filter));
    let mismatched = 0;
    const keep = (candidates: VectorHit[]): VectorHit[] => {
      if (matches === undefined) return candidates;
      const kept = candidates.filter((hit) => matches(hit.chunk));
      if (resolved?.residual === undefined) mismatched += candidates.length - kept.length;
      return kept;
    };
    let hits: VectorHit[];
    if (resolved?.residual === undefined) {
      hits = keep(await fetch(topK));
    } else {
      const available = await this.count({ ...(signal === undefined ? {} : { signal }) });
      let size = Math.min(
        Math.max(topK, Math.ceil(topK * this.#initialFetchFactor)),
        Math.max(available, topK),
      );
      for (;;) {
        const candidates = await fetch(size);
        hits = keep(candidates);
        // Done once topK match, or the store returned everything it had.
        if (hits.length >= topK || candidates.length < size || size >= available) break;
        size = Math.min(Math.ceil(size * this.#widenFactor), available);
      }
    }
    if (mismatched > 0) {
      warn({
        type: 'other',
        source: this.driver.name,
        message: `the ${this.driver.name} backend returned ${mismatched} hit(s) that do not match the filter it was given (its data changing under a concurrent write?); they were left out`,
      });
    }
    if (scoreThreshold !== undefined) hits = hits.filter((hit) => hit.score >= scoreThreshold);
    // One tie order everywhere: score, then id.
    hits.sort(
      (a, b) => b.score - a.score || (a.chunk.id < b.chunk.id ? -1 : a.chunk.id > b.chunk.id ? 1 : 0),
    );
    return { hits: hits.slice(0, topK), warnings };
  }

  async get(ids: readonly string[], options: CallOptions = {}): Promise<Chunk[]> {
    const { signal } = options;
    const unique = checkIds(ids);
    throwIfAborted(signal);
    if (unique.length === 0) return [];
    await this.#open(signal);
    const found = new Map<string, Chunk>();
    for (const batch of this.#idBatches(unique)) {
      const chunks = await this.#call('get', () => this.driver.get(batch, { signal }));
      for (const chunk of chunks) found.set(chunk.id, chunk);
    }
    return unique.flatMap((id) => {
      const chunk = found.get(id);
      return chunk === undefined ? [] : [chunk];
    });
  }

  async count(options: CallOptions = {}): Promise<number> {
    throwIfAborted(options.signal);
    await this.#open(options.signal);
    return this.#call('count', () => this.driver.count({ signal: options.signal }));
  }

  async close(): Promise<void> {
    await this.driver.close?.();
  }

  async #delete(ids: readonly string[], options: CallOptions = {}): Promise<number> {
    const { signal } = options;
    const unique = checkIds(ids);
    throwIfAborted(signal);
    if (unique.length === 0) return 0;
    await this.#open(signal);
    const driver = this.driver as VectorDriver<Native> & Required<Pick<VectorDriver<Native>, 'delete'>>;
    let removed = 0;
    for (const batch of this.#idBatches(unique)) {
      removed += await this.#call('delete', () => driver.delete(batch, { signal }));
    }
    return removed;
  }

  async *#list(options: ListOptions = {}): AsyncGenerator<Chunk[]> {
    for await (const page of this.#listRecords(options, false)) yield page.chunks;
  }

  async *#listRecords(options: ListOptions, includeVectors: boolean): AsyncGenerator<ListedRecords> {
    const { signal, pageSize = DEFAULT_PAGE_SIZE } = options;
    if (!(Number.isSafeInteger(pageSize) && pageSize > 0)) {
      throw new InvalidArgumentError({
        argument: 'pageSize',
        value: pageSize,
        message: 'expected a positive integer',
      });
    }
    await this.#open(signal);
    const driver = this.driver as VectorDriver<Native> & Required<Pick<VectorDriver<Native>, 'list'>>;
    let cursor: string | undefined;
    do {
      throwIfAborted(signal);
      const page = await this.#call('list', () =>
        driver.list({ cursor, limit: pageSize, signal, includeVectors }),
      );
      const vectors =
        includeVectors && page.vectors?.length === page.chunks.length ? [...page.vectors] : undefined;
      if (page.chunks.length > 0) yield { chunks: [...page.chunks], vectors };
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /** Opens the driver once (again after a failed attempt); callers stop waiting when their signal fires. */
  async #open(signal: AbortSignal | undefined): Promise<void> {
    throwIfAborted(signal);
    const open = this.driver.open;
    if (open === undefined) return;
    this.#opened ??= this.#call('open', () => open.call(this.driver, {})).catch((error: unknown) => {
      this.#opened = undefined;
      throw error;
    });
    await abortable(this.#opened, signal);
    const known = this.driver.dimension;
    if (known !== undefined && this.#dimension !== undefined && known !== this.#dimension) {
      throw new InvalidArgumentError({
        argument: 'dimension',
        value: this.#dimension,
        message: `the ${this.driver.name} collection holds vectors of ${known} dimensions`,
      });
    }
    this.#dimension ??= known;
  }

  async #call<T>(operation: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw wrapBackendError(this.driver.name, operation, error);
    }
  }

  #idBatches(ids: string[]): string[][] {
    return chunked(
      ids,
      this.driver.capabilities.maxIdsPerCall ?? this.driver.capabilities.maxBatchSize ?? ids.length,
    );
  }

  /**
   * Every vector checked (one dimension, finite, float32), every sparse vector against the
   * database's limits, and every record by the driver; one error lists all problems.
   */
  #toRecords(
    chunks: Chunk[],
    vectors: ReadonlyArray<unknown>,
    sparseVectors: ReadonlyArray<SparseVector> | undefined,
  ): VectorRecord[] {
    const first = vectors[0];
    const dimension = this.dimension ?? (isNumberArray(first) ? first.length : 0);
    const sparseLimits = this.driver.capabilities.sparse;
    const problems: ChunkProblem[] = [];
    const records: VectorRecord[] = [];
    chunks.forEach((chunk, index) => {
      const vector = vectors[index];
      const checked = checkVector(vector, dimension, this.#metric);
      if (typeof checked === 'string') {
        problems.push({ index, id: chunk.id, reason: checked });
        return;
      }
      const sparse = sparseVectors?.[index];
      if (sparseVectors !== undefined && sparseLimits !== undefined) {
        const sparseProblem = sparseVectorProblem(sparse, sparseLimits);
        if (sparseProblem !== undefined) {
          problems.push({ index, id: chunk.id, reason: `sparse vector: ${sparseProblem}` });
          return;
        }
      }
      // A Float32Array is written as given (drivers copy or send it before add returns).
      records.push({
        ...chunk,
        vector: vector instanceof Float32Array ? vector : Float32Array.from(vector as ArrayLike<number>),
        ...(sparse === undefined ? {} : { sparse }),
      });
    });
    if (problems.length === 0 && this.driver.checkRecords) {
      for (const problem of this.driver.checkRecords(records)) {
        problems.push({ index: problem.index, id: records[problem.index]?.id ?? '', reason: problem.reason });
      }
    }
    if (problems.length > 0) throw new ChunkValidationError({ problems });
    return records;
  }

  #partialWriteError(error: unknown, records: VectorRecord[], written: Set<string>): unknown {
    const wrapped = wrapBackendError(this.driver.name, 'add', error);
    // An abort (or another refusal of Zerda's) before the first write stays as it is; a failure of
    // the backend names the ids written and not written, even when that is none and all.
    if (written.size === 0 && !BackendError.isInstance(wrapped)) return wrapped;
    const writtenIds = records.filter((record) => written.has(record.id)).map((record) => record.id);
    const failedIds = records.filter((record) => !written.has(record.id)).map((record) => record.id);
    return new BatchWriteError({
      backend: this.driver.name,
      operation: 'add',
      message: `${writtenIds.length} of ${records.length} chunks were written before this failure (adding the others again is safe): ${wrapped.message}; not written: ${listIds(failedIds)}`,
      cause: error,
      retryable: BackendError.isInstance(wrapped) ? wrapped.retryable : false,
      writtenIds,
      failedIds,
    });
  }

  #checkNativeFilter(filter: NativeFilter<Native>): Native {
    const convention = this.driver.filterConvention;
    if (!isNativeFilter(filter)) {
      throw new FilterError({
        path: '',
        value: filter,
        reason: 'invalid',
        message: `nativeFilter must be made by nativeFilter(convention, value) or resolveFilter; a filter in Zerda's language goes in \`filter\``,
      });
    }
    if (convention === undefined || filter.convention !== convention.name) {
      throw new FilterError({
        path: '',
        value: filter.filter,
        reason: 'invalid',
        message: `a '${filter.convention}' native filter was given to the '${this.driver.name}' store, which ${convention === undefined ? 'takes no native filters' : `takes '${convention.name}' filters`}; give a Zerda filter as \`filter\` to have it translated`,
      });
    }
    const problem = convention.checkNative?.(filter.filter);
    if (problem !== undefined) {
      throw new FilterError({
        path: '',
        value: filter.filter,
        reason: 'invalid',
        message: `not a valid '${convention.name}' filter: ${problem}`,
      });
    }
    return filter.filter;
  }

  async #queryVector(
    query: string | Float32Array | readonly number[],
    signal: AbortSignal | undefined,
  ): Promise<Float32Array> {
    const fromText = typeof query === 'string';
    const vector: unknown = fromText ? await embedQueryForStore(this.#embedder, query, signal) : query;
    const problem = !isNumberArray(vector)
      ? checkVector(vector, 0, this.#metric)
      : vector.length === 0
        ? 'the vector is empty'
        : checkVector(vector, vector.length, this.#metric, 'refuse');
    if (typeof problem === 'string') {
      throw new InvalidArgumentError({
        argument: fromText ? 'embedder' : 'query',
        value: fromText ? query : undefined,
        message: fromText ? `the query embedding is unusable: ${problem}` : problem,
      });
    }
    return vector instanceof Float32Array ? vector : Float32Array.from(vector as ArrayLike<number>);
  }

  /** The query as a checked vector of the store's dimension (a text embedded by the store's embedder). */
  async #checkedQueryVector(
    query: string | Float32Array | readonly number[],
    signal: AbortSignal | undefined,
  ): Promise<Float32Array> {
    throwIfAborted(signal);
    const vector = await this.#queryVector(query, signal);
    // Checked before opening where the dimension is known, and again once the driver has told it.
    this.#checkQueryDimension(vector, query);
    await this.#open(signal);
    this.#checkQueryDimension(vector, query);
    return vector;
  }

  #sparseLimits(operation: string): SparseCapabilities {
    const limits = this.driver.capabilities.sparse;
    if (limits === undefined) {
      throw new InvalidArgumentError({
        argument: operation,
        message: `the ${this.driver.name} driver has ${operation === 'searchHybrid' ? 'queryHybrid' : 'querySparse'} but declares no capabilities.sparse`,
      });
    }
    return limits;
  }

  /** One sparse vector per chunk, each within the database's limits: checked before anything is written. */
  #checkSparseVectors(sparseVectors: ReadonlyArray<SparseVector>, count: number): void {
    const limits = this.driver.capabilities.sparse;
    if (limits === undefined) {
      throw new InvalidArgumentError({
        argument: 'sparseVectors',
        message: `the ${this.driver.name} store keeps no sparse vectors (create it with sparse vectors enabled, or keep the keyword side in-process)`,
      });
    }
    if (!Array.isArray(sparseVectors) || sparseVectors.length !== count) {
      throw new InvalidArgumentError({
        argument: 'sparseVectors',
        value: Array.isArray(sparseVectors) ? sparseVectors.length : sparseVectors,
        message: `expected one sparse vector per chunk (${count})`,
      });
    }
  }

  #checkQueryDimension(vector: Float32Array, query: unknown): void {
    const dimension = this.dimension;
    if (dimension !== undefined && vector.length !== dimension) {
      throw new InvalidArgumentError({
        argument: typeof query === 'string' ? 'embedder' : 'query',
        message: `the vector has ${vector.length} dimensions, the store has ${dimension}`,
      });
    }
  }

  async #toHits(
    matches: readonly DriverMatch[],
    signal: AbortSignal | undefined,
    convert: (score: number) => number,
  ): Promise<VectorHit[]> {
    const missing = matches.filter((match) => match.chunk === undefined).map((match) => match.id);
    const fetched =
      missing.length === 0
        ? undefined
        : new Map(
            (await this.get(missing, { ...(signal === undefined ? {} : { signal }) })).map((chunk) => [
              chunk.id,
              chunk,
            ]),
          );
    const hits: VectorHit[] = [];
    for (const match of matches) {
      const chunk = match.chunk ?? fetched?.get(match.id);
      if (chunk === undefined) continue; // deleted between the query and the fetch
      if (typeof match.score !== 'number' || Number.isNaN(match.score)) {
        throw new BackendError({
          backend: this.driver.name,
          operation: 'search',
          message: `the ${this.driver.name} backend returned no score for '${match.id}'`,
        });
      }
      hits.push({ chunk, score: convert(match.score) });
    }
    return hits;
  }
}

/** The first ids of a list, quoted, for messages: '"a", "b" and 98 more'. */
function listIds(ids: readonly string[], shown = 10): string {
  const head = ids.slice(0, shown).map((id) => JSON.stringify(id));
  return ids.length > shown ? `${head.join(', ')} and ${ids.length - shown} more` : head.join(', ');
}

function checkIds(ids: readonly string[]): string[] {
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    throw new InvalidArgumentError({ argument: 'ids', value: ids, message: 'expected an array of strings' });
  }
  return [...new Set(ids)];
}

/** A sparse query vector the database can take, or an InvalidArgumentError saying why not. */
function checkSparseQuery(sparse: unknown, limits: SparseCapabilities): void {
  const problem = sparseVectorProblem(sparse, limits);
  if (problem !== undefined) throw new InvalidArgumentError({ argument: 'sparse', message: problem });
}

/** `searchHybrid`'s options: the search options plus two finite weights. */
function checkHybridOptions<Native>(options: HybridSearchOptions<Native>): HybridSearchOptions<Native> {
  const { denseWeight, sparseWeight, ...rest } = options ?? ({} as HybridSearchOptions<Native>);
  for (const [argument, weight] of [
    ['denseWeight', denseWeight],
    ['sparseWeight', sparseWeight],
  ] as const) {
    if (weight !== undefined && !(typeof weight === 'number' && Number.isFinite(weight) && weight >= 0)) {
      throw new InvalidArgumentError({
        argument,
        value: weight,
        message: 'expected a finite number of at least 0',
      });
    }
  }
  checkVectorSearchOptions(rest as VectorSearchOptions<Native>);
  return options;
}

/** Adds a driver's warning to a result's, once (a widening search or a batched add repeats it). */
function addWarning(warnings: Warning[], warning: Warning): void {
  const known = warnings.some((other) => other.type === warning.type && other.message === warning.message);
  if (!known) warnings.push(warning);
}

/** Zerda's own errors pass through; anything else from a backend becomes a BackendError with its cause. */
export function wrapBackendError(backend: string, operation: string, error: unknown): ZerdaError {
  if (ZerdaError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new BackendError({ backend, operation, message, cause: error });
}
