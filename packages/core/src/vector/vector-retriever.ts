import { BackendError, InvalidArgumentError, throwIfAborted, ZerdaError } from '../errors/index.js';
import { compileFilter, type FilterRecord, resolveFilter } from '../filter/index.js';
import { RetrievalMethod, type ScoredChunk, type Warning } from '../model/index.js';
import {
  BaseRetriever,
  type BaseRetrieverOptions,
  type RetrieveChunksOptions,
  type RetrievedChunks,
} from '../retriever/index.js';
import type { Embedder } from './embedder.js';
import type { VectorDatabase, VectorHit } from './vector-database.js';

export interface VectorRetrieverOptions extends BaseRetrieverOptions {
  store: VectorDatabase;
  /**
   * Embeds queries here and sends the store a vector (wrap it in `CachedEmbedder` to cache
   * query embeddings). Without one the store embeds the query text with its own embedder.
   */
  embedder?: Embedder;
  /** Refuse any filter the store cannot evaluate whole, instead of evaluating the rest client-side. */
  strictFilters?: boolean;
  /** First fetch when part of a filter is evaluated client-side, as a multiple of k (default 2). */
  initialFetchFactor?: number;
  /** Factor by which the fetch widens until k matches are found or the store is exhausted (default 4). */
  widenFactor?: number;
  /** Name reported on hits (default 'vector'). */
  name?: string;
}

/**
 * Dense retrieval over any VectorDatabase. The filter is split by the store's convention: the
 * native part goes with the search, the residual is evaluated here on the candidates, widening the
 * fetch (2k, 8k, 32k, ... up to the store's size) until k matches are found or the store has no
 * more. Nothing is dropped: a store with no convention gets the whole filter evaluated here.
 */
export class VectorRetriever extends BaseRetriever {
  readonly name: string;
  readonly store: VectorDatabase;
  private readonly embedder: Embedder | undefined;
  private readonly strictFilters: boolean;
  private readonly initialFetchFactor: number;
  private readonly widenFactor: number;

  constructor(options: VectorRetrieverOptions) {
    super(options);
    if (!options.store) {
      throw new InvalidArgumentError({ argument: 'store', message: 'a VectorDatabase is required' });
    }
    this.store = options.store;
    this.embedder = options.embedder;
    this.strictFilters = options.strictFilters ?? false;
    this.initialFetchFactor = positive(options.initialFetchFactor ?? 2, 'initialFetchFactor');
    this.widenFactor = positive(options.widenFactor ?? 4, 'widenFactor');
    if (this.widenFactor <= 1) {
      throw new InvalidArgumentError({
        argument: 'widenFactor',
        value: this.widenFactor,
        message: 'must be above 1',
      });
    }
    this.name = options.name ?? 'vector';
  }

  protected async retrieveChunks(
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks> {
    const { signal } = options;
    // Resolving first validates the filter: a bad one fails before the store is called.
    const resolved = resolveFilter(this.store, options.filter, { strict: this.strictFilters });
    const warnings: Warning[] = [...resolved.warnings];
    const queryInput = await this.queryInput(query, signal);
    throwIfAborted(signal);

    const search = async (topK: number) => {
      try {
        const result = await this.store.search(queryInput, { topK, signal, ...resolved.native });
        if (result.warnings) warnings.push(...result.warnings);
        return result.hits;
      } catch (error) {
        throw wrapBackendError(this.store.name, 'search', error);
      }
    };

    let hits: VectorHit[];
    if (resolved.residual === undefined) {
      hits = await search(k);
    } else {
      const matches = compileFilter(resolved.residual);
      const available = await this.store.count({ signal });
      let fetch = Math.min(Math.max(k, Math.ceil(k * this.initialFetchFactor)), Math.max(available, k));
      for (;;) {
        const candidates = await search(fetch);
        hits = candidates.filter((hit) => matches(recordOf(hit)));
        // Done once k match, or the store returned everything it had.
        if (hits.length >= k || candidates.length < fetch || fetch >= available) break;
        fetch = Math.min(Math.ceil(fetch * this.widenFactor), available);
      }
      hits = hits.slice(0, k);
    }

    const metric = this.store.capabilities.metric;
    const scored = hits.map(
      (hit, index): ScoredChunk => ({
        chunk: hit.chunk,
        score: hit.score,
        rank: index + 1,
        retriever: this.name,
        scores: { [RetrievalMethod.Vector]: hit.score },
        ranks: { [RetrievalMethod.Vector]: index + 1 },
        explanation: {
          method: metric,
          description: `${metric} similarity from ${this.store.name} (${this.store.capabilities.scoreConversion})`,
        },
      }),
    );
    return { hits: scored, warnings };
  }

  private async queryInput(query: string, signal: AbortSignal | undefined): Promise<string | Float32Array> {
    if (!this.embedder) return query;
    const embedder = this.embedder;
    return embedder.embedQuery
      ? embedder.embedQuery(query, { signal })
      : ((await embedder.embed([query], { signal }))[0] as Float32Array);
  }
}

function recordOf(hit: VectorHit): FilterRecord {
  return hit.chunk;
}

function positive(value: number, argument: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError({ argument, value, message: 'must be a positive number' });
  }
  return value;
}

/** Zerda's own errors pass through; anything else from a backend becomes a BackendError with its cause. */
export function wrapBackendError(backend: string, operation: string, error: unknown): ZerdaError {
  if (ZerdaError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new BackendError({ backend, operation, message, cause: error });
}
