import type { CallOptions, VectorStoreOf } from '@zerda/core';
import { createVectorStore } from '@zerda/core/backend';
import { ChromaDriver } from './chroma-driver.js';
import { type ChromaStoreSettings, resolveChromaSettings } from './chroma-settings.js';

export type { ChromaStoreSettings } from './chroma-settings.js';

/** A Chroma store: the v2 store core makes from the Chroma driver, plus `deleteCollection`. */
export type ChromaStore = VectorStoreOf<ChromaDriver> & {
  /** The driver; its `settings` say the server's `url`, the `collectionName`, `timeoutMs` and `docIdKey` in use. */
  readonly driver: ChromaDriver;
  /** Deletes the whole collection from the server (a missing one is fine); the next call creates it again. */
  deleteCollection(options?: CallOptions): Promise<void>;
};

/**
 * A Zerda vector store over a Chroma server, through the official `chromadb` client. Filters go
 * to Chroma as a native `where` (convention 'chroma'); what Chroma cannot evaluate (`$exists`,
 * the `id` pseudo-field, `$not` around a range) is evaluated on the candidates. The connection
 * is made lazily, at the first call.
 */
export function createChromaStore(settings: ChromaStoreSettings = {}): ChromaStore {
  const driver = new ChromaDriver(resolveChromaSettings(settings));
  const { embedder, dimension, strictFilters } = settings;
  const store = createVectorStore(driver, { embedder, dimension, strictFilters });
  return Object.assign(store, {
    deleteCollection: (options?: CallOptions) => driver.deleteCollection(options),
  }) as ChromaStore;
}
