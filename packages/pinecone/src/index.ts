// @zerda/pinecone: Zerda's Pinecone backend (a contract-v2 driver over the official client).

export type { RetryEvent, RetrySettings } from '@zerda/core/backend';
export type { PineconeDriver } from './pinecone-driver.js';
export {
  createPineconeFilterConvention,
  type PineconeFilter,
  type PineconeFilterConventionSettings,
  pineconeFilterConvention,
} from './pinecone-filter.js';
export { pineconeLimits } from './pinecone-records.js';
export {
  createPineconeStore,
  type PineconeLogger,
  type PineconeMetric,
  type PineconeStore,
  type PineconeStoreSettings,
} from './pinecone-store.js';
export { createMapTextStore, type TextStore } from './text-store.js';
