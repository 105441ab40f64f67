// @zerda/pinecone: Zerda's Pinecone backend over the official client.

export { BatchWriteError } from './batch-write-error.js';
export { pineconeLimits } from './pinecone-records.js';
export {
  connectPineconeStore,
  createPineconeStore,
  type PineconeFilterOptions,
  type PineconeMetric,
  type PineconeSearchOptions,
  PineconeStore,
  type PineconeStoreSettings,
} from './pinecone-store.js';
export type { PineconeLogger, RetryEvent, RetrySettings } from './retry.js';
export { createMapTextStore, type TextStore } from './text-store.js';
