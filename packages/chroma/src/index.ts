// `@zerda/chroma`: Zerda's Chroma backend (a contract-v2 driver over the official chromadb client).

export {
  type ChromaFilterConventionOptions,
  type ChromaWhere,
  chromaFilterConvention,
  createChromaFilterConvention,
} from './chroma-filter.js';
export type { ChromaStoreSettings } from './chroma-settings.js';
export { type ChromaStore, createChromaStore } from './chroma-store.js';
