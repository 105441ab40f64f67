import type { Readable } from 'node:stream';
import { type Chunk, DEFAULT_B, DEFAULT_K1 } from '@zerda/core';
import type { AnalyzerName } from '../../analyzers.js';
import { chunkDocuments } from '../../ingest/chunk-documents.js';
import { checkChunking } from '../../ingest/chunker.js';
import {
  listSources,
  readSourceFile,
  type SourceDocument,
  type SourceFile,
  type SourceProblem,
} from '../../ingest/sources.js';
import { type BackendName, type BackendOptions, backendAdapter } from '../../store-folder/backends.js';
import {
  makeStoreConfig,
  type StoreConfig,
  StoreError,
  type StoreSettings,
} from '../../store-folder/store-config.js';
import {
  documentOf,
  openStoreForReading,
  openStoreForWriting,
  storeCounts,
} from '../../store-folder/store-folder.js';

/** Defaults of `zerda index`. */
export const INDEX_DEFAULTS = {
  backend: 'memory',
  embedder: 'hash',
  dimension: 256,
  analyzer: 'default',
  chunkSize: 200,
  overlap: 30,
  batchSize: 256,
  commitIntervalSeconds: 5,
} as const;

/** The embedders `zerda index --embedder` knows. */
export const knownEmbedders = ['hash'] as const;

export interface IndexOptions {
  /** Files and folders to read (`-` reads JSON lines from standard input). */
  paths: readonly string[];
  /** The store folder (created when missing; an existing store is added to). */
  store: string;
  backend?: BackendName;
  backendOptions?: BackendOptions;
  analyzer?: AnalyzerName;
  /** The hash embedder's dimension (default 256). */
  dimension?: number;
  k1?: number;
  b?: number;
  /** Most words per chunk (default 200). */
  chunkSize?: number;
  /** Words repeated from one chunk at the start of the next (default 30). */
  overlap?: number;
  /** Documents per batch: the unit added to the collection, durable once added (default 256). */
  batchSize?: number;
  /**
   * Least time between two snapshots of the collection, in milliseconds (default 5000; 0: after
   * every batch). Each batch is durable when added, snapshot or not; a snapshot makes the next
   * open faster (it replays a shorter log). The last one is taken when the run ends.
   */
  commitIntervalMs?: number;
  /** Start a new store in place of an existing one (its files are removed first). */
  overwrite?: boolean;
  /** Aborting stops the run after the batch in flight: whole batches are stored, the rest dropped. */
  signal?: AbortSignal;
  /** Standard input, for the path `-` (default process.stdin). */
  stdin?: Readable;
  /** Progress, problems and commits, as they happen. */
  onEvent?: (event: IndexEvent) => void;
}

export type IndexEvent =
  | {
      type: 'start';
      files: number;
      totalBytes: number;
      store: StoreConfig;
      /** What the store held before this run. */
      existing: { documents: number; chunks: number };
    }
  | {
      type: 'progress';
      documents: number;
      chunks: number;
      bytes: number;
      totalBytes: number;
      elapsedMs: number;
    }
  | { type: 'problem'; problem: SourceProblem }
  | {
      /** A batch was added to the collection: it is durable from here on. */
      type: 'commit';
      batches: number;
      documents: number;
      chunks: number;
      store: { documents: number; chunks: number };
      ms: number;
    };

/** What an index run did. */
export interface IndexSummary {
  store: string;
  backend: BackendName;
  /** Files read (or attempted). */
  files: number;
  /** Files inside the folders given that were passed over (other types; a BEIR folder's files but its corpus). */
  ignoredFiles: number;
  /** Documents and chunks written by this run (durable). */
  documents: number;
  chunks: number;
  /** Documents with no words (not stored). */
  emptyDocuments: number;
  /** Documents whose id came again later in the same batch (the later one is kept). */
  duplicateDocuments: number;
  /** Files that could not be read, and lines that could not be used. */
  problems: SourceProblem[];
  batches: number;
  /** Snapshots of the collection taken by this run. */
  commits: number;
  /** The run stopped early (Ctrl-C): only whole batches were stored. */
  interrupted: boolean;
  /** What the store holds after the run. */
  totals: { documents: number; chunks: number };
  settings: StoreConfig;
  elapsedMs: number;
}

/**
 * Which chunks belong to which document, kept beside the collection so that a re-indexed
 * document's stale chunks are found and the documents counted without reading the collection.
 */
class DocumentIndex {
  readonly #documentOf = new Map<string, string>();
  readonly #chunksOf = new Map<string, number>();

  get documents(): number {
    return this.#chunksOf.size;
  }

  get chunks(): number {
    return this.#documentOf.size;
  }

  has(id: string): boolean {
    return this.#documentOf.has(id);
  }

  add(chunk: Chunk): void {
    this.remove(chunk.id);
    const document = documentOf(chunk);
    this.#documentOf.set(chunk.id, document);
    this.#chunksOf.set(document, (this.#chunksOf.get(document) ?? 0) + 1);
  }

  remove(id: string): void {
    const document = this.#documentOf.get(id);
    if (document === undefined) return;
    this.#documentOf.delete(id);
    const left = (this.#chunksOf.get(document) ?? 1) - 1;
    if (left > 0) this.#chunksOf.set(document, left);
    else this.#chunksOf.delete(document);
  }

  /** The ids an earlier version of a document left: `<id>` and `<id>#1`, `<id>#2`, ... */
  idsOf(documentId: string): string[] {
    const ids: string[] = [];
    if (this.has(documentId)) ids.push(documentId);
    for (let n = 1; this.has(`${documentId}#${n}`); n++) ids.push(`${documentId}#${n}`);
    return ids;
  }
}

/**
 * Reads documents from files and folders, splits them into chunks, and adds them to the store
 * folder's collection in batches of documents (the collection embeds them). Each batch is durable
 * once added: a run stopped by Ctrl-C, a crash or a kill leaves whole batches.
 */
export async function runIndex(options: IndexOptions): Promise<IndexSummary> {
  const started = performance.now();
  const chunking = checkChunking({
    size: options.chunkSize ?? INDEX_DEFAULTS.chunkSize,
    overlap: options.overlap ?? INDEX_DEFAULTS.overlap,
  });
  const batchSize = options.batchSize ?? INDEX_DEFAULTS.batchSize;
  const commitIntervalMs = options.commitIntervalMs ?? INDEX_DEFAULTS.commitIntervalSeconds * 1000;
  const emit = options.onEvent ?? (() => undefined);
  const backend = options.backend ?? INDEX_DEFAULTS.backend;
  backendAdapter(backend);

  const listing = await listSources(options.paths, { exclude: [options.store] });
  const problems: SourceProblem[] = [];
  const onProblem = (problem: SourceProblem) => {
    problems.push(problem);
    emit({ type: 'problem', problem });
  };
  for (const problem of listing.problems) onProblem(problem);

  const settings: StoreSettings = {
    backend,
    backendOptions: options.backendOptions ?? {},
    analyzer: options.analyzer ?? INDEX_DEFAULTS.analyzer,
    dimension: options.dimension ?? INDEX_DEFAULTS.dimension,
    k1: options.k1 ?? DEFAULT_K1,
    b: options.b ?? DEFAULT_B,
    chunking,
  };
  const summary = (totals: IndexSummary['totals'], config: StoreConfig) => ({
    store: options.store,
    backend,
    files: listing.files.length,
    ignoredFiles: listing.ignored,
    documents: counters.documents,
    chunks: counters.chunks,
    emptyDocuments: counters.empty,
    duplicateDocuments: counters.duplicates,
    problems,
    batches,
    commits,
    interrupted: !finished,
    totals,
    settings: config,
    elapsedMs: performance.now() - started,
  });
  let finished = false;
  let batches = 0;
  let commits = 0;
  /** Written since the last snapshot this run took. */
  let unsaved = false;
  const counters = { read: 0, documents: 0, chunks: 0, empty: 0, duplicates: 0, bytes: 0 };
  if (listing.files.length === 0) {
    // Nothing to read: no store is created (an existing one is only counted).
    finished = true;
    return summary(...(await existingTotals(options.store, settings)));
  }

  const store = await openStoreForWriting(options.store, settings, { overwrite: options.overwrite });
  const { collection } = store;
  const held = new DocumentIndex();
  const iterator = readAll(listing.files, onProblem, options.stdin)[Symbol.asyncIterator]();
  try {
    for await (const page of collection.list({ pageSize: 10_000 })) for (const chunk of page) held.add(chunk);
    emit({
      type: 'start',
      files: listing.files.length,
      totalBytes: listing.totalBytes,
      store: store.config,
      existing: { documents: held.documents, chunks: held.chunks },
    });

    let lastCheckpointEnd = performance.now();
    let lastCheckpointMs = 0;
    const progress = () =>
      emit({
        type: 'progress',
        documents: counters.read,
        chunks: counters.chunks,
        bytes: counters.bytes,
        totalBytes: listing.totalBytes,
        elapsedMs: performance.now() - started,
      });

    /** Adds a batch, then drops the chunks earlier versions of its documents had and this one has not. */
    const apply = async (documents: SourceDocument[]) => {
      const batchStarted = performance.now();
      const { chunks, documentIds, empty, duplicates } = chunkDocuments(documents, chunking);
      counters.empty += empty;
      counters.duplicates += duplicates;
      if (chunks.length > 0) {
        const fresh = new Set(chunks.map((chunk) => chunk.id));
        const stale = documentIds.flatMap((id) => held.idsOf(id).filter((chunkId) => !fresh.has(chunkId)));
        // Added first: a crash in between leaves stale chunks to drop on the next run, never a gap.
        await collection.add(chunks);
        unsaved = true;
        for (const chunk of chunks) held.add(chunk);
        if (stale.length > 0) {
          await collection.delete(stale);
          for (const id of stale) held.remove(id);
        }
      }
      batches++;
      counters.documents += documentIds.length;
      counters.chunks += chunks.length;
      emit({
        type: 'commit',
        batches,
        documents: counters.documents,
        chunks: counters.chunks,
        store: { documents: held.documents, chunks: held.chunks },
        ms: performance.now() - batchStarted,
      });
      const due = performance.now() - lastCheckpointEnd >= Math.max(commitIntervalMs, 2 * lastCheckpointMs);
      if (due) {
        const checkpointStarted = performance.now();
        await collection.checkpoint();
        unsaved = false;
        lastCheckpointEnd = performance.now();
        lastCheckpointMs = lastCheckpointEnd - checkpointStarted;
        commits++;
      }
    };

    const stop = Symbol('stop');
    const interrupted = new Promise<typeof stop>((resolve) => {
      if (options.signal?.aborted) resolve(stop);
      options.signal?.addEventListener('abort', () => resolve(stop), { once: true });
    });
    const pending: SourceDocument[] = [];
    let lastProgress = 0;
    while (!options.signal?.aborted) {
      const next = await Promise.race([iterator.next(), interrupted]);
      if (next === stop) break;
      if (next.done) {
        finished = true;
        break;
      }
      counters.read++;
      counters.bytes += next.value.bytes;
      pending.push(next.value);
      if (performance.now() - lastProgress > 100) {
        lastProgress = performance.now();
        progress();
      }
      if (pending.length >= batchSize) {
        // The batch is added whole even when Ctrl-C comes meanwhile: the loop stops after it.
        await apply(pending.splice(0));
        progress();
      }
    }
    // A last, partial batch is stored only when the input was read to its end.
    if (finished && pending.length > 0) await apply(pending.splice(0));
    progress();
  } finally {
    // An interrupted read (standard input, a slow file) may never settle: do not wait for it.
    if (!finished) void iterator.return?.(undefined).catch(() => undefined);
    // The run ends with a snapshot, so that a reader while another process writes (which reads the
    // snapshot alone) finds all of it; closing alone would leave a short log for the next open.
    try {
      if (unsaved) {
        await collection.checkpoint();
        commits++;
      }
    } finally {
      await store.close();
    }
  }
  return summary({ documents: held.documents, chunks: held.chunks }, store.config);
}

/** What the store at `directory` holds and its config; nothing and the config of `settings` where there is none. */
async function existingTotals(
  directory: string,
  settings: StoreSettings,
): Promise<[IndexSummary['totals'], StoreConfig]> {
  try {
    const store = await openStoreForReading(directory);
    try {
      return [await storeCounts(store.collection), store.config];
    } finally {
      await store.close();
    }
  } catch (error) {
    if (error instanceof StoreError && error.missing)
      return [{ documents: 0, chunks: 0 }, makeStoreConfig(settings)];
    throw error;
  }
}

async function* readAll(
  files: readonly SourceFile[],
  onProblem: (problem: SourceProblem) => void,
  stdin: Readable | undefined,
): AsyncGenerator<SourceDocument> {
  for (const file of files) yield* readSourceFile(file, onProblem, { stdin });
}
