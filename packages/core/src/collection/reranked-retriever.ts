import {
  BaseRetriever,
  type RerankHook,
  type RetrieveChunksOptions,
  type RetrievedChunks,
} from '../retriever/index.js';

/** A retriever's results through a reranker (fetchK candidates, reranked, truncated), by BaseRetriever. */
export class RerankedRetriever extends BaseRetriever {
  readonly name: string;

  constructor(
    private readonly inner: BaseRetriever,
    reranker: RerankHook,
  ) {
    super({ reranker });
    this.name = inner.name;
  }

  protected async retrieveChunks(
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks> {
    const result = await this.inner.retrieve(query, { k, ...options });
    return { hits: result.hits, total: result.total, warnings: result.warnings };
  }
}
