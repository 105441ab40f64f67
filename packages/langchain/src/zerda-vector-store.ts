import type { Document, DocumentInterface } from '@langchain/core/documents';
import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import { VectorStore } from '@langchain/core/vectorstores';
import {
  compileFilter,
  type FilterInput,
  InvalidArgumentError,
  resolveFilter,
  throwIfAborted,
  type VectorDatabase,
  type VectorHit,
  type Warning,
  wrapBackendError,
} from '@zerda/core';
import { chunkToDocument, documentToChunk, type MetadataMode } from './documents.js';

export interface ZerdaVectorStoreArgs {
  /** The Zerda store to serve: Chroma, FAISS, Pinecone, the in-memory store, or any VectorDatabase. */
  // biome-ignore lint/suspicious/noExplicitAny: any backend's native options
  database: VectorDatabase<any>;
  /** Refuse (FilterError) any filter the database cannot evaluate whole, instead of evaluating the rest here. */
  strictFilters?: boolean;
  /** LangChain metadata that Zerda cannot store: refused (default 'strict') or flattened. See `MetadataMode`. */
  metadata?: MetadataMode;
  /** Called with the warnings of each search or add (a filter evaluated client-side, ...). */
  onWarnings?: (warnings: Warning[]) => void;
  /** First fetch when part of a filter is evaluated here, as a multiple of k (default 2). */
  initialFetchFactor?: number;
  /** Factor by which that fetch widens until k matches or the store is exhausted (default 4). */
  widenFactor?: number;
}

/** `addDocuments` / `addVectors` options: LangChain's `ids`, and an AbortSignal. */
export interface ZerdaAddOptions {
  ids?: string[];
  signal?: AbortSignal;
}

/**
 * A LangChain `VectorStore` over any Zerda `VectorDatabase`, so that LangChain code can use
 * Zerda's Chroma, FAISS, Pinecone or in-memory stores. Its filter type is Zerda's filter
 * language: the part the database can evaluate goes to it natively (`resolveFilter`), the rest
 * is evaluated here on the candidates, widening the fetch until `k` match or the database is
 * exhausted. Scores are Zerda's similarities (higher is better). Documents keep their `id`
 * (LangChain's `ids` option, else `Document.id`, else a random UUID).
 */
export class ZerdaVectorStore extends VectorStore {
  declare FilterType: FilterInput;

  // biome-ignore lint/suspicious/noExplicitAny: any backend's native options
  readonly database: VectorDatabase<any>;
  private readonly strictFilters: boolean;
  private readonly metadataMode: MetadataMode;
  private readonly onWarnings: ((warnings: Warning[]) => void) | undefined;
  private readonly initialFetchFactor: number;
  private readonly widenFactor: number;

  _vectorstoreType(): string {
    return 'zerda';
  }

  constructor(embeddings: EmbeddingsInterface, args: ZerdaVectorStoreArgs) {
    super(embeddings, args);
    if (args?.database === undefined || typeof args.database.search !== 'function') {
      throw new InvalidArgumentError({
        argument: 'database',
        message: 'ZerdaVectorStore needs `database`, a Zerda VectorDatabase',
      });
    }
    this.database = args.database;
    this.strictFilters = args.strictFilters ?? false;
    this.metadataMode = args.metadata ?? 'strict';
    this.onWarnings = args.onWarnings;
    this.initialFetchFactor = positive(args.initialFetchFactor ?? 2, 'initialFetchFactor');
    this.widenFactor = positive(args.widenFactor ?? 4, 'widenFactor');
    if (this.widenFactor <= 1) {
      throw new InvalidArgumentError({
        argument: 'widenFactor',
        value: this.widenFactor,
        message: 'must be above 1',
      });
    }
  }

  /** Embeds the documents with this store's `embeddings` and adds them; returns their ids. */
  async addDocuments(documents: DocumentInterface[], options: ZerdaAddOptions = {}): Promise<string[]> {
    throwIfAborted(options.signal);
    const vectors = await this.embeddings.embedDocuments(documents.map((document) => document.pageContent));
    return this.addVectors(vectors, documents, options);
  }

  /** Adds (or replaces, by id) documents with their vectors; returns their ids in order. */
  async addVectors(
    vectors: number[][],
    documents: DocumentInterface[],
    options: ZerdaAddOptions = {},
  ): Promise<string[]> {
    const { ids, signal } = options;
    if (ids !== undefined && ids.length !== documents.length) {
      throw new InvalidArgumentError({
        argument: 'ids',
        value: ids,
        message: `expected one id per document (${documents.length}), got ${ids.length}`,
      });
    }
    const chunks = documents.map((document, index) =>
      documentToChunk(document, ids?.[index] ?? document.id ?? crypto.randomUUID(), index, this.metadataMode),
    );
    const result = await this.database.add(chunks, { embeddings: vectors, ...(signal ? { signal } : {}) });
    if (result.warnings?.length) this.onWarnings?.(result.warnings);
    return result.ids;
  }

  /**
   * The `k` documents nearest to the vector, with Zerda's similarity, among those matching
   * `filter` (Zerda's filter language). A filter is validated before the database is called.
   */
  async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: this['FilterType'],
  ): Promise<[Document, number][]> {
    const { hits, warnings } = await this.searchDatabase(query, k, filter, undefined);
    if (warnings.length > 0) this.onWarnings?.(warnings);
    return hits.map((hit) => [chunkToDocument(hit.chunk), hit.score]);
  }

  /** Deletes documents by id (`{ ids }`); filters are not accepted here. */
  override async delete(params: { ids?: string[]; signal?: AbortSignal } = {}): Promise<void> {
    const { ids, signal } = params;
    if (!Array.isArray(ids)) {
      throw new InvalidArgumentError({
        argument: 'ids',
        value: ids,
        message: 'ZerdaVectorStore deletes by id: pass { ids: [...] }',
      });
    }
    await this.database.delete(ids, signal ? { signal } : {});
  }

  static override async fromTexts(
    texts: string[],
    metadatas: object[] | object,
    embeddings: EmbeddingsInterface,
    args: ZerdaVectorStoreArgs,
  ): Promise<ZerdaVectorStore> {
    const documents = texts.map((text, index) => ({
      pageContent: text,
      metadata: ((Array.isArray(metadatas) ? metadatas[index] : metadatas) ?? {}) as Record<string, unknown>,
    }));
    return ZerdaVectorStore.fromDocuments(documents, embeddings, args);
  }

  static override async fromDocuments(
    documents: DocumentInterface[],
    embeddings: EmbeddingsInterface,
    args: ZerdaVectorStoreArgs,
  ): Promise<ZerdaVectorStore> {
    const store = new ZerdaVectorStore(embeddings, args);
    await store.addDocuments(documents);
    return store;
  }

  /** The hits for a query vector: the native part of the filter pushed down, the residual evaluated here. */
  private async searchDatabase(
    query: number[],
    k: number,
    filter: FilterInput | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ hits: VectorHit[]; warnings: Warning[] }> {
    if (!Number.isInteger(k) || k <= 0) {
      throw new InvalidArgumentError({ argument: 'k', value: k, message: 'must be a positive integer' });
    }
    const database = this.database;
    // Resolving first validates the filter: a bad one fails before the database is called.
    const resolved = resolveFilter(database, filter, { strict: this.strictFilters });
    const warnings: Warning[] = [...resolved.warnings];
    const search = async (topK: number): Promise<VectorHit[]> => {
      try {
        const result = await database.search(query, {
          topK,
          ...(signal ? { signal } : {}),
          ...resolved.native,
        });
        if (result.warnings) warnings.push(...result.warnings);
        return result.hits;
      } catch (error) {
        throw wrapBackendError(database.name, 'search', error);
      }
    };
    if (resolved.residual === undefined) return { hits: await search(k), warnings };

    const matches = compileFilter(resolved.residual);
    const available = await database.count(signal ? { signal } : {});
    let fetch = Math.min(Math.max(k, Math.ceil(k * this.initialFetchFactor)), Math.max(available, k));
    let hits: VectorHit[];
    for (;;) {
      const candidates = await search(fetch);
      hits = candidates.filter((hit) => matches(hit.chunk));
      if (hits.length >= k || candidates.length < fetch || fetch >= available) break;
      fetch = Math.min(Math.ceil(fetch * this.widenFactor), available);
    }
    return { hits: hits.slice(0, k), warnings };
  }
}

function positive(value: number, argument: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError({ argument, value, message: 'must be a positive number' });
  }
  return value;
}
