import type { DocumentInterface } from '@langchain/core/documents';
import type { VectorStoreInterface } from '@langchain/core/vectorstores';
import {
  type AddOptions,
  type AddResult,
  BackendError,
  type Chunk,
  type ChunkProblem,
  ChunkValidationError,
  checkVectorSearchOptions,
  compileFilter,
  type DistanceMetric,
  type Embedder,
  type FilterConvention,
  type FilterNode,
  InvalidArgumentError,
  prepareAddBatch,
  throwIfAborted,
  type VectorDatabase,
  type VectorDatabaseCapabilities,
  type VectorHit,
  type VectorSearchOptions,
  type VectorSearchResult,
  type Warning,
  wrapBackendError,
} from '@zerda/core';
import { chunkToStoredDocument, type StoredMetadataKeys, storedDocumentToChunk } from './documents.js';
import {
  type DistanceConversion,
  knownScoreKinds,
  type ScoreConverter,
  type ScoreKind,
  scoreConverter,
  scoreOrder,
} from './score-direction.js';
import { raceAbort } from './signal.js';

/** The native search option of a wrapped LangChain store: its own filter, passed through as is. */
export interface LangChainNativeOptions<Filter = unknown> {
  /** The store's own filter type (`store.FilterType`), handed to its search unchanged. */
  nativeFilter: Filter;
}

export type LangChainSearchOptions<Filter = unknown> = VectorSearchOptions &
  Partial<LangChainNativeOptions<Filter>>;

/**
 * How ids already in the store are replaced on `add`:
 * - `'delete-first'` (default when the store implements `delete`): delete the batch's ids, then add;
 * - `'native'`: the store itself replaces documents with the same id (say so only if it does);
 * - `'append'` (default when it cannot delete): add only; an id added twice is stored twice and
 *   searches return it once (its best-scoring copy, which may be the older one).
 */
export type UpsertMode = 'delete-first' | 'native' | 'append';

export interface LangChainVectorDatabaseOptions {
  /** Name in errors and warnings (default `langchain:<store._vectorstoreType()>`). */
  name?: string;
  /** The metric the store ranks by (default 'cosine'); it picks the default distance conversion. */
  metric?: DistanceMetric;
  /**
   * Whether the store's scores are similarities or distances. Default: the known direction of
   * the store's type (see `knownScoreKinds`), else learnt from the order of the first result
   * with two different scores (ascending means distances); until then scores are taken as
   * similarities and results carry a warning. A declared kind that the results contradict is
   * kept, with a warning.
   */
  scoreKind?: ScoreKind;
  /**
   * How distances become similarities (default by metric: cosine `1 - d`, l2 `1/(1+d)`, dot `-d`).
   * Giving one implies `scoreKind: 'distance'`.
   */
  distanceConversion?: DistanceConversion;
  /**
   * What embeds chunk texts on `add` (when no embeddings are given) and text queries on `search`:
   * - `'store'` (default when the store has `embeddings`): the store itself, through
   *   `addDocuments` and `similaritySearchWithScore`;
   * - a Zerda `Embedder`: texts and queries are embedded here and sent as vectors;
   * - `'none'` (default when the store has no `embeddings`): only vectors are accepted; adding
   *   without embeddings and text queries are InvalidArgumentErrors.
   */
  embedder?: Embedder | 'store' | 'none';
  /** Vector dimension, where known up front (default: the embedder's, else the first vectors added). */
  dimension?: number;
  /**
   * How Zerda filters reach the store. Default: no convention, so the whole filter is evaluated
   * client-side on the candidates (the residual path of `resolveFilter` and `VectorRetriever`).
   * `'document-predicate'`: for stores whose native filter is a function of a Document
   * (MemoryVectorStore, FakeVectorStore, HNSWLib...), the filter is pushed down whole as such a
   * function, evaluated with Zerda's reference semantics. A FilterConvention (for example core's
   * `pineconeFilterConvention` for LangChain's Pinecone store) translates the pushable part into
   * the store's native filter; its `option` is replaced by `nativeFilter`.
   */
  filterConvention?: FilterConvention | 'document-predicate';
  /** Whether the store implements `delete({ ids })` (default: whether it overrides VectorStore's). */
  deletion?: boolean;
  /** See `UpsertMode`. */
  upsert?: UpsertMode;
  /** Whether the store keeps its data across restarts (default false). */
  persistent?: boolean;
  /** Largest number of documents per write call (default: one call per `add`). */
  maxBatchSize?: number;
  /**
   * Counts the store's documents. Default: the length of its `memoryVectors` (MemoryVectorStore,
   * FakeVectorStore), else a probe search for `maxFetch` results (exact up to `maxFetch`).
   */
  count?: (options: { signal?: AbortSignal }) => Promise<number>;
  /** Largest number of results asked of the store by a count probe (default 10,000). */
  maxFetch?: number;
  /** Metadata keys where the chunk's id and docId are kept (default `_zerda_id`, `_zerda_doc_id`). */
  metadataKeys?: Partial<StoredMetadataKeys>;
}

const documentPredicate = 'document-predicate';

/**
 * Any LangChain `VectorStore` as a Zerda `VectorDatabase` (v1), so that Zerda's vector and hybrid
 * retrievers run over anything LangChain connects to. Searches go through
 * `similaritySearchVectorWithScore` (vector queries, or text embedded by `embedder`) or
 * `similaritySearchWithScore` (text, embedded by the store). Scores are normalised to
 * similarities. Every error thrown by the store becomes a BackendError with the original as
 * `cause` (Zerda's own errors pass unchanged).
 *
 * The chunk id is written both as the Document's `id` and as `metadata._zerda_id`, so it survives
 * stores that drop Document ids; documents that Zerda did not write get the id `Document.id`, or
 * `sha256:<hash of the text>` when they have none.
 */
export class LangChainVectorDatabase<Store extends VectorStoreInterface = VectorStoreInterface>
  implements VectorDatabase<LangChainNativeOptions<Store['FilterType']>>
{
  readonly specificationVersion = 'v1' as const;
  readonly name: string;
  readonly store: Store;
  readonly filterConvention: FilterConvention | undefined;
  private readonly metric: DistanceMetric;
  private readonly declaredKind: ScoreKind | undefined;
  private learntKind: ScoreKind | undefined;
  private readonly conversion: DistanceConversion | undefined;
  private readonly converters = new Map<ScoreKind, ScoreConverter>();
  /** A Zerda embedder, or how texts are embedded without one. */
  private readonly embedding: Embedder | 'store' | 'none';
  private readonly declaredDimension: number | undefined;
  private observedDimension: number | undefined;
  private readonly deletion: boolean;
  private readonly upsert: UpsertMode;
  private readonly persistent: boolean;
  private readonly maxBatchSize: number | undefined;
  private readonly countOption: LangChainVectorDatabaseOptions['count'];
  private readonly maxFetch: number;
  private readonly keys: StoredMetadataKeys;

  constructor(store: Store, options: LangChainVectorDatabaseOptions = {}) {
    if (
      store === null ||
      typeof store !== 'object' ||
      typeof store.similaritySearchVectorWithScore !== 'function' ||
      typeof store.addVectors !== 'function'
    ) {
      throw new InvalidArgumentError({
        argument: 'store',
        message: 'expected a LangChain VectorStore (with addVectors and similaritySearchVectorWithScore)',
      });
    }
    this.store = store;
    const type = storeType(store);
    this.name = options.name ?? `langchain:${type}`;
    this.metric = options.metric ?? 'cosine';
    if (!['cosine', 'dot', 'l2'].includes(this.metric)) {
      throw new InvalidArgumentError({
        argument: 'metric',
        value: this.metric,
        message: "expected 'cosine', 'dot' or 'l2'",
      });
    }
    if (
      options.scoreKind !== undefined &&
      options.scoreKind !== 'similarity' &&
      options.scoreKind !== 'distance'
    ) {
      throw new InvalidArgumentError({
        argument: 'scoreKind',
        value: options.scoreKind,
        message: "expected 'similarity' or 'distance'",
      });
    }
    this.conversion = options.distanceConversion;
    // A distance conversion says that scores are distances.
    this.declaredKind = options.scoreKind ?? (this.conversion === undefined ? undefined : 'distance');
    this.learntKind = this.declaredKind ?? knownScoreKinds[type];
    // Checks the conversion now (a similarity with a conversion, or an unknown one, throws).
    if (this.conversion !== undefined)
      scoreConverter(this.declaredKind ?? 'distance', this.metric, this.conversion);
    const embedding = options.embedder ?? (store.embeddings ? 'store' : 'none');
    if (
      embedding !== 'store' &&
      embedding !== 'none' &&
      (embedding === null || typeof embedding.embed !== 'function')
    ) {
      throw new InvalidArgumentError({
        argument: 'embedder',
        value: embedding,
        message: "expected a Zerda Embedder, 'store' or 'none'",
      });
    }
    this.embedding = embedding;
    this.declaredDimension = positiveInteger(options.dimension, 'dimension');
    this.deletion = options.deletion ?? implementsDelete(store);
    this.upsert = options.upsert ?? (this.deletion ? 'delete-first' : 'append');
    if (!['delete-first', 'native', 'append'].includes(this.upsert)) {
      throw new InvalidArgumentError({
        argument: 'upsert',
        value: this.upsert,
        message: "expected 'delete-first', 'native' or 'append'",
      });
    }
    if (this.upsert === 'delete-first' && !this.deletion) {
      throw new InvalidArgumentError({
        argument: 'upsert',
        value: this.upsert,
        message: "'delete-first' needs a store that implements delete",
      });
    }
    this.persistent = options.persistent ?? false;
    this.maxBatchSize = positiveInteger(options.maxBatchSize, 'maxBatchSize');
    this.countOption = options.count;
    this.maxFetch = positiveInteger(options.maxFetch, 'maxFetch') ?? 10_000;
    this.keys = {
      id: options.metadataKeys?.id ?? '_zerda_id',
      docId: options.metadataKeys?.docId ?? '_zerda_doc_id',
    };
    this.filterConvention = nativeConvention(options.filterConvention, this.keys);
  }

  get capabilities(): VectorDatabaseCapabilities {
    const kind = this.learntKind;
    return {
      metric: this.metric,
      persistent: this.persistent,
      deletion: this.deletion,
      ...(this.maxBatchSize === undefined ? {} : { maxBatchSize: this.maxBatchSize }),
      scoreConversion:
        kind === undefined
          ? 'not known yet: learnt from the order of the first results (declare scoreKind to be sure)'
          : this.converterFor(kind).description,
    };
  }

  /** Whether scores are similarities or distances, once declared, known or learnt. */
  get scoreKind(): ScoreKind | undefined {
    return this.learntKind;
  }

  get dimension(): number | undefined {
    return this.declaredDimension ?? knownDimension(this.zerdaEmbedder) ?? this.observedDimension;
  }

  private get zerdaEmbedder(): Embedder | undefined {
    return typeof this.embedding === 'object' ? this.embedding : undefined;
  }

  async add(input: readonly Chunk[], options: AddOptions = {}): Promise<AddResult> {
    const { embeddings, signal, onProgress } = options;
    throwIfAborted(signal);
    const chunks = prepareAddBatch(input, embeddings);
    if (chunks.length === 0) return { ids: [] };

    let vectors: number[][] | undefined;
    if (embeddings !== undefined) vectors = this.checkBatch(chunks, embeddings);
    else if (this.embedding === 'none') {
      throw new InvalidArgumentError({
        argument: 'embeddings',
        message: `no embeddings were given and ${this.name} has no embedder to compute them (embedder: 'none')`,
      });
    } else if (this.embedding !== 'store') {
      const embedded = await this.embedding.embed(
        chunks.map((chunk) => chunk.text),
        { signal },
      );
      vectors = this.checkBatch(chunks, embedded);
    }
    throwIfAborted(signal);

    const ids = chunks.map((chunk) => chunk.id);
    const documents = chunks.map((chunk) => chunkToStoredDocument(chunk, this.keys));
    if (this.upsert === 'delete-first') await this.call('add', () => this.store.delete({ ids }), signal);
    const size = this.maxBatchSize ?? chunks.length;
    for (let start = 0; start < chunks.length; start += size) {
      throwIfAborted(signal);
      const end = Math.min(start + size, chunks.length);
      const batchIds = ids.slice(start, end);
      const batchDocuments = documents.slice(start, end);
      await this.call(
        'add',
        () =>
          vectors === undefined
            ? this.store.addDocuments(batchDocuments, { ids: batchIds })
            : this.store.addVectors(vectors.slice(start, end), batchDocuments, { ids: batchIds }),
        signal,
      );
      onProgress?.({ written: end, total: chunks.length });
    }
    if (vectors !== undefined) this.observedDimension ??= vectors[0]?.length;
    const warnings: Warning[] =
      this.upsert === 'append'
        ? [
            {
              type: 'unsupported',
              source: this.name,
              message: `${this.name} cannot delete, so ids that were already stored are not replaced: they are stored twice and searches return one copy`,
            },
          ]
        : [];
    return warnings.length > 0 ? { ids, warnings } : { ids };
  }

  async search(
    query: string | Float32Array | readonly number[],
    options: LangChainSearchOptions<Store['FilterType']>,
  ): Promise<VectorSearchResult> {
    const { topK, scoreThreshold, signal, nativeFilter } = checkSearchOptions(options);
    throwIfAborted(signal);
    let pairs: Array<[DocumentInterface, number]>;
    if (typeof query === 'string' && this.embedding === 'none') {
      throw new InvalidArgumentError({
        argument: 'query',
        value: query,
        message: `a text query needs an embedder; ${this.name} has none (embedder: 'none'): search with a vector`,
      });
    }
    if (typeof query === 'string' && this.embedding === 'store') {
      pairs = await this.call(
        'search',
        () => this.store.similaritySearchWithScore(query, topK, nativeFilter as Store['FilterType']),
        signal,
      );
    } else {
      const vector =
        typeof query === 'string' ? await this.embedQuery(query, signal) : this.checkQuery(query);
      pairs = await this.call(
        'search',
        () => this.store.similaritySearchVectorWithScore(vector, topK, nativeFilter as Store['FilterType']),
        signal,
      );
    }
    if (!Array.isArray(pairs)) {
      throw new BackendError({
        backend: this.name,
        operation: 'search',
        message: `the store returned ${typeof pairs} instead of [Document, score] pairs`,
      });
    }
    const warnings: Warning[] = [];
    const converter = this.observe(
      pairs.map(([, score]) => score),
      warnings,
    );
    const seen = new Set<string>();
    const hits: VectorHit[] = [];
    for (const [document, raw] of pairs) {
      const chunk = storedDocumentToChunk(document, this.keys);
      if (seen.has(chunk.id)) continue;
      seen.add(chunk.id);
      const score = converter.convert(typeof raw === 'number' ? raw : Number.NaN);
      if (scoreThreshold !== undefined && !(score >= scoreThreshold)) continue;
      hits.push({ chunk, score });
    }
    // Stable: ties keep the store's order.
    hits.sort((a, b) => b.score - a.score);
    return warnings.length > 0 ? { hits: hits.slice(0, topK), warnings } : { hits: hits.slice(0, topK) };
  }

  /**
   * Deletes by id through the store's `delete({ ids })`. Returns how many existed, measured as
   * the count before minus the count after (so it is exact only when `count` is and nothing else
   * writes meanwhile). A store that cannot delete throws a BackendError.
   */
  async delete(ids: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number> {
    const { signal } = options;
    throwIfAborted(signal);
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
      throw new InvalidArgumentError({
        argument: 'ids',
        value: ids,
        message: 'expected an array of strings',
      });
    }
    if (!this.deletion) {
      throw new BackendError({
        backend: this.name,
        operation: 'delete',
        message: 'the LangChain store does not implement delete (capabilities.deletion is false)',
      });
    }
    if (ids.length === 0) return 0;
    const before = await this.count({ signal });
    await this.call('delete', () => this.store.delete({ ids: [...new Set(ids)] }), signal);
    const after = await this.count({ signal });
    return Math.max(0, before - after);
  }

  async count(options: { signal?: AbortSignal } = {}): Promise<number> {
    const { signal } = options;
    throwIfAborted(signal);
    if (this.countOption !== undefined) {
      const count = this.countOption;
      return this.call('count', () => count({ signal }), signal);
    }
    const memory = (this.store as { memoryVectors?: unknown }).memoryVectors;
    if (Array.isArray(memory)) {
      const ids = new Set<string>();
      for (const entry of memory as Array<{ content?: unknown; metadata?: unknown; id?: unknown }>) {
        ids.add(
          storedDocumentToChunk(
            {
              pageContent: typeof entry.content === 'string' ? entry.content : '',
              metadata: (entry.metadata ?? {}) as Record<string, unknown>,
              ...(typeof entry.id === 'string' ? { id: entry.id } : {}),
            },
            this.keys,
          ).id,
        );
      }
      return ids.size;
    }
    // A probe: everything the store returns for some query, up to maxFetch.
    const dimension = this.dimension;
    if (dimension === undefined && !this.store.embeddings) {
      throw new InvalidArgumentError({
        argument: 'count',
        message: `${this.name} cannot be counted before its dimension is known: give the \`dimension\` or \`count\` option`,
      });
    }
    const pairs = await this.call(
      'count',
      () =>
        dimension === undefined
          ? this.store.similaritySearchWithScore('', this.maxFetch)
          : this.store.similaritySearchVectorWithScore(probeVector(dimension), this.maxFetch),
      signal,
    );
    const ids = new Set<string>();
    for (const [document] of Array.isArray(pairs) ? pairs : []) {
      ids.add(storedDocumentToChunk(document, this.keys).id);
    }
    return ids.size;
  }

  /** Runs a store call: aborts at once on the signal, and wraps its errors as BackendErrors. */
  private async call<T>(
    operation: string,
    run: () => Promise<T> | T,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    try {
      // Called inside the try, so that a store method that throws synchronously is wrapped too.
      return await raceAbort(Promise.resolve().then(run), signal);
    } catch (error) {
      throw wrapBackendError(this.name, operation, error);
    }
  }

  private converterFor(kind: ScoreKind): ScoreConverter {
    let converter = this.converters.get(kind);
    if (converter === undefined) {
      converter = scoreConverter(kind, this.metric, kind === 'distance' ? this.conversion : undefined);
      this.converters.set(kind, converter);
    }
    return converter;
  }

  /** Learns or checks the score direction from a result's raw scores; returns the converter. */
  private observe(scores: readonly number[], warnings: Warning[]): ScoreConverter {
    const order = scoreOrder(scores);
    if (this.learntKind === undefined) {
      if (order === 'descending') this.learntKind = 'similarity';
      else if (order === 'ascending') this.learntKind = 'distance';
      else {
        if (scores.length > 1 || order === 'mixed') {
          warnings.push({
            type: 'compatibility',
            source: this.name,
            message: `The score direction of ${this.name} is not known yet (this result's scores are ${order}); they are taken as similarities. Declare scoreKind.`,
          });
        }
        return scoreConverter('similarity', this.metric, undefined);
      }
    } else if (
      (this.learntKind === 'similarity' && order === 'ascending') ||
      (this.learntKind === 'distance' && order === 'descending') ||
      order === 'mixed'
    ) {
      warnings.push({
        type: 'compatibility',
        source: this.name,
        message: `${this.name} returned ${order} scores, which contradicts scoreKind '${this.learntKind}'${this.declaredKind === undefined ? ' (learnt or assumed)' : ''}; check the declared scoreKind`,
      });
    }
    return this.converterFor(this.learntKind);
  }

  private async embedQuery(query: string, signal: AbortSignal | undefined): Promise<number[]> {
    const embedder = this.zerdaEmbedder as Embedder;
    const vector = embedder.embedQuery
      ? await embedder.embedQuery(query, { signal })
      : (await embedder.embed([query], { signal }))[0];
    const checked = vectorProblem(vector, this.dimension, this.metric, 'refuse');
    if (typeof checked === 'string') {
      throw new InvalidArgumentError({
        argument: 'embedder',
        value: query,
        message: `the query embedding is unusable: ${checked}`,
      });
    }
    return Array.from(vector as ArrayLike<number>);
  }

  private checkQuery(query: unknown): number[] {
    const problem = vectorProblem(query, this.dimension, this.metric, 'refuse');
    if (problem !== undefined) throw new InvalidArgumentError({ argument: 'query', message: problem });
    return Array.from(query as ArrayLike<number>);
  }

  /** Checks every vector of a batch; throws one ChunkValidationError listing every problem. */
  private checkBatch(chunks: Chunk[], vectors: ReadonlyArray<unknown>): number[][] {
    const first = vectors[0];
    const dimension =
      this.dimension ??
      (isNumberArray(first) && (first as ArrayLike<unknown>).length > 0
        ? (first as ArrayLike<unknown>).length
        : undefined);
    const problems: ChunkProblem[] = [];
    const result: number[][] = [];
    chunks.forEach((chunk, index) => {
      const vector = vectors[index];
      const problem =
        dimension === undefined
          ? 'the dimension cannot be taken from the first vector'
          : vectorProblem(vector, dimension, this.metric, 'keep');
      if (problem !== undefined) problems.push({ index, id: chunk.id, reason: problem });
      else result.push(Array.from(vector as ArrayLike<number>));
    });
    if (problems.length > 0) throw new ChunkValidationError({ problems });
    return result;
  }
}

/** Any LangChain `VectorStore` as a Zerda `VectorDatabase` (see `LangChainVectorDatabase`). */
export function fromLangChainVectorStore<Store extends VectorStoreInterface>(
  store: Store,
  options: LangChainVectorDatabaseOptions = {},
): LangChainVectorDatabase<Store> {
  return new LangChainVectorDatabase(store, options);
}

function storeType(store: VectorStoreInterface): string {
  try {
    const type = store._vectorstoreType();
    return typeof type === 'string' && type !== '' ? type : 'vectorstore';
  } catch {
    return 'vectorstore';
  }
}

/** Whether `delete` is the store's own, not LangChain's base method that throws "Not implemented". */
function implementsDelete(store: VectorStoreInterface): boolean {
  if (typeof store.delete !== 'function') return false;
  let prototype: object | null = Object.getPrototypeOf(store);
  while (prototype !== null) {
    if (Object.hasOwn(prototype, 'delete')) {
      const owner = (prototype as { constructor?: { name?: string } }).constructor;
      // LangChain's abstract base (from whichever copy of @langchain/core is installed).
      return !(owner?.name === 'VectorStore' && Object.hasOwn(prototype, 'similaritySearchWithScore'));
    }
    prototype = Object.getPrototypeOf(prototype);
  }
  return Object.hasOwn(store, 'delete');
}

function nativeConvention(
  input: FilterConvention | 'document-predicate' | undefined,
  keys: StoredMetadataKeys,
): FilterConvention | undefined {
  if (input === undefined) return undefined;
  if (input === documentPredicate) {
    return Object.freeze({
      name: documentPredicate,
      option: 'nativeFilter',
      canPushDown: () => true,
      translate: (node: FilterNode) => {
        const matches = compileFilter(node);
        return (document: DocumentInterface) => matches(storedDocumentToChunk(document, keys));
      },
    });
  }
  if (
    input === null ||
    typeof input !== 'object' ||
    typeof input.canPushDown !== 'function' ||
    typeof input.translate !== 'function'
  ) {
    throw new InvalidArgumentError({
      argument: 'filterConvention',
      value: input,
      message: "expected a FilterConvention or 'document-predicate'",
    });
  }
  return Object.freeze({
    name: input.name,
    option: 'nativeFilter',
    canPushDown: (node: FilterNode) => input.canPushDown(node),
    translate: (node: FilterNode) => input.translate(node),
  });
}

function checkSearchOptions<Filter>(options: LangChainSearchOptions<Filter>): LangChainSearchOptions<Filter> {
  return checkVectorSearchOptions(options);
}

function positiveInteger(value: number | undefined, argument: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value <= 0) {
    throw new InvalidArgumentError({ argument, value, message: 'must be a positive integer' });
  }
  return value;
}

function knownDimension(embedder: Embedder | undefined): number | undefined {
  if (embedder === undefined) return undefined;
  // A LangChainEmbedder whose dimension is not learnt yet says so without throwing.
  if ('dimensionIfKnown' in embedder) return (embedder as { dimensionIfKnown?: number }).dimensionIfKnown;
  return embedder.dimension;
}

/** A unit vector, for the count probe. */
function probeVector(dimension: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  vector[0] = 1;
  return vector;
}

function isNumberArray(input: unknown): boolean {
  return (
    Array.isArray(input) ||
    (ArrayBuffer.isView(input) &&
      !(input instanceof DataView) &&
      !(input instanceof BigInt64Array) &&
      !(input instanceof BigUint64Array))
  );
}

/**
 * What is wrong with a vector (a string), or undefined when it is usable: an array of finite
 * numbers of the right dimension. A zero vector has no cosine direction: refused as a query,
 * kept as a stored vector (as Zerda's in-memory store does).
 */
function vectorProblem(
  input: unknown,
  dimension: number | undefined,
  metric: DistanceMetric,
  zero: 'keep' | 'refuse',
): string | undefined {
  if (!isNumberArray(input)) return 'the vector must be an array of numbers or a Float32Array';
  const values = input as ArrayLike<unknown>;
  if (values.length === 0) return 'the vector is empty';
  if (dimension !== undefined && values.length !== dimension) {
    return `the vector has ${values.length} dimensions, the store has ${dimension}`;
  }
  let squaredNorm = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return `the vector holds ${String(value)} at position ${index}; every value must be a finite number`;
    }
    squaredNorm += value * value;
  }
  if (metric === 'cosine' && squaredNorm === 0 && zero === 'refuse') {
    return 'a zero vector has no direction, so it has no cosine similarity';
  }
  return undefined;
}
