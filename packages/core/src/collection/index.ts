// The collection: one object over a corpus in a vector database plus the BM25 index, consistent
// and durable through the storage contract (in memory here; files in `@zerda/core/node`).

export {
  Collection,
  type CollectionAddOptions,
  type CollectionOpenReport,
  type CollectionRetrieveOptions,
  type CollectionSettings,
  openCollection,
  type RetrievalMode,
} from './collection.js';
export {
  DatabaseCollection,
  type DatabaseCollectionOpenReport,
  type KeywordDrift,
} from './database-collection.js';
export { createIndexedDbStorage, type IndexedDbStorageSettings } from './indexeddb-storage.js';
export {
  type BlobSource,
  bytesSource,
  type CollectionStorage,
  createMemoryStorage,
  type SnapshotReadOptions,
  type StorageLock,
} from './storage.js';
