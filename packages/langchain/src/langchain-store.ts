import type { VectorStoreInterface } from '@langchain/core/vectorstores';
import {
  type DistanceMetric,
  type Embedder,
  type FilterConvention,
  InvalidArgumentError,
  type ScoreConversion,
  type VectorDatabase,
} from '@zerda/core';
import { createVectorStore } from '@zerda/core/backend';
import type { StoredMetadataKeys } from './documents.js';
import { LangChainDriver } from './langchain-driver.js';
import { LangChainEmbedder } from './langchain-embedder.js';

/**
 * How ids already stored are replaced on `add`: `'delete-first'` (default where the store can
 * delete) deletes them, then adds; `'native'`: the store replaces by id itself (say so only if it
 * does); `'append'` (default otherwise): stored twice, searches return the best copy, with a warning.
 */
export type UpsertMode = 'delete-first' | 'native' | 'append';

export interface LangChainStoreSettings {
  /** Name in errors and warnings (default `langchain:<store._vectorstoreType()>`). */
  name?: string;
  /** The metric the store ranks by (default 'cosine'). */
  metric?: DistanceMetric;
  /** 'similarity', or how its distances convert. Default: known by store type, else learnt (README: Scores). */
  scoreConversion?: ScoreConversion;
  /** What embeds texts: `'store'` (default where the store has `embeddings`), an `Embedder`, or `'none'`. */
  embedder?: Embedder | 'store' | 'none';
  /** Vector dimension, where known up front (default: a Zerda embedder's, else the first vectors). */
  dimension?: number;
  /** Refuse (FilterError) any Zerda filter the store cannot evaluate whole (default false). */
  strictFilters?: boolean;
  /**
   * Which Zerda filters go down as the store's own filter: none by default; all of them as a Document
   * predicate (`'document-predicate'`: MemoryVectorStore, HNSWLib...); what a FilterConvention translates.
   */
  filterConvention?: FilterConvention | 'document-predicate';
  /** Whether the store implements `delete({ ids })` (default: whether it overrides VectorStore's). */
  deletion?: boolean;
  upsert?: UpsertMode;
  /** Whether the store keeps its data across restarts (default false). */
  persistent?: boolean;
  /** Most documents per write call (default: one call per `add`). */
  maxBatchSize?: number;
  /** Longest wait for one call to the store, in ms (default: the store's own timeouts only). */
  timeoutMs?: number;
  /** Counts the store's documents (default: its `memoryVectors`, else a probe search for `maxFetch`). */
  count?: (options: { signal?: AbortSignal }) => Promise<number>;
  /** Most results a probe asks of the store (default 10,000). */
  maxFetch?: number;
  /** Metadata keys that keep the chunk's id and docId (default `_zerda_id`, `_zerda_doc_id`). */
  metadataKeys?: Partial<StoredMetadataKeys>;
}

/** A LangChain store as a Zerda store (contract v2); `driver.scoreKind` tells the score direction. */
export type LangChainStore<Filter = unknown> = VectorDatabase<Filter> & {
  readonly driver: LangChainDriver<Filter>;
};

/**
 * Any LangChain `VectorStore` as a Zerda store, so Zerda's retrievers run over anything LangChain
 * connects to. Scores are Zerda's similarities; `delete` exists where the store can delete; its
 * errors become BackendErrors with the original as `cause`. The chunk id is written as `Document.id`
 * and `metadata._zerda_id` (some stores drop Document ids); documents Zerda did not write get
 * `Document.id`, else `sha256:<hash of the text>`.
 */
export function fromLangChainVectorStore<Store extends VectorStoreInterface>(
  store: Store,
  settings: LangChainStoreSettings = {},
): LangChainStore<Store['FilterType']> {
  if (
    typeof store?.similaritySearchVectorWithScore !== 'function' ||
    typeof store.addVectors !== 'function'
  ) {
    const message = 'expected a LangChain VectorStore (with addVectors and similaritySearchVectorWithScore)';
    throw new InvalidArgumentError({ argument: 'store', message });
  }
  const { dimension, embedder = store.embeddings ? 'store' : 'none' } = settings;
  if (embedder !== 'store' && embedder !== 'none' && typeof embedder?.embed !== 'function') {
    throw new InvalidArgumentError({
      argument: 'embedder',
      value: embedder,
      message: "expected an Embedder, 'store' or 'none'",
    });
  }
  const driver = new LangChainDriver<Store['FilterType']>(store, settings);
  const name = `${driver.name}:embeddings`;
  const chosen =
    embedder === 'store' ? new LangChainEmbedder(store.embeddings, { name, dimension }) : embedder;
  // The store's own embeddings never fixed its dimension, nor do LangChain embeddings whose dimension is not
  // known yet: core learns it from the first vectors.
  const lazy =
    embedder === 'store' || (chosen instanceof LangChainEmbedder && chosen.dimensionIfKnown === undefined);
  const zerdaEmbedder =
    chosen === 'none' || !lazy
      ? (chosen as Embedder | 'none')
      : {
          dimension: dimension as number,
          embed: chosen.embed.bind(chosen),
          embedQuery: chosen.embedQuery?.bind(chosen),
        };
  return createVectorStore(driver, {
    embedder: zerdaEmbedder === 'none' ? undefined : zerdaEmbedder,
    dimension,
    strictFilters: settings.strictFilters,
  }) as LangChainStore<Store['FilterType']>;
}
