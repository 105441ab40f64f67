import {
  CallbackManager,
  type CallbackManagerForRetrieverRun,
  parseCallbackConfigArg,
} from '@langchain/core/callbacks/manager';
import type { DocumentInterface } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { ensureConfig, type RunnableConfig } from '@langchain/core/runnables';
import type { FilterInput, RetrieveOptions, SearchResult } from '@zerda/core';
import { hitToDocument } from './documents.js';

/** Any Zerda retriever (BM25, vector, hybrid, ...): what ZerdaRetriever calls. */
export interface ZerdaRetrievable {
  retrieve(query: string, options?: RetrieveOptions): Promise<SearchResult>;
}

/** Per-call settings, read from `config.configurable.zerda` (they override the constructor's). */
export interface ZerdaCallSettings {
  k?: number;
  filter?: FilterInput;
}

export interface ZerdaRetrieverInput extends BaseRetrieverInput {
  /** The Zerda retriever to serve, for example a `HybridRetriever`. */
  retriever: ZerdaRetrievable;
  /** Hits per query (default: the Zerda retriever's own `k`). */
  k?: number;
  /** A filter in Zerda's filter language, applied to every query. */
  filter?: FilterInput;
  /** The metadata key under which each Document carries Zerda's scores (default 'zerda'). */
  metadataKey?: string;
  /**
   * Called with Zerda's whole result of each query (hits, total, latency, warnings such as a
   * failed hybrid branch). Warnings are also sent to LangChain callbacks as the custom event
   * `zerda_warnings` (`{ query, warnings }`).
   */
  onResult?: (result: SearchResult) => void;
}

/**
 * Zerda's retrieval as a LangChain retriever: a real `BaseRetriever` (a Runnable from a query
 * string to Documents) over any Zerda retriever, the hybrid one included. Documents come in
 * Zerda's order, each with `id`, `pageContent`, the chunk's metadata and, under
 * `metadata.zerda` (see `ZerdaHitMetadata`), its score, rank, per-signal scores and ranks and
 * its explanation. The call's AbortSignal (`config.signal`, or `config.timeout`) reaches Zerda;
 * `config.configurable.zerda` may set `k` and `filter` per call.
 */
export class ZerdaRetriever extends BaseRetriever {
  static override lc_name(): string {
    return 'ZerdaRetriever';
  }

  override lc_namespace = ['zerda', 'retrievers'];

  readonly retriever: ZerdaRetrievable;
  readonly k: number | undefined;
  readonly filter: FilterInput | undefined;
  readonly metadataKey: string;
  private readonly onResult: ((result: SearchResult) => void) | undefined;

  constructor(fields: ZerdaRetrieverInput) {
    super(fields);
    if (fields?.retriever === undefined || typeof fields.retriever.retrieve !== 'function') {
      throw new TypeError(
        'ZerdaRetriever needs `retriever`, a Zerda retriever (for example a HybridRetriever)',
      );
    }
    this.retriever = fields.retriever;
    this.k = fields.k;
    this.filter = fields.filter;
    this.metadataKey = fields.metadataKey ?? 'zerda';
    this.onResult = fields.onResult;
  }

  /**
   * As LangChain's own `invoke`, with one difference: the config's AbortSignal is handed to
   * Zerda (LangChain's base class does not pass it to `_getRelevantDocuments`).
   */
  override async invoke(input: string, options?: RunnableConfig): Promise<DocumentInterface[]> {
    const config = ensureConfig(parseCallbackConfigArg(options) as RunnableConfig);
    const callbackManager = await CallbackManager.configure(
      config.callbacks,
      this.callbacks,
      config.tags,
      this.tags,
      config.metadata,
      this.metadata,
      { verbose: this.verbose },
    );
    const runManager = await callbackManager?.handleRetrieverStart(
      this.toJSON(),
      input,
      config.runId,
      undefined,
      undefined,
      undefined,
      config.runName,
    );
    try {
      const settings = (config.configurable?.zerda ?? {}) as ZerdaCallSettings;
      const documents = await this.search(input, settings, config.signal, runManager);
      await runManager?.handleRetrieverEnd(documents);
      return documents;
    } catch (error) {
      await runManager?.handleRetrieverError(error);
      throw error;
    }
  }

  override async _getRelevantDocuments(
    query: string,
    runManager?: CallbackManagerForRetrieverRun,
  ): Promise<DocumentInterface[]> {
    return this.search(query, {}, undefined, runManager);
  }

  private async search(
    query: string,
    settings: ZerdaCallSettings,
    signal: AbortSignal | undefined,
    runManager: CallbackManagerForRetrieverRun | undefined,
  ): Promise<DocumentInterface[]> {
    const k = settings.k ?? this.k;
    const filter = settings.filter ?? this.filter;
    const result = await this.retriever.retrieve(query, {
      ...(k === undefined ? {} : { k }),
      ...(filter === undefined ? {} : { filter }),
      ...(signal === undefined ? {} : { signal }),
    });
    this.onResult?.(result);
    if (result.warnings.length > 0) {
      await runManager?.handleCustomEvent('zerda_warnings', { query, warnings: result.warnings });
    }
    return result.hits.map((hit) => hitToDocument(hit, this.metadataKey));
  }
}
