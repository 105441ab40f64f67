import { type Deletable, type Listable, throwIfAborted, type VectorDatabase } from '@zerda/core';
import { createVectorStore, wrapBackendError } from '@zerda/core/backend';
import { FaissDriver } from './faiss-driver.js';
import { readFaissSave, restoreFaissSave, writeFaissSave } from './faiss-files.js';
import type { FaissFilter } from './faiss-filter.js';
import type { FaissIndexSettings, FaissIndexType, FaissStoreSettings } from './faiss-settings.js';

export type { FaissHnswSettings, FaissIndexType, FaissStoreSettings } from './faiss-settings.js';

/** Sizes and settings of a store, for monitoring and benchmarks. */
export interface FaissStoreStats {
  /** Live chunks. */
  count: number;
  dimension: number | undefined;
  metric: FaissIndexSettings['metric'];
  indexType: FaissIndexType;
  /** Vectors in the FAISS index, deleted HNSW entries not yet compacted included. */
  indexed: number;
  /** Deleted HNSW entries still in the graph. */
  deleted: number;
  /** The HNSW parameters in effect (index type 'hnsw'). */
  hnsw?: { m: number; efConstruction: number; efSearch: number };
  /** Whether an HNSW store holds an exact flat copy of its vectors (made when a filtered search needs it). */
  exactCopy: boolean;
}

/**
 * A FAISS store (`name: 'faiss'`): the contract-v2 store core makes from the FAISS driver, plus
 * FAISS's own operations. Native filter: `{ docIdFilter }` (see `faissFilterConvention`); any
 * other part of a `filter` is evaluated on the chunks the driver keeps beside the vectors.
 */
export type FaissStore = VectorDatabase<FaissFilter> & Deletable & Listable & FaissStoreOperations;

/** What a FAISS store does beyond the contract. */
export interface FaissStoreOperations {
  stats(): FaissStoreStats;
  /** Rebuilds an HNSW index without its deleted entries; returns how many were dropped (flat: 0). */
  compact(options?: { signal?: AbortSignal }): Promise<number>;
  /**
   * Saves to `directory` (created if needed): the FAISS index in FAISS's own format and a JSON
   * manifest of the chunks under their labels, with a SHA-256 of the index. Atomic: a crash leaves
   * the previous save or this one. A snapshot taken at the call.
   */
  save(directory: string, options?: { signal?: AbortSignal }): Promise<void>;
}

/** A FAISS store (faiss-node, loaded on first use). */
export function createFaissStore(settings: FaissStoreSettings = {}): FaissStore {
  const { embedder, dimension, strictFilters } = settings;
  const driver = new FaissDriver(settings);
  const store = createVectorStore(driver, { embedder, dimension, strictFilters });
  const { metric, indexType, hnsw } = driver.settings;
  return Object.assign(store, {
    stats: (): FaissStoreStats => ({
      count: driver.labels.entries.size,
      dimension: store.dimension,
      metric,
      indexType,
      indexed: driver.labels.ids.length,
      deleted: driver.labels.deleted,
      ...(indexType === 'hnsw' ? { hnsw: { ...hnsw } } : {}),
      exactCopy: driver.exact !== undefined,
    }),
    async compact(options: { signal?: AbortSignal } = {}): Promise<number> {
      throwIfAborted(options.signal);
      if (driver.labels.deleted === 0) return 0;
      const faiss = await driver.load();
      try {
        return driver.compact(faiss);
      } catch (error) {
        throw wrapBackendError('faiss', 'compact', error);
      }
    },
    save: (directory: string, options: { signal?: AbortSignal } = {}) =>
      writeFaissSave(driver, store.dimension, directory, options.signal),
  });
}

/**
 * Loads a store saved by `save`. The metric, index type, dimension and HNSW M come from the
 * files; settings that contradict them are refused with an IndexFormatError, as are corrupt,
 * truncated or mismatched files (all checked before FAISS reads the index: faiss-node aborts the
 * process on some FAISS errors). `hnsw.efSearch` and `efConstruction` may differ from the save's.
 */
export async function loadFaissStore(
  directory: string,
  settings: FaissStoreSettings = {},
  options: { signal?: AbortSignal } = {},
): Promise<FaissStore> {
  const save = await readFaissSave(directory, settings, options.signal);
  const store = createFaissStore(save.settings);
  await restoreFaissSave(store.driver as FaissDriver, save);
  return store;
}
