import { Embeddings, type EmbeddingsParams } from '@langchain/core/embeddings';
import type { Embedder } from '@zerda/core';

export interface ZerdaEmbeddingsParams extends EmbeddingsParams {
  /** The Zerda embedder to serve, for example a `HashEmbedder` or a `CachedEmbedder`. */
  embedder: Embedder;
}

/**
 * A Zerda `Embedder` as LangChain `Embeddings` (for example Zerda's `HashEmbedder`, which needs
 * no model, in a LangChain vector store or a `ZerdaVectorStore`). Vectors come back as
 * `number[]`; errors are Zerda's own, unchanged.
 */
export class ZerdaEmbeddings extends Embeddings {
  readonly embedder: Embedder;

  constructor(params: ZerdaEmbeddingsParams) {
    super(params);
    this.embedder = params.embedder;
  }

  get dimensions(): number {
    return this.embedder.dimension;
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    const vectors = await this.embedder.embed(documents);
    return vectors.map((vector) => Array.from(vector));
  }

  async embedQuery(document: string): Promise<number[]> {
    const vector = this.embedder.embedQuery
      ? await this.embedder.embedQuery(document)
      : (await this.embedder.embed([document]))[0];
    return Array.from(vector ?? []);
  }
}
