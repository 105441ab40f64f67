import { InvalidArgumentError, throwIfAborted } from '../errors/index.js';
import { RetrievalMethod, type ScoredChunk } from '../model/index.js';
import {
  BaseRetriever,
  type BaseRetrieverOptions,
  type RetrieveChunksOptions,
  type RetrievedChunks,
} from '../retriever/index.js';
import type { Embedder } from '../vector/embedder.js';
import { embedQueryForStore } from '../vector/store-helpers.js';
import type { VectorDatabase, VectorSearchResult } from '../vector/vector-database.js';
import { toVectorStore, wrapBackendError } from '../vector/vector-store.js';
import type { BM25SparseEncoder } from './sparse-encoder.js';

export interface SparseKeywordRetrieverOptions extends BaseRetrieverOptions {
  /** A store with sparse vectors (`capabilities.sparse`), written with the encoder's document vectors. */
  store: VectorDatabase;
  /** Encodes queries: the same analyser and statistics that encoded the stored chunks. */
  encoder: BM25SparseEncoder;
  /** Refuse any filter the store cannot evaluate whole. */
  strictFilters?: boolean;
  /** Name reported on hits (default 'keyword'). */
  name?: string;
}

/**
 * BM25 keyword retrieval run by the database: the query's IDF-weighted sparse vector is ranked by
 * dot product against the chunks' stored sparse vectors (`store.searchSparse`), with the filter
 * pushed down as for dense search. With fresh statistics the ranking and the scores are the
 * in-process index's; hits look like `KeywordRetriever`'s (normalised by the top score, the raw
 * BM25 score in the explanation), so fusion treats both alike.
 */
export class SparseKeywordRetriever extends BaseRetriever {
  readonly name: string;
  readonly store: VectorDatabase;
  readonly encoder: BM25SparseEncoder;
  private readonly strictFilters: boolean;

  override get scoreLowerBound(): number {
    return 0;
  }

  constructor(options: SparseKeywordRetrieverOptions) {
    super(options);
    this.store = toVectorStore(options.store);
    if (typeof this.store.searchSparse !== 'function') {
      throw new InvalidArgumentError({
        argument: 'store',
        message: `the '${this.store.name}' store has no sparse vectors (searchSparse): create it with sparse vectors enabled, or use KeywordRetriever in-process`,
      });
    }
    this.encoder = options.encoder;
    this.strictFilters = options.strictFilters ?? false;
    this.name = options.name ?? 'keyword';
  }

  protected async retrieveChunks(
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks> {
    const { signal, filter } = options;
    const sparse = this.encoder.encodeQuery(query);
    // No query term the corpus knows: nothing can score above zero.
    if (sparse.indices.length === 0) return { hits: [], total: 0 };
    throwIfAborted(signal);
    let result: VectorSearchResult;
    try {
      result = await (this.store.searchSparse as NonNullable<VectorDatabase['searchSparse']>).call(
        this.store,
        sparse,
        {
          topK: k,
          strictFilters: this.strictFilters,
          ...(filter === undefined ? {} : { filter }),
          ...(signal === undefined ? {} : { signal }),
        },
      );
    } catch (error) {
      throw wrapBackendError(this.store.name, 'searchSparse', error);
    }
    const top = result.hits[0]?.score ?? 1;
    const hits = result.hits.map(({ chunk, score }, index): ScoredChunk => {
      const normalised = score / top;
      return {
        chunk,
        score: normalised,
        rank: index + 1,
        retriever: this.name,
        scores: { [RetrievalMethod.Keyword]: normalised },
        ranks: { [RetrievalMethod.Keyword]: index + 1 },
        explanation: {
          method: 'bm25',
          description: `BM25 ${score.toFixed(4)} (sparse dot product ranked by ${this.store.name}) divided by the query's top score ${top.toFixed(4)}`,
          components: { bm25: score },
        },
      };
    });
    return { hits, warnings: [...result.warnings] };
  }
}

export interface DatabaseHybridRetrieverOptions extends SparseKeywordRetrieverOptions {
  /** Embeds queries here; without one the store embeds the query text. */
  embedder?: Embedder;
  /** Weight of the dense dot product; the sparse (BM25) one gets `1 - alpha` (default 0.5). */
  alpha?: number;
}

/**
 * Hybrid retrieval fused by the database in one query (`store.searchHybrid`, Pinecone's
 * sparse-dense query): the score is `alpha · dense + (1 - alpha) · BM25`, raw sums the database
 * computes, not Zerda's normalised fusion. Use `HybridRetriever` over a `SparseKeywordRetriever`
 * and a `VectorRetriever` for Zerda's fusion functions on any backend.
 */
export class DatabaseHybridRetriever extends BaseRetriever {
  readonly name: string;
  readonly store: VectorDatabase;
  readonly encoder: BM25SparseEncoder;
  readonly alpha: number;
  private readonly embedder: Embedder | undefined;
  private readonly strictFilters: boolean;

  constructor(options: DatabaseHybridRetrieverOptions) {
    super(options);
    this.store = toVectorStore(options.store);
    if (typeof this.store.searchHybrid !== 'function') {
      throw new InvalidArgumentError({
        argument: 'store',
        message: `the '${this.store.name}' store cannot fuse dense and sparse scores itself (no searchHybrid): use HybridRetriever over a SparseKeywordRetriever and a VectorRetriever`,
      });
    }
    const { alpha = 0.5 } = options;
    if (!(typeof alpha === 'number' && alpha >= 0 && alpha <= 1)) {
      throw new InvalidArgumentError({
        argument: 'alpha',
        value: alpha,
        message: 'expected a number from 0 to 1',
      });
    }
    this.alpha = alpha;
    this.encoder = options.encoder;
    this.embedder = options.embedder;
    this.strictFilters = options.strictFilters ?? false;
    this.name = options.name ?? 'hybrid';
  }

  protected async retrieveChunks(
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks> {
    const { signal, filter } = options;
    const sparse = this.encoder.encodeQuery(query);
    // Without an embedder here, the store embeds the text itself.
    const dense = this.embedder
      ? ((await embedQueryForStore(this.embedder, query, signal)) as Float32Array)
      : query;
    throwIfAborted(signal);
    let result: VectorSearchResult;
    try {
      result = await (this.store.searchHybrid as NonNullable<VectorDatabase['searchHybrid']>).call(
        this.store,
        dense,
        sparse,
        {
          topK: k,
          denseWeight: this.alpha,
          sparseWeight: 1 - this.alpha,
          strictFilters: this.strictFilters,
          ...(filter === undefined ? {} : { filter }),
          ...(signal === undefined ? {} : { signal }),
        },
      );
    } catch (error) {
      throw wrapBackendError(this.store.name, 'searchHybrid', error);
    }
    const description = `${this.alpha} x dense dot product + ${1 - this.alpha} x BM25, summed by ${this.store.name} in one sparse-dense query`;
    const hits = result.hits.map(
      ({ chunk, score }, index): ScoredChunk => ({
        chunk,
        score,
        rank: index + 1,
        retriever: this.name,
        scores: { [RetrievalMethod.Hybrid]: score },
        ranks: { [RetrievalMethod.Hybrid]: index + 1 },
        explanation: { method: 'database-hybrid', description, components: { alpha: this.alpha } },
      }),
    );
    return { hits, warnings: [...result.warnings] };
  }
}
