import { AbortedError, InvalidArgumentError, throwIfAborted } from '../errors/index.js';
import { type FilterInput, parseFilter } from '../filter/index.js';
import type { ScoredChunk, SearchResult, Warning } from '../model/index.js';

/** Options every retrieval call takes. */
export interface RetrieveOptions {
  /** How many hits to return (a positive integer). Defaults to the retriever's `k`. */
  k?: number;
  /** A metadata filter in Zerda's filter language; honoured by every retriever, never ignored. */
  filter?: FilterInput;
  signal?: AbortSignal;
}

/** What an implementer's `retrieveChunks` receives. */
export interface RetrieveChunksOptions {
  filter?: FilterInput;
  signal?: AbortSignal;
}

/** What an implementer's `retrieveChunks` returns: the hits, or the hits with notes. */
export type RetrievedChunks = ScoredChunk[] | { hits: ScoredChunk[]; total?: number; warnings?: Warning[] };

/** The hook through which a reranker re-scores candidates before truncation to k. */
export interface RerankHook {
  rerank(
    query: string,
    candidates: ScoredChunk[],
    options: { k: number; signal?: AbortSignal },
  ): Promise<{ hits: ScoredChunk[]; warnings?: Warning[] }>;
}

export interface BaseRetrieverOptions {
  /** Hits returned when a call does not say (default 10). */
  k?: number;
  /** Hits scoring below this are dropped (after reranking). */
  scoreThreshold?: number;
  /** Re-scores candidates; when set, `fetchK` candidates are retrieved first. */
  reranker?: RerankHook;
  /** Candidates fetched for the reranker: a number, or a function of k (default 4k). */
  fetchK?: number | ((k: number) => number);
}

export interface BatchRetrieveOptions extends Omit<RetrieveOptions, 'signal'> {
  /** How many queries run at once (default 4). */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * The contract every retrieval strategy implements. Implementers write `retrieveChunks`;
 * `retrieve` applies the rest in one place: fetchK and the reranker, scoreThreshold, sorting,
 * truncation, ranks, the retriever's name and the latency.
 */
export abstract class BaseRetriever {
  abstract readonly name: string;
  /**
   * The lowest score this retriever's metric can give (0 for BM25, -1 for cosine similarity), for
   * theoretical min-max normalisation in fusion; undefined when there is none (a dot product).
   */
  get scoreLowerBound(): number | undefined {
    return undefined;
  }
  protected readonly defaultK: number;
  protected readonly scoreThreshold: number | undefined;
  protected readonly reranker: RerankHook | undefined;
  private readonly fetchK: (k: number) => number;

  constructor(options: BaseRetrieverOptions = {}) {
    this.defaultK = validateK(options.k ?? 10, 'k');
    if (options.scoreThreshold !== undefined && !Number.isFinite(options.scoreThreshold)) {
      throw new InvalidArgumentError({
        argument: 'scoreThreshold',
        value: options.scoreThreshold,
        message: 'must be a finite number',
      });
    }
    this.scoreThreshold = options.scoreThreshold;
    this.reranker = options.reranker;
    const fetchK = options.fetchK ?? ((k: number) => 4 * k);
    this.fetchK = typeof fetchK === 'number' ? (k) => Math.max(k, fetchK) : (k) => Math.max(k, fetchK(k));
  }

  /** Implementers return up to `k` hits, best first or in any order (they are sorted here). */
  protected abstract retrieveChunks(
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks>;

  async retrieve(query: string, options: RetrieveOptions = {}): Promise<SearchResult> {
    const started = performance.now();
    if (typeof query !== 'string') {
      throw new InvalidArgumentError({ argument: 'query', value: query, message: 'must be a string' });
    }
    checkOptions(options);
    const k = validateK(options.k ?? this.defaultK, 'k');
    const { signal, filter } = options;
    throwIfAborted(signal);
    // The caller's mistakes are named here, once, before any work: a bad filter is a FilterError from
    // every retriever (a hybrid one included, whose branches would otherwise each fail on it).
    if (filter !== undefined) parseFilter(filter);

    const candidateCount = this.reranker ? validateK(this.fetchK(k), 'fetchK') : k;
    const retrieved = await this.retrieveChunks(query, candidateCount, { filter, signal });
    throwIfAborted(signal);
    const {
      hits: found,
      total,
      warnings: foundWarnings,
    } = Array.isArray(retrieved) ? { hits: retrieved, total: undefined, warnings: undefined } : retrieved;
    const warnings: Warning[] = [...(foundWarnings ?? [])];

    let hits = found;
    if (this.reranker && hits.length > 0) {
      const reranked = await this.reranker.rerank(query, hits, { k, signal });
      hits = reranked.hits;
      if (reranked.warnings) warnings.push(...reranked.warnings);
    }
    if (this.scoreThreshold !== undefined) {
      const threshold = this.scoreThreshold;
      hits = hits.filter((hit) => hit.score >= threshold);
    }
    hits = [...hits].sort(compareHits).slice(0, k);
    const name = this.name;
    const ranked = hits.map((hit, index) => ({ ...hit, rank: index + 1, retriever: hit.retriever || name }));
    return {
      query,
      hits: ranked,
      total: Math.max(total ?? found.length, ranked.length),
      latencyMs: performance.now() - started,
      warnings,
    };
  }

  /** Runs many queries with bounded concurrency; results come back in input order. */
  async batchRetrieve(
    queries: readonly string[],
    options: BatchRetrieveOptions = {},
  ): Promise<SearchResult[]> {
    if (!Array.isArray(queries)) {
      throw new InvalidArgumentError({
        argument: 'queries',
        value: queries,
        message: `expected an array of query strings, got ${typeof queries}`,
      });
    }
    checkOptions(options);
    const { concurrency = 4, ...retrieveOptions } = options;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new InvalidArgumentError({
        argument: 'concurrency',
        value: concurrency,
        message: 'must be a positive integer',
      });
    }
    const results = new Array<SearchResult>(queries.length);
    let next = 0;
    const worker = async () => {
      while (next < queries.length) {
        const index = next++;
        if (options.signal?.aborted) throw new AbortedError({ cause: options.signal.reason });
        results[index] = await this.retrieve(queries[index] as string, retrieveOptions);
      }
    };
    // Every query and the filter are checked before the first one runs.
    queries.forEach((query, index) => {
      if (typeof query !== 'string') {
        throw new InvalidArgumentError({
          argument: `queries[${index}]`,
          value: query,
          message: 'must be a string',
        });
      }
    });
    if (retrieveOptions.filter !== undefined) parseFilter(retrieveOptions.filter);
    await Promise.all(Array.from({ length: Math.min(concurrency, queries.length) }, worker));
    return results;
  }
}

/** Best first; ties broken by chunk id so that results are deterministic. */
export function compareHits(a: ScoredChunk, b: ScoredChunk): number {
  return b.score - a.score || (a.chunk.id < b.chunk.id ? -1 : a.chunk.id > b.chunk.id ? 1 : 0);
}

/** Options, when given, are an object (a `null` would otherwise fail as a TypeError). */
function checkOptions(options: unknown): void {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError({
      argument: 'options',
      value: options,
      message: `expected an object of options, got ${options === null ? 'null' : typeof options}`,
    });
  }
}

/** k must be a positive integer. */
export function validateK(k: unknown, argument = 'k'): number {
  if (typeof k !== 'number' || !Number.isInteger(k) || k <= 0) {
    throw new InvalidArgumentError({
      argument,
      value: k,
      message: `must be a positive integer, got ${String(k)}`,
    });
  }
  return k;
}
