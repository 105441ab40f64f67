// `@zerda/chroma`: Zerda's Chroma backend (a VectorDatabase v1 over the official chromadb client).

export { ChromaTimeoutError } from './chroma-errors.js';
export { reservedKeyPrefixes } from './chroma-metadata.js';
export {
  type ChromaFilterOptions,
  type ChromaSearchOptions,
  type ChromaSpace,
  ChromaStore,
  type ChromaStoreSettings,
  createChromaStore,
  DEFAULT_CHROMA_COLLECTION,
  DEFAULT_CHROMA_TIMEOUT_MS,
  DEFAULT_CHROMA_URL,
} from './chroma-store.js';
