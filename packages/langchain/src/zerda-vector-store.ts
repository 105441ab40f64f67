import type { Document, DocumentInterface } from '@langchain/core/documents';
import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import { VectorStore } from '@langchain/core/vectorstores';
import {
  BackendError,
  type FilterInput,
  InvalidArgumentError,
  isNativeFilter,
  type NativeFilter,
  throwIfAborted,
  toVectorStore,
  type VectorDatabase,
  type Warning,
} from '@zerda/core';
import { chunkToDocument, documentToChunk, type MetadataMode } from './documents.js';

export interface ZerdaVectorStoreArgs {
  /**
   * The Zerda store to serve: one made by a factory (createInMemoryVectorStore, createChromaStore,
   * fromLangChainVectorStore, ...) or a v2 driver, made into a store. Another contract version is
   * a ContractVersionError.
   */
  // biome-ignore lint/suspicious/noExplicitAny: any backend's native filters
  database: VectorDatabase<any> | object;
  /** Refuse (FilterError) any filter the database cannot evaluate whole, instead of evaluating the rest here. */
  strictFilters?: boolean;
  /** LangChain metadata that Zerda cannot store: refused (default 'strict') or flattened. See `MetadataMode`. */
  metadata?: MetadataMode;
  /** Called with the warnings of each search or add (a filter evaluated client-side, ...). */
  onWarnings?: (warnings: Warning[]) => void;
}

/** `addDocuments` / `addVectors` options: LangChain's `ids`, and an AbortSignal. */
export interface ZerdaAddOptions {
  ids?: string[];
  signal?: AbortSignal;
}

/**
 * A LangChain `VectorStore` over any Zerda store, so that LangChain code can use Zerda's Chroma,
 * FAISS, Pinecone or in-memory stores. Its filter type is Zerda's filter language, resolved by the
 * store (the part the backend can evaluate goes to it natively, the rest is evaluated on the
 * candidates, widening the fetch until `k` match or the store is exhausted), or the backend's own
 * filter made with `nativeFilter(convention, value)`. Scores are Zerda's similarities (higher is
 * better). Documents keep their `id` (LangChain's `ids` option, else `Document.id`, else a UUID).
 */
export class ZerdaVectorStore extends VectorStore {
  declare FilterType: FilterInput | NativeFilter;

  readonly database: VectorDatabase;
  private readonly strictFilters: boolean;
  private readonly metadataMode: MetadataMode;
  private readonly onWarnings: ((warnings: Warning[]) => void) | undefined;

  _vectorstoreType(): string {
    return 'zerda';
  }

  constructor(embeddings: EmbeddingsInterface, args: ZerdaVectorStoreArgs) {
    super(embeddings, args);
    this.database = toVectorStore(args?.database, 'database');
    this.strictFilters = args.strictFilters ?? false;
    this.metadataMode = args.metadata ?? 'strict';
    this.onWarnings = args.onWarnings;
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
   * `filter` (Zerda's filter language, or a native filter). A filter is validated before the
   * database is called.
   */
  async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: this['FilterType'],
  ): Promise<[Document, number][]> {
    const { hits, warnings } = await this.database.search(query, {
      topK: k,
      ...(filter === undefined ? {} : isNativeFilter(filter) ? { nativeFilter: filter } : { filter }),
      strictFilters: this.strictFilters,
    });
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
    if (this.database.delete === undefined) {
      throw new BackendError({
        backend: this.database.name,
        operation: 'delete',
        message: `the ${this.database.name} store cannot delete (capabilities.deletion is false)`,
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
}
