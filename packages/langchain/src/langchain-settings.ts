import type { VectorStoreInterface } from '@langchain/core/vectorstores';
import {
  type DistanceMetric,
  type Embedder,
  type FilterConvention,
  InvalidArgumentError,
  type ScoreConversion,
} from '@zerda/core';
import { checkPositiveIntegers } from '@zerda/core/backend';
import type { StoredMetadataKeys } from './documents.js';

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

/** What the driver derives from the store and the settings, checked. */
export interface ResolvedLangChainSettings {
  /** The store's `_vectorstoreType()` ('vectorstore' when it has none). */
  storeType: string;
  /** Whether `delete` exists on the Zerda store. */
  deletion: boolean;
  upsert: UpsertMode;
}

/** Checks the settings (InvalidArgumentError naming the first bad one) and derives the defaults from the store. */
export function resolveLangChainSettings(
  store: VectorStoreInterface,
  settings: LangChainStoreSettings,
): ResolvedLangChainSettings {
  const { dimension, maxBatchSize, timeoutMs, maxFetch } = settings;
  checkPositiveIntegers({ dimension, maxBatchSize, timeoutMs, maxFetch });
  const deletion = settings.deletion ?? implementsDelete(store);
  const upsert = settings.upsert ?? (deletion ? 'delete-first' : 'append');
  const modes = deletion ? ['delete-first', 'native', 'append'] : ['native', 'append'];
  if (!modes.includes(upsert)) {
    const message = `expected ${modes.join(', ')} ('delete-first' needs a store that implements delete)`;
    throw new InvalidArgumentError({ argument: 'upsert', value: upsert, message });
  }
  return { storeType: storeType(store), deletion, upsert };
}

function storeType(store: VectorStoreInterface): string {
  try {
    return store._vectorstoreType() || 'vectorstore';
  } catch {
    return 'vectorstore';
  }
}

/** Whether `delete` is the store's own, not LangChain's base method that throws "Not implemented". */
function implementsDelete(store: VectorStoreInterface): boolean {
  let prototype = Object.getPrototypeOf(store);
  while (prototype !== null && !Object.hasOwn(prototype, 'delete'))
    prototype = Object.getPrototypeOf(prototype);
  // LangChain's abstract base, from whichever copy of @langchain/core is installed.
  const base =
    prototype?.constructor?.name === 'VectorStore' && Object.hasOwn(prototype, 'similaritySearchWithScore');
  return prototype === null ? typeof store.delete === 'function' : !base;
}
