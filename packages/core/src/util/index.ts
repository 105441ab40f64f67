export { sha256Hex, syncDirectory, writeFileDurably } from './durable-files.js';
export { LruCache } from './lru-cache.js';
export {
  type DataFileReference,
  type ManifestSaveOptions,
  readDataFile,
  readManifestText,
  writeManifestSave,
} from './manifest-save.js';
