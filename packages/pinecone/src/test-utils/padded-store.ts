import type {
  AddOptions,
  AddResult,
  Chunk,
  Embedder,
  FilterConvention,
  VectorDatabase,
  VectorDatabaseCapabilities,
  VectorSearchResult,
} from '@zerda/core';
import type { PineconeSearchOptions, PineconeStore } from '../pinecone-store.js';

/**
 * For live tests against one real index of a fixed dimension: presents a store of a smaller
 * dimension by padding every vector (stored, queried, embedded) with zeros, which leaves cosine
 * similarity, dot product and Euclidean distance unchanged. It also waits, after each write,
 * until the index stats count what was written (Pinecone is eventually consistent), so that the
 * conformance suite's read-after-write checks see the write.
 */
export class PaddedStore implements VectorDatabase<{ filter: Record<string, unknown> }> {
  readonly specificationVersion = 'v1' as const;
  readonly name: string;
  readonly dimension: number;
  private readonly ids = new Set<string>();

  constructor(
    readonly inner: PineconeStore,
    dimension: number,
    private readonly options: { freshnessTimeoutMs?: number; pollMs?: number } = {},
  ) {
    this.name = inner.name;
    this.dimension = dimension;
  }

  get capabilities(): VectorDatabaseCapabilities {
    return this.inner.capabilities;
  }

  get filterConvention(): FilterConvention {
    return this.inner.filterConvention;
  }

  async add(chunks: readonly Chunk[], options: AddOptions = {}): Promise<AddResult> {
    const embeddings = options.embeddings?.map((vector) => this.pad(vector));
    const result = await this.inner.add(chunks, { ...options, ...(embeddings ? { embeddings } : {}) });
    for (const id of result.ids) this.ids.add(id);
    await this.settle();
    return result;
  }

  async search(
    query: string | Float32Array | readonly number[],
    options: PineconeSearchOptions,
  ): Promise<VectorSearchResult> {
    return this.inner.search(typeof query === 'string' ? query : this.pad(query), options);
  }

  async delete(ids: readonly string[], options?: { signal?: AbortSignal }): Promise<number> {
    const removed = await this.inner.delete(ids, options);
    for (const id of ids) this.ids.delete(id);
    await this.settle();
    return removed;
  }

  count(options?: { signal?: AbortSignal }): Promise<number> {
    return this.inner.count(options);
  }

  /** Zero-pads a vector of this store's dimension to the index's (others pass unchanged, to be refused). */
  private pad(vector: Float32Array | readonly number[]): number[] | Float32Array | readonly number[] {
    const target = this.inner.dimension;
    if (target === undefined || vector.length !== this.dimension || target === this.dimension) return vector;
    const padded = new Array<number>(target).fill(0);
    for (let i = 0; i < vector.length; i++) padded[i] = vector[i]!;
    return padded;
  }

  private async settle(): Promise<void> {
    const deadline = Date.now() + (this.options.freshnessTimeoutMs ?? 60_000);
    while ((await this.inner.count()) !== this.ids.size) {
      if (Date.now() > deadline) throw new Error('the index stats did not catch up with the writes in time');
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs ?? 1_000));
    }
  }
}

/** An embedder of `dimension` whose vectors are zero-padded to `target`. */
export function paddedEmbedder(embedder: Embedder, target: number): Embedder {
  const pad = (vector: Float32Array) => {
    if (vector.length === target) return vector;
    const padded = new Float32Array(target);
    padded.set(vector);
    return padded;
  };
  return {
    dimension: target,
    embed: async (texts, options) => (await embedder.embed(texts, options)).map(pad),
    ...(embedder.embedQuery
      ? {
          embedQuery: async (text: string, options?: { signal?: AbortSignal }) =>
            pad(await embedder.embedQuery!(text, options)),
        }
      : {}),
  };
}
