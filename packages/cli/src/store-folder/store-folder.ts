import { readdir, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import {
  type Analyzer,
  type Chunk,
  type Collection,
  type CollectionStorage,
  HashEmbedder,
  type HybridFusionMethod,
  IndexFormatError,
  openCollection,
  type StorageLock,
  StorageLockedError,
} from '@zerda/core';
import { createFileStorage, replaceFileDurably, syncDirectory } from '@zerda/core/node';
import { namedAnalyzers } from '../analyzers.js';
import { backendAdapter } from './backends.js';
import {
  checkSameSettings,
  makeStoreConfig,
  readStoreConfig,
  STORE_CONFIG,
  type StoreConfig,
  StoreError,
  type StoreSettings,
} from './store-config.js';

// Opening a store folder's collection, for searching or for writing (the folder's layout: store-config.ts).

/** How long a writer waits for a store's lock (held by a search for a moment, or by another writer). */
const LOCK_WAIT_MS = 3000;
/** The names the collection's file storage writes into the folder. */
const COLLECTION_FILES = /^(zerda-collection\.json|zerda-collection\.lock|blob-.*\.bin|log-.*\.wal|.*\.tmp)$/;

/** A store folder's collection, opened with its config. */
export interface OpenStore {
  directory: string;
  config: StoreConfig;
  collection: Collection;
  analyzer: Analyzer;
  /** What the reader could not do (another process writing the store, ...). */
  warnings: string[];
  /** Closes the collection (a writer's last snapshot) and the backend's connections. */
  close(): Promise<void>;
}

/** Opens the store at `directory` to search it (it writes nothing there). */
export async function openStoreForReading(
  directory: string,
  options: { fusion?: HybridFusionMethod } = {},
): Promise<OpenStore> {
  const config = await readStoreConfig(directory);
  // A writer that commits a snapshot while this reads can remove the blobs just named: read again.
  for (let attempt = 1; ; attempt++) {
    try {
      const storage = readOnly(createFileStorage(directory));
      const store = await openConfigured(directory, config, storage, { ...options, reader: storage });
      if (storage.writer !== undefined) {
        store.warnings.push(
          `${storage.writer}: the results are those of the store's last snapshot, without the batches added since`,
        );
      }
      return store;
    } catch (error) {
      if (!(IndexFormatError.isInstance(error) && attempt < 3)) throw error;
    }
  }
}

/**
 * Opens the store at `directory` for writing, creating it with `settings` when there is none.
 * An existing store must have the same backend, analyser, embedder dimension and BM25 parameters;
 * `overwrite` starts a new one in its place instead (its files are removed first, and a backend's
 * records left in a service are deleted).
 */
export async function openStoreForWriting(
  directory: string,
  settings: StoreSettings,
  options: { overwrite?: boolean } = {},
): Promise<OpenStore> {
  let existing: StoreConfig | undefined;
  try {
    existing = await readStoreConfig(directory);
  } catch (error) {
    if (!(error instanceof StoreError && (error.missing || options.overwrite))) throw error;
  }
  if (options.overwrite) await removeStoreFiles(directory);
  else if (existing === undefined) await checkNoOtherFiles(directory);
  if (existing !== undefined && !options.overwrite) checkSameSettings(existing, settings, directory);
  const config = makeStoreConfig(settings, options.overwrite ? undefined : existing);
  const store = await openWaitingForReaders(directory, config);
  try {
    if (options.overwrite && (await store.collection.count()) > 0) {
      // A service's collection or table outlives the folder: empty it.
      const ids: string[] = [];
      for await (const page of store.collection.list()) for (const chunk of page) ids.push(chunk.id);
      await store.collection.delete(ids);
    }
    // Written once the collection's own files are there (its storage refuses a folder of other files).
    await replaceFileDurably(join(directory, STORE_CONFIG), `${JSON.stringify(config, null, 2)}\n`);
    await syncDirectory(directory);
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}

/** Opens for writing; a search holds the lock for a moment, so a locked store is tried again for a few seconds. */
async function openWaitingForReaders(directory: string, config: StoreConfig): Promise<OpenStore> {
  const started = Date.now();
  for (;;) {
    try {
      return await openConfigured(directory, config, createFileStorage(directory), {});
    } catch (error) {
      if (!StorageLockedError.isInstance(error) || Date.now() - started > LOCK_WAIT_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function openConfigured(
  directory: string,
  config: StoreConfig,
  storage: CollectionStorage,
  options: { fusion?: HybridFusionMethod; reader?: ReadOnlyStorage },
): Promise<OpenStore> {
  const analyzer = namedAnalyzers[config.analyzer.name]();
  if (analyzer.name !== config.analyzer.signature) {
    throw new StoreError(
      `the store was built with analyser '${config.analyzer.signature}', but '${config.analyzer.name}' is now '${analyzer.name}'; index it again`,
      directory,
    );
  }
  const embedder = new HashEmbedder({ dimension: config.embedder.dimension, analyzer });
  if (embedder.name !== config.embedder.signature) {
    throw new StoreError(
      `the store's vectors come from embedder '${config.embedder.signature}', but this zerda builds '${embedder.name}'; index it again`,
      directory,
    );
  }
  const backend = await backendAdapter(config.backend.name).open({
    embedder,
    options: config.backend.options,
    storeName: storeName(directory),
  });
  let collection: Collection;
  try {
    collection = await openCollection({
      store: backend.store,
      storage,
      analyzer,
      k1: config.keyword.k1,
      b: config.keyword.b,
      ...(options.fusion ? { fusion: options.fusion } : {}),
    });
  } catch (error) {
    await backend.store.close?.().catch(() => undefined);
    await backend.dispose?.().catch(() => undefined);
    throw error;
  }
  return {
    directory,
    config,
    collection,
    analyzer,
    warnings: [],
    async close() {
      try {
        if (options.reader) {
          // A reader has nothing to save: closing the collection would snapshot it for nothing.
          await options.reader.release();
          await collection.store.close();
        } else await collection.close();
      } finally {
        await backend.dispose?.();
      }
    },
  };
}

/**
 * The folder's storage for a reader: it takes the lock when no one holds it (and then reads the
 * snapshot and the log), or, while another process writes, reads the last snapshot only. It
 * never writes: what opening derives (a snapshot, a reconciliation) is left for the next writer.
 */
interface ReadOnlyStorage extends CollectionStorage {
  /** What holds the store, when another process does (and only the last snapshot was read). */
  writer?: string;
  /** Lets go of the lock, where this reader took it. */
  release(): Promise<void>;
}

function readOnly(storage: CollectionStorage): ReadOnlyStorage {
  let held: StorageLock | undefined;
  let snapshotOnly = false;
  const release = async () => {
    const lock = held;
    held = undefined;
    await lock?.release();
  };
  const view: ReadOnlyStorage = {
    release,
    location: storage.location,
    async lock() {
      try {
        held = await storage.lock();
      } catch (error) {
        if (!StorageLockedError.isInstance(error)) throw error;
        snapshotOnly = true;
        view.writer = `another process (${error.holder}) holds the store`;
      }
      return { release };
    },
    // The options pass through: the vector image read into place, the chunk texts left unread.
    readSnapshot: (options) => storage.readSnapshot(options),
    async commitSnapshot() {},
    async appendLog() {
      throw new StoreError('a store opened for searching is not written to', storage.location);
    },
    async readLog() {
      return snapshotOnly ? [] : storage.readLog();
    },
  };
  return view;
}

/** Documents (distinct docIds) and chunks in a collection. */
export async function storeCounts(collection: Collection): Promise<{ documents: number; chunks: number }> {
  const documents = new Set<string>();
  let chunks = 0;
  for await (const page of collection.list({ pageSize: 10_000 })) {
    for (const chunk of page) documents.add(documentOf(chunk));
    chunks += page.length;
  }
  return { documents: documents.size, chunks };
}

/** The document a chunk belongs to: its docId, or its own id. */
export function documentOf(chunk: Chunk): string {
  return chunk.docId ?? chunk.id;
}

function storeName(directory: string): string {
  return basename(resolve(directory)).replace(/[^A-Za-z0-9_-]+/g, '-') || 'zerda';
}

/** A new store goes into a new or empty folder (or one holding only a collection's files). */
async function checkNoOtherFiles(directory: string): Promise<void> {
  const entries = await readdir(directory).catch(() => [] as string[]);
  const others = entries.filter((name) => !COLLECTION_FILES.test(name));
  if (others.length > 0) {
    throw new StoreError(
      `${directory} is not a zerda store and is not empty (it holds ${others.slice(0, 3).join(', ')}${others.length > 3 ? ', ...' : ''}); give --store a new or empty folder`,
      directory,
    );
  }
}

/** Removes a store's files (its config and its collection's, or a version 1 store's) and nothing else. */
async function removeStoreFiles(directory: string): Promise<void> {
  const entries = await readdir(directory).catch(() => [] as string[]);
  // A live writer's lock stays, and the collection then refuses to open: nothing is lost.
  const held = await createFileStorage(directory).lock();
  for (const name of entries) {
    if (name === 'zerda-collection.lock') continue;
    if (
      COLLECTION_FILES.test(name) ||
      name === STORE_CONFIG ||
      /^data-[0-9a-f]{16}$/.test(name) ||
      name === 'zerda-store.lock'
    ) {
      await rm(join(directory, name), { recursive: true, force: true });
    }
  }
  await held.release();
  await checkNoOtherFiles(directory);
}
