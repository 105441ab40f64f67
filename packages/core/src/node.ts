// `@zerda/core/node`: what needs Node's file system. The main entry and every other subpath import
// no Node built-in, so they run in browsers, workers and edge runtimes.
export { createFileStorage, type FileStorageSettings } from './collection/file-storage.js';
export { loadBeirFolder, readBeirCorpus, readBeirQueries } from './eval/beir.js';
export { readEmbeddings } from './eval/embeddings.js';
export { readQrels, readTrecRun, writeTrecRun } from './eval/trec-files.js';
export {
  type KeywordSaveOptions,
  loadBM25Index,
  loadKeywordRetriever,
  saveBM25Index,
  saveKeywordRetriever,
} from './keyword/keyword-files.js';
export { replaceFileDurably, syncDirectory, writeFileDurably } from './util/durable-files.js';
export {
  type DataFileContent,
  type DataFileReference,
  type ManifestFilesSaveOptions,
  type ManifestSaveOptions,
  readDataFile,
  readManifestText,
  writeManifestSave,
  writeManifestSaveFiles,
} from './util/manifest-save.js';
export { nodeScanThreads } from './vector/kernels/scan-threads-node.js';
export { loadInMemoryVectorStore, saveInMemoryVectorStore } from './vector/store-files.js';
