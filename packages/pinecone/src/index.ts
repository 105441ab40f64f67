// @zerda/pinecone: Zerda's Pinecone backend over the official client.

// Re-exported from core, where every backend's partial-write error lives.
export { BatchWriteError } from '@zerda/core';
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
