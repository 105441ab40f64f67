import {
  type Chunk,
  ChunkValidationError,
  type Deletable,
  type DistanceMetric,
  type Embedder,
  IndexFormatError,
  InvalidArgumentError,
  type Listable,
  normalizeChunks,
  throwIfAborted,
  type VectorDatabase,
} from '@zerda/core';
import { createVectorStore, wrapBackendError } from '@zerda/core/backend';
import { FaissDriver } from './faiss-driver.js';
import { type FaissIndexType, readFaissSave, writeFaissSave } from './faiss-files.js';
import type { FaissFilter } from './faiss-filter.js';
import { withHnswParameters } from './faiss-index-format.js';
import type { FaissModule } from './faiss-module.js';

export type { FaissIndexType } from './faiss-files.js';

/** HNSW graph parameters (FAISS's names). */
export interface FaissHnswSettings {
  /** Neighbours per node (FAISS's M; 2M on the bottom layer). Default 32. Fixed once built. */
  m?: number;
  /** Breadth of the search while inserting: higher builds slower and better. Default 40. */
  efConstruction?: number;
  /** Breadth of a search: higher is slower and finds more of the true neighbours. Default 64. */
  efSearch?: number;
}

export interface FaissStoreSettings {
  /** Embeds chunk texts on `add` (when no `embeddings` are given) and query texts on `search`. */
  embedder?: Embedder;
  /** Vector dimension. Default: the embedder's, else the length of the first vectors added. */
  dimension?: number;
  /**
   * Similarity (default 'cosine'). 'cosine': vectors are scaled to unit length and searched by
   * inner product; 'dot': inner product of the vectors as given; 'l2': `1 / (1 + d)` for the
   * Euclidean distance d (FAISS returns d², converted by core).
   */
  metric?: DistanceMetric;
  /**
   * 'flat' (default): exact search (FAISS IndexFlatIP, or IndexFlatL2 for 'l2'). 'hnsw': an
   * approximate HNSW graph over the same vectors (FAISS IndexHNSWFlat), faster on large stores.
   */
  indexType?: FaissIndexType;
  /** HNSW parameters (index type 'hnsw' only). */
  hnsw?: FaissHnswSettings;
  /**
   * HNSW cannot remove vectors: deleted and replaced chunks stay in the graph, hidden from search,
   * until it is rebuilt without them: when they pass this share of the index (default 0.25), or on `compact()`.
   */
  compactRatio?: number;
  /** Refuse (FilterError) a `filter` FAISS cannot evaluate whole instead of evaluating the rest here. */
  strictFilters?: boolean;
  /** The faiss-node module to use (default: `import('faiss-node')` on first use). */
  client?: FaissModule;
}

/** Sizes and settings of a store, for monitoring and benchmarks. */
export interface FaissStoreStats {
  /** Live chunks. */
  count: number;
  dimension: number | undefined;
  metric: DistanceMetric;
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
  return Object.assign(store, {
    stats: (): FaissStoreStats => ({
      count: driver.entries.size,
      dimension: store.dimension,
      metric: driver.metric,
      indexType: driver.indexType,
      indexed: driver.labelIds.length,
      deleted: driver.deleted,
      ...(driver.indexType === 'hnsw' ? { hnsw: { ...driver.hnsw } } : {}),
      exactCopy: driver.exact !== undefined,
    }),
    async compact(options: { signal?: AbortSignal } = {}): Promise<number> {
      throwIfAborted(options.signal);
      if (driver.deleted === 0) return 0;
      const faiss = await driver.load();
      try {
        return driver.compact(faiss);
      } catch (error) {
        throw wrapBackendError('faiss', 'compact', error);
      }
    },
    async save(directory: string, options: { signal?: AbortSignal } = {}): Promise<void> {
      throwIfAborted(options.signal);
      const dimension = store.dimension;
      if (dimension === undefined) {
        throw new InvalidArgumentError({
          argument: 'store',
          message:
            'an empty store of unknown dimension has nothing to save; set `dimension` or add vectors first',
        });
      }
      // Taken before the first await when there is an index: later writes are not in the save.
      const index = driver.index ?? driver.newIndex(await driver.load(), dimension);
      let bytes: Uint8Array;
      try {
        bytes = index.toBuffer();
      } catch (error) {
        throw wrapBackendError('faiss', 'save', error);
      }
      const { metric, indexType, hnsw } = driver;
      const labels = driver.labelIds.map((id) => (id === undefined ? null : driver.entries.get(id)!.chunk));
      const contents = { metric, indexType, dimension, count: driver.entries.size, labels };
      await writeFaissSave(
        directory,
        indexType === 'hnsw' ? { ...contents, hnsw: { ...hnsw } } : contents,
        bytes,
        options.signal,
      );
    },
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
  const {
    manifest,
    layout,
    indexPath,
    manifestPath,
    index: saved,
  } = await readFaissSave(directory, options.signal);
  const refuse = (message: string, path = manifestPath, cause?: unknown): never => {
    throw new IndexFormatError({ message, path, cause });
  };
  const expected = settings.dimension ?? settings.embedder?.dimension;
  if (settings.metric !== undefined && settings.metric !== manifest.metric) {
    refuse(`The saved store uses the ${manifest.metric} metric, the settings ask for ${settings.metric}`);
  } else if (settings.indexType !== undefined && settings.indexType !== manifest.indexType) {
    refuse(`The saved store is a ${manifest.indexType} index, the settings ask for ${settings.indexType}`);
  } else if (expected !== undefined && expected !== manifest.dimension) {
    refuse(`The saved store has dimension ${manifest.dimension}, the settings or embedder ${expected}`);
  } else if (settings.hnsw?.m !== undefined && settings.hnsw.m !== manifest.hnsw?.m) {
    refuse(`The saved HNSW index has M ${manifest.hnsw?.m}, the settings ask for ${settings.hnsw.m}`);
  }
  let chunks: Chunk[] = [];
  try {
    chunks = normalizeChunks(manifest.labels.filter((chunk): chunk is Chunk => chunk !== null));
  } catch (error) {
    if (!ChunkValidationError.isInstance(error)) throw error;
    refuse(`The saved chunks are invalid: ${error.message}`);
  }
  const { metric, indexType, dimension } = manifest;
  const hnsw = manifest.hnsw && {
    m: manifest.hnsw.m,
    efConstruction: settings.hnsw?.efConstruction ?? manifest.hnsw.efConstruction,
    efSearch: settings.hnsw?.efSearch ?? manifest.hnsw.efSearch,
  };
  const store = createFaissStore({ ...settings, metric, indexType, dimension, ...(hnsw ? { hnsw } : {}) });
  const driver = store.driver as FaissDriver;
  const faiss = await driver.load();
  let bytes = saved;
  if (
    hnsw &&
    (layout.hnsw?.efSearch !== hnsw.efSearch || layout.hnsw.efConstruction !== hnsw.efConstruction)
  ) {
    bytes = withHnswParameters(bytes, hnsw);
  }
  try {
    driver.index = faiss.Index.fromBuffer(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    refuse('FAISS could not read the index file', indexPath, error);
  }
  if (
    driver.index!.ntotal() !== manifest.labels.length ||
    driver.index!.getDimension() !== manifest.dimension
  ) {
    refuse('FAISS read an index of another size than the manifest', indexPath);
  }
  driver.dimension = manifest.dimension;
  let next = 0;
  driver.labelIds = manifest.labels.map((entry, label) => {
    if (entry === null) {
      driver.deleted++;
      return undefined;
    }
    const chunk = chunks[next++]!;
    driver.entries.set(chunk.id, { label, chunk });
    return chunk.id;
  });
  return store;
}
