import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import {
  type Analyzer,
  type BaseRetriever,
  type Chunk,
  HashEmbedder,
  type HybridFusionMethod,
  HybridRetriever,
  KeywordRetriever,
  syncDirectory,
  type VectorDatabase,
  VectorRetriever,
  writeFileDurably,
  ZerdaError,
} from '@zerda/core';
import { type AnalyzerName, isAnalyzerName, namedAnalyzers } from '../analyzers.js';
import { type BackendName, type BackendOptions, backendAdapter, knownBackends } from './backends.js';

/*
 * A `zerda` store is a directory:
 *
 *   zerda-store.json     the manifest: format and version, backend, analyser, embedder, BM25 and
 *                        chunking settings, counts, and the name of the data folder in use
 *   data-<random>/       the data of the last commit:
 *     keyword/           the BM25 index and the chunks (KeywordRetriever.save)
 *     vectors/           the vectors, for a backend that keeps them locally (memory, faiss)
 *   zerda-store.lock     while an index run writes (holds its process id)
 *
 * A commit writes a complete new data folder, flushes it to disk, then writes the manifest to a
 * temporary file and renames it over the old one. The rename is the commit: whatever happens,
 * the manifest names either the old data folder or the new one, each complete. Data folders that
 * no manifest names (left by an interrupted commit) are removed by the next writer.
 */

export const STORE_MANIFEST = 'zerda-store.json';
export const STORE_FORMAT = 'zerda.store';
export const STORE_FORMAT_VERSION = 1;
const LOCK_FILE = 'zerda-store.lock';
const DATA_PATTERN = /^data-[0-9a-f]{16}$/;

export interface StoreManifest {
  format: typeof STORE_FORMAT;
  version: typeof STORE_FORMAT_VERSION;
  backend: { name: BackendName; options: BackendOptions };
  /** The analyser of BM25 and of the hash embedder: its `zerda` name and its configuration string. */
  analyzer: { name: AnalyzerName; signature: string };
  embedder: { name: 'hash'; dimension: number; signature: string };
  keyword: { k1: number; b: number };
  vector: { metric: 'cosine' };
  /** How documents were split (the settings of the last run that wrote). */
  chunking: { unit: 'words'; size: number; overlap: number };
  counts: { documents: number; chunks: number };
  /** The data folder of the last commit (absent before the first). */
  data?: string;
  createdAt: string;
  updatedAt: string;
}

/** The settings of a new store. */
export interface StoreSettings {
  backend: BackendName;
  backendOptions: BackendOptions;
  analyzer: AnalyzerName;
  dimension: number;
  k1: number;
  b: number;
  chunking: { size: number; overlap: number };
}

/** No store at the path, or not one this version reads. */
export class StoreError extends ZerdaError {
  constructor(
    message: string,
    readonly path: string,
    cause?: unknown,
    /** True when there is no store at all (no manifest). */
    readonly missing = false,
  ) {
    super({ message, cause }, 'StoreError');
  }
}

/** The retrieval modes of `zerda search`. */
export type SearchMode = 'hybrid' | 'keyword' | 'vector';
export const searchModes: readonly SearchMode[] = ['hybrid', 'keyword', 'vector'];

/**
 * A `zerda` store opened for searching or writing: the BM25 keyword retriever (which also holds
 * the chunks), the vector database of its backend and the embedder.
 */
export class ZerdaStore {
  private lockHeld = false;
  /** The data folder of the store this one replaces (`--overwrite`), removed at the first commit. */
  private replaces: string | undefined;

  private constructor(
    readonly directory: string,
    public manifest: StoreManifest,
    readonly analyzer: Analyzer,
    readonly embedder: HashEmbedder,
    readonly keyword: KeywordRetriever,
    readonly vectors: VectorDatabase,
  ) {}

  /** The manifest of the store at `directory`; a missing or foreign one is a StoreError. */
  static async readManifest(directory: string): Promise<StoreManifest> {
    const path = join(directory, STORE_MANIFEST);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = error instanceof Error && 'code' in error ? error.code : undefined;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        throw new StoreError(
          `no zerda store at ${directory} (${STORE_MANIFEST} not found); create one with: zerda index <files or folders> --store ${directory}`,
          directory,
          error,
          true,
        );
      }
      throw new StoreError(
        `the store manifest ${path} cannot be read (${String(code ?? error)})`,
        path,
        error,
      );
    }
    let value: Partial<StoreManifest>;
    try {
      value = JSON.parse(text) as Partial<StoreManifest>;
    } catch (error) {
      throw new StoreError(`the store manifest ${path} is not valid JSON`, path, error);
    }
    if (value?.format !== STORE_FORMAT) {
      throw new StoreError(`${path} is not a zerda store manifest (format ${String(value?.format)})`, path);
    }
    if (value.version !== STORE_FORMAT_VERSION) {
      throw new StoreError(
        `the store at ${directory} has format version ${String(value.version)}; this zerda reads version ${STORE_FORMAT_VERSION}`,
        path,
      );
    }
    const manifest = value as StoreManifest;
    if (!knownBackends.includes(manifest.backend?.name)) {
      throw new StoreError(
        `the store at ${directory} names an unknown backend '${String(manifest.backend?.name)}'`,
        path,
      );
    }
    if (!isAnalyzerName(manifest.analyzer?.name)) {
      throw new StoreError(
        `the store at ${directory} names an unknown analyser '${String(manifest.analyzer?.name)}'`,
        path,
      );
    }
    if (manifest.data !== undefined && !DATA_PATTERN.test(manifest.data)) {
      throw new StoreError(`the store manifest ${path} names an invalid data folder`, path);
    }
    return manifest;
  }

  /** Opens the store at `directory` as of its last commit. */
  static async open(directory: string): Promise<ZerdaStore> {
    const manifest = await ZerdaStore.readManifest(directory);
    const analyzer = namedAnalyzers[manifest.analyzer.name]();
    if (analyzer.name !== manifest.analyzer.signature) {
      throw new StoreError(
        `the store was built with analyser '${manifest.analyzer.signature}', but '${manifest.analyzer.name}' is now '${analyzer.name}'; index it again`,
        directory,
      );
    }
    const embedder = new HashEmbedder({ dimension: manifest.embedder.dimension, analyzer });
    if (embedder.name !== manifest.embedder.signature) {
      throw new StoreError(
        `the store's vectors come from embedder '${manifest.embedder.signature}', but this zerda builds '${embedder.name}'; index it again`,
        directory,
      );
    }
    const adapter = backendAdapter(manifest.backend.name);
    const context = { embedder, options: manifest.backend.options, storeName: storeName(directory) };
    let keyword: KeywordRetriever;
    let vectors: VectorDatabase;
    if (manifest.data === undefined) {
      keyword = new KeywordRetriever({ analyzer, k1: manifest.keyword.k1, b: manifest.keyword.b });
      vectors = await adapter.create(context);
    } else {
      const data = join(directory, manifest.data);
      keyword = await KeywordRetriever.load(join(data, 'keyword'), { analyzer });
      vectors =
        adapter.persistence === 'local'
          ? await adapter.open(context, join(data, 'vectors'))
          : await adapter.open(context, directory);
    }
    return new ZerdaStore(directory, manifest, analyzer, embedder, keyword, vectors);
  }

  /**
   * Opens the store at `directory` for writing, creating it with `settings` when there is none
   * (nothing is written until the first commit). Takes the store's lock; an existing store must
   * have been built with the same analyser, embedder and backend.
   */
  static async openForWriting(
    directory: string,
    settings: StoreSettings,
    options: { overwrite?: boolean } = {},
  ): Promise<ZerdaStore> {
    await mkdir(directory, { recursive: true });
    await takeLock(directory);
    try {
      let store: ZerdaStore;
      let existing: StoreManifest | undefined;
      try {
        existing = await ZerdaStore.readManifest(directory);
      } catch (error) {
        const missing = error instanceof StoreError && error.missing;
        if (!missing && !options.overwrite) throw error;
      }
      if (existing === undefined) await checkNoOtherFiles(directory);
      if (existing !== undefined && !options.overwrite) {
        store = await ZerdaStore.open(directory);
        checkSameSettings(store.manifest, settings, directory);
        store.manifest = {
          ...store.manifest,
          chunking: { unit: 'words', ...settings.chunking },
        };
      } else {
        const analyzer = namedAnalyzers[settings.analyzer]();
        const embedder = new HashEmbedder({ dimension: settings.dimension, analyzer });
        const adapter = backendAdapter(settings.backend);
        const vectors = await adapter.create({
          embedder,
          options: settings.backendOptions,
          storeName: storeName(directory),
        });
        const now = new Date().toISOString();
        const manifest: StoreManifest = {
          format: STORE_FORMAT,
          version: STORE_FORMAT_VERSION,
          backend: { name: settings.backend, options: settings.backendOptions },
          analyzer: { name: settings.analyzer, signature: analyzer.name },
          embedder: { name: 'hash', dimension: settings.dimension, signature: embedder.name },
          keyword: { k1: settings.k1, b: settings.b },
          vector: { metric: 'cosine' },
          chunking: { unit: 'words', ...settings.chunking },
          counts: { documents: 0, chunks: 0 },
          createdAt: now,
          updatedAt: now,
        };
        const keyword = new KeywordRetriever({ analyzer, k1: settings.k1, b: settings.b });
        store = new ZerdaStore(directory, manifest, analyzer, embedder, keyword, vectors);
        store.replaces = existing?.data;
      }
      store.lockHeld = true;
      await store.removeOrphans();
      return store;
    } catch (error) {
      await releaseLock(directory);
      throw error;
    }
  }

  /** Chunks held. */
  get size(): number {
    return this.keyword.size;
  }

  /**
   * Adds one document's chunks (with their vectors), replacing the chunks an earlier version of
   * the same document left: ids `<id>` and `<id>#<n>` that this version no longer has.
   */
  async addChunks(
    chunks: readonly Chunk[],
    embeddings: readonly Float32Array[],
    documentIds: readonly string[],
  ) {
    const fresh = new Set(chunks.map((chunk) => chunk.id));
    const stale: string[] = [];
    for (const documentId of documentIds) {
      for (const id of this.idsOfDocument(documentId)) if (!fresh.has(id)) stale.push(id);
    }
    if (stale.length > 0) {
      this.keyword.remove(stale);
      await this.vectors.delete(stale);
    }
    await this.vectors.add(chunks, { embeddings });
    this.keyword.add(chunks);
  }

  private idsOfDocument(documentId: string): string[] {
    const ids: string[] = [];
    if (this.keyword.get(documentId) !== undefined) ids.push(documentId);
    for (let n = 1; this.keyword.get(`${documentId}#${n}`) !== undefined; n++) ids.push(`${documentId}#${n}`);
    return ids;
  }

  /** Documents and chunks held. */
  counts(): { documents: number; chunks: number } {
    const documents = new Set<string>();
    for (const chunk of this.keyword.chunks()) documents.add(chunk.docId ?? chunk.id);
    return { documents: documents.size, chunks: this.keyword.size };
  }

  /**
   * Makes everything added so far durable, atomically: a new data folder, flushed, then the
   * manifest renamed over the old one (see the layout above). Returns the manifest written.
   */
  async commit(): Promise<StoreManifest> {
    if (!this.lockHeld) throw new StoreError('the store was not opened for writing', this.directory);
    const adapter = backendAdapter(this.manifest.backend.name);
    const previous = this.manifest.data ?? this.replaces;
    const data = `data-${randomBytes(8).toString('hex')}`;
    const dataPath = join(this.directory, data);
    try {
      await this.keyword.save(join(dataPath, 'keyword'));
      if (adapter.persistence === 'local') await adapter.save?.(this.vectors, join(dataPath, 'vectors'));
      await syncTree(dataPath);
      const manifest: StoreManifest = {
        ...this.manifest,
        counts: this.counts(),
        data,
        updatedAt: new Date().toISOString(),
      };
      const manifestPath = join(this.directory, STORE_MANIFEST);
      const temporary = `${manifestPath}.${data}.tmp`;
      await writeFileDurably(temporary, `${JSON.stringify(manifest, null, 2)}\n`);
      await rename(temporary, manifestPath);
      await syncDirectory(this.directory);
      this.manifest = manifest;
    } catch (error) {
      await rm(dataPath, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
    this.replaces = undefined;
    if (previous !== undefined) await rm(join(this.directory, previous), { recursive: true, force: true });
    return this.manifest;
  }

  /** A retriever over the store: BM25, vector search, or both fused. */
  retriever(mode: SearchMode, options: { fusion?: HybridFusionMethod } = {}): BaseRetriever {
    const keyword = this.keyword;
    const vector = new VectorRetriever({ store: this.vectors, embedder: this.embedder });
    if (mode === 'keyword') return keyword;
    if (mode === 'vector') return vector;
    return new HybridRetriever({ keyword, vector, fusion: options.fusion ?? 'weighted+rrf' });
  }

  /** Releases the lock (when writing) and closes the backend. */
  async close(): Promise<void> {
    if (this.lockHeld) {
      this.lockHeld = false;
      await releaseLock(this.directory);
    }
    await this.vectors.close?.();
  }

  private async removeOrphans(): Promise<void> {
    const entries = await readdir(this.directory).catch(() => [] as string[]);
    const keep = this.manifest.data ?? this.replaces;
    const orphans = entries.filter(
      (name) =>
        (DATA_PATTERN.test(name) && name !== keep) ||
        (name.startsWith(`${STORE_MANIFEST}.`) && name.endsWith('.tmp')),
    );
    for (const name of orphans) await rm(join(this.directory, name), { recursive: true, force: true });
  }
}

function storeName(directory: string): string {
  return basename(resolve(directory)).replace(/[^A-Za-z0-9_-]+/g, '-') || 'zerda';
}

function checkSameSettings(manifest: StoreManifest, settings: StoreSettings, directory: string): void {
  const differences: string[] = [];
  if (manifest.backend.name !== settings.backend)
    differences.push(`backend ${manifest.backend.name}, not ${settings.backend}`);
  if (manifest.analyzer.name !== settings.analyzer)
    differences.push(`analyzer ${manifest.analyzer.name}, not ${settings.analyzer}`);
  if (manifest.embedder.dimension !== settings.dimension)
    differences.push(`dimension ${manifest.embedder.dimension}, not ${settings.dimension}`);
  if (manifest.keyword.k1 !== settings.k1 || manifest.keyword.b !== settings.b)
    differences.push(
      `BM25 k1=${manifest.keyword.k1} b=${manifest.keyword.b}, not k1=${settings.k1} b=${settings.b}`,
    );
  if (differences.length > 0) {
    throw new StoreError(
      `the store at ${directory} was built with ${differences.join('; ')}: add to it with its own settings, or write a new store (--overwrite)`,
      directory,
    );
  }
}

/** A new store goes into a new or empty folder (or one holding only the debris of a store). */
async function checkNoOtherFiles(directory: string): Promise<void> {
  const entries = await readdir(directory).catch(() => [] as string[]);
  const others = entries.filter(
    (name) =>
      name !== LOCK_FILE &&
      name !== STORE_MANIFEST &&
      !DATA_PATTERN.test(name) &&
      !(name.startsWith(`${STORE_MANIFEST}.`) && name.endsWith('.tmp')),
  );
  if (others.length > 0) {
    throw new StoreError(
      `${directory} is not a zerda store and is not empty (it holds ${others.slice(0, 3).join(', ')}${others.length > 3 ? ', ...' : ''}); give --store a new or empty folder`,
      directory,
    );
  }
}

/** Takes the store's lock; a lock whose process is gone is taken over. */
async function takeLock(directory: string): Promise<void> {
  const path = join(directory, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(path, `${process.pid}\n`, { flag: 'wx' });
      return;
    } catch (error) {
      if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
    }
    const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      throw new StoreError(
        `another zerda process (pid ${pid}) is writing to the store at ${directory}; wait for it, or remove ${path} if it is gone`,
        directory,
      );
    }
    await rm(path, { force: true });
  }
  throw new StoreError(`cannot take the lock ${path}`, directory);
}

async function releaseLock(directory: string): Promise<void> {
  await rm(join(directory, LOCK_FILE), { force: true }).catch(() => undefined);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

/** Flushes every file and folder under `path` to disk. */
async function syncTree(path: string): Promise<void> {
  const entries = await readdir(path, { withFileTypes: true });
  for (const entry of entries) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await syncTree(child);
    else if (entry.isFile()) {
      const handle = await open(child, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
  }
  await syncDirectory(path);
}
