import { InvalidArgumentError, throwIfAborted } from '../errors/index.js';
import { RetrievalMethod, type ScoredChunk } from '../model/index.js';
import {
  BaseRetriever,
  type BaseRetrieverOptions,
  type RetrieveChunksOptions,
  type RetrievedChunks,
} from '../retriever/index.js';
import type { Embedder } from './embedder.js';
import { describeScoreConversion } from './score-conversion.js';
import type { VectorDatabase } from './vector-database.js';
import { toVectorStore, wrapBackendError } from './vector-store.js';

export interface VectorRetrieverOptions extends BaseRetrieverOptions {
  /** A store (createInMemoryVectorStore, createChromaStore, ...) or a v2 driver, made into a store. */
  store: VectorDatabase | object;
  /**
   * Embeds queries here and sends the store a vector (wrap it in `CachedEmbedder` to cache
   * query embeddings). Without one the store embeds the query text with its own embedder.
   */
  embedder?: Embedder;
  /** Refuse any filter the store cannot evaluate whole, instead of evaluating the rest client-side. */
  strictFilters?: boolean;
  /** Name reported on hits (default 'vector'). */
  name?: string;
}

/**
 * Dense retrieval over any vector store. The store resolves the filter by its convention: the
 * native part goes to the database, the residual is evaluated on the candidates with a widening
 * fetch, and the result says so in a warning. Nothing is dropped. A v1 store or an unknown
 * contract version is refused with a ContractVersionError.
 */
export class VectorRetriever extends BaseRetriever {
  readonly name: string;
  readonly store: VectorDatabase;
  private readonly embedder: Embedder | undefined;
  private readonly strictFilters: boolean;

  /** -1 for cosine similarity, 0 for l2's `1 / (1 + d)`, none for a dot product (used by fusion). */
  override get scoreLowerBound(): number | undefined {
    const metric = this.store.capabilities.metric;
    return metric === 'cosine' ? -1 : metric === 'l2' ? 0 : undefined;
  }

  constructor(options: VectorRetrieverOptions) {
    super(options);
    if (!options.store) {
      throw new InvalidArgumentError({ argument: 'store', message: 'a vector store is required' });
    }
    this.store = toVectorStore(options.store);
    this.embedder = options.embedder;
    this.strictFilters = options.strictFilters ?? false;
    this.name = options.name ?? 'vector';
  }

  protected async retrieveChunks(
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks> {
    const { signal } = options;
    const queryInput = await this.queryInput(query, signal);
    throwIfAborted(signal);
    let result: Awaited<ReturnType<VectorDatabase['search']>>;
    try {
      result = await this.store.search(queryInput, {
        topK: k,
        ...(options.filter === undefined ? {} : { filter: options.filter }),
        strictFilters: this.strictFilters,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      throw wrapBackendError(this.store.name, 'search', error);
    }
    const { metric, scoreConversion } = this.store.capabilities;
    const description = `${metric} similarity from ${this.store.name} (${describeScoreConversion(scoreConversion)})`;
    const hits = result.hits.map(
      (hit, index): ScoredChunk => ({
        chunk: hit.chunk,
        score: hit.score,
        rank: index + 1,
        retriever: this.name,
        scores: { [RetrievalMethod.Vector]: hit.score },
        ranks: { [RetrievalMethod.Vector]: index + 1 },
        explanation: { method: metric, description },
      }),
    );
    return { hits, warnings: [...result.warnings] };
  }

  private async queryInput(query: string, signal: AbortSignal | undefined): Promise<string | Float32Array> {
    if (!this.embedder) return query;
    const embedder = this.embedder;
    return embedder.embedQuery
      ? embedder.embedQuery(query, { signal })
      : ((await embedder.embed([query], { signal }))[0] as Float32Array);
  }
}
