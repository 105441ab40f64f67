import type { Readable } from 'node:stream';
import { type Chunk, DEFAULT_B, DEFAULT_K1, type Metadata } from '@zerda/core';
import { type AnalyzerName, isAnalyzerName, namedAnalyzers } from '../analyzers.js';
import { parseCommandArgs, readNumber } from '../args.js';
import { checkChunking, splitIntoChunks } from '../ingest/chunker.js';
import {
  listSources,
  readSourceFile,
  type SourceDocument,
  type SourceFile,
  type SourceProblem,
} from '../ingest/sources.js';
import { type CliIo, ExitCode, UsageError } from '../io.js';
import { formatCount, formatDuration, ProgressBar } from '../progress.js';
import {
  type BackendName,
  type BackendOptions,
  backendAdapter,
  knownBackends,
  readBackendOptions,
} from '../store/backends.js';
import { type StoreManifest, ZerdaStore } from '../store/store.js';

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
  /** The store directory (created when missing; an existing store is added to). */
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
  /** Documents per batch: the unit written to the store (default 256). */
  batchSize?: number;
  /**
   * Least time between two commits, in milliseconds (default 5000; 0 commits every batch). The
   * first batch of a run, the last, and the batches read before an interrupt are always committed.
   */
  commitIntervalMs?: number;
  /** Start a new store in place of an existing one (replaced at the first commit). */
  overwrite?: boolean;
  /** Aborting stops the run at the next batch boundary: whole batches are committed, the rest dropped. */
  signal?: AbortSignal;
  /** Standard input, for the path `-` (default process.stdin). */
  stdin?: Readable;
  /** Progress, problems and commits, as they happen. */
  onEvent?: (event: IndexEvent) => void;
}

export type IndexEvent =
  | { type: 'start'; files: number; totalBytes: number; store: StoreManifest }
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
      type: 'commit';
      batches: number;
      documents: number;
      chunks: number;
      store: StoreManifest['counts'];
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
  /** Documents and chunks written by this run (committed). */
  documents: number;
  chunks: number;
  /** Documents with no words (not stored). */
  emptyDocuments: number;
  /** Documents whose id came again later in the same batch (the later one is kept). */
  duplicateDocuments: number;
  /** Files that could not be read, and lines that could not be used. */
  problems: SourceProblem[];
  batches: number;
  commits: number;
  /** The run stopped early (Ctrl-C): only whole batches were stored. */
  interrupted: boolean;
  /** What the store holds after the run. */
  totals: { documents: number; chunks: number };
  settings: StoreManifest;
  elapsedMs: number;
}

/**
 * Reads documents from files and folders, splits them into chunks, embeds them, and writes them
 * to a store in batches of documents. After a batch is added it may be committed (see
 * `commitIntervalMs`); each commit is atomic, so the store on disk always holds whole batches.
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

  const store = await ZerdaStore.openForWriting(
    options.store,
    {
      backend,
      backendOptions: options.backendOptions ?? {},
      analyzer: options.analyzer ?? INDEX_DEFAULTS.analyzer,
      dimension: options.dimension ?? INDEX_DEFAULTS.dimension,
      k1: options.k1 ?? DEFAULT_K1,
      b: options.b ?? DEFAULT_B,
      chunking,
    },
    { overwrite: options.overwrite },
  );
  emit({ type: 'start', files: listing.files.length, totalBytes: listing.totalBytes, store: store.manifest });

  const counters = { read: 0, documents: 0, chunks: 0, empty: 0, duplicates: 0, bytes: 0 };
  // Applied to the store (in memory) but not yet committed.
  const applied = { batches: 0, documents: 0, chunks: 0 };
  let batches = 0;
  let commits = 0;
  let lastCommitEnd = performance.now();
  let lastCommitMs = 0;
  let finished = false;

  const progress = () =>
    emit({
      type: 'progress',
      documents: counters.read,
      chunks: counters.chunks + applied.chunks,
      bytes: counters.bytes,
      totalBytes: listing.totalBytes,
      elapsedMs: performance.now() - started,
    });

  const commit = async () => {
    const commitStarted = performance.now();
    const manifest = await store.commit();
    lastCommitEnd = performance.now();
    lastCommitMs = lastCommitEnd - commitStarted;
    commits++;
    counters.documents += applied.documents;
    counters.chunks += applied.chunks;
    applied.batches = 0;
    applied.documents = 0;
    applied.chunks = 0;
    emit({
      type: 'commit',
      batches,
      documents: counters.documents,
      chunks: counters.chunks,
      store: manifest.counts,
      ms: lastCommitMs,
    });
  };

  const apply = async (documents: SourceDocument[]) => {
    const { chunks, documentIds, empty, duplicates } = chunkDocuments(documents, chunking);
    counters.empty += empty;
    counters.duplicates += duplicates;
    if (chunks.length > 0) {
      const embeddings = await store.embedder.embed(chunks.map((chunk) => chunk.text));
      await store.addChunks(chunks, embeddings, documentIds);
    }
    batches++;
    applied.batches++;
    applied.documents += documentIds.length;
    applied.chunks += chunks.length;
  };

  const stop = Symbol('stop');
  const interrupted = new Promise<typeof stop>((resolve) => {
    if (options.signal?.aborted) resolve(stop);
    options.signal?.addEventListener('abort', () => resolve(stop), { once: true });
  });
  const iterator = readAll(listing.files, onProblem, options.stdin)[Symbol.asyncIterator]();
  try {
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
        await apply(pending.splice(0));
        progress();
        const due = performance.now() - lastCommitEnd >= Math.max(commitIntervalMs, 2 * lastCommitMs);
        if (commits === 0 || due) await commit();
      }
    }
    // A last, partial batch is stored only when the input was read to its end.
    if (finished && pending.length > 0) await apply(pending.splice(0));
    if (applied.batches > 0) await commit();
  } finally {
    // An interrupted read (standard input, a slow file) may never settle: do not wait for it.
    if (!finished) void iterator.return?.(undefined).catch(() => undefined);
    await store.close();
  }
  progress();
  return {
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
    totals: store.manifest.counts,
    settings: store.manifest,
    elapsedMs: performance.now() - started,
  };
}

async function* readAll(
  files: readonly SourceFile[],
  onProblem: (problem: SourceProblem) => void,
  stdin: Readable | undefined,
): AsyncGenerator<SourceDocument> {
  for (const file of files) yield* readSourceFile(file, onProblem, { stdin });
}

/**
 * A batch of documents as chunks. A document of one chunk keeps its id; a longer one becomes
 * `<id>#1`, `<id>#2`, ... Each chunk's `docId` is the document's (or a Zerda chunk line's own
 * `docId`); its metadata holds `source`, `title` when known, and for a split document `chunk`
 * and `chunks`, then the document's own metadata (which wins on a shared key).
 */
export function chunkDocuments(
  documents: readonly SourceDocument[],
  chunking: { size: number; overlap: number },
): { chunks: Chunk[]; documentIds: string[]; empty: number; duplicates: number } {
  const byId = new Map<string, SourceDocument>();
  let duplicates = 0;
  for (const document of documents) {
    if (byId.has(document.id)) {
      duplicates++;
      byId.delete(document.id);
    }
    byId.set(document.id, document);
  }
  const chunksById = new Map<string, Chunk>();
  const documentIds: string[] = [];
  let empty = 0;
  for (const document of byId.values()) {
    const pieces = splitIntoChunks(document.text, chunking);
    if (pieces.length === 0) {
      empty++;
      continue;
    }
    documentIds.push(document.id);
    pieces.forEach((piece, index) => {
      const id = pieces.length === 1 ? document.id : `${document.id}#${index + 1}`;
      const metadata: Metadata = {
        source: document.source,
        ...(document.title === undefined ? {} : { title: document.title }),
        ...(pieces.length === 1 ? {} : { chunk: index + 1, chunks: pieces.length }),
        ...document.metadata,
      };
      chunksById.delete(id);
      chunksById.set(id, { id, text: piece.text, docId: document.docId ?? document.id, metadata });
    });
  }
  return { chunks: [...chunksById.values()], documentIds, empty, duplicates };
}

/** The summary of a run, as text. */
export function formatIndexSummary(summary: IndexSummary): string {
  const seconds = summary.elapsedMs / 1000;
  const rate = seconds > 0 ? summary.chunks / seconds : 0;
  const settings = summary.settings;
  const lines: string[] = [];
  if (summary.interrupted) {
    lines.push(
      `Interrupted: ${formatCount(summary.documents)} documents (${formatCount(summary.chunks)} chunks) of this run were stored, in whole batches; documents read after the last whole batch were not.`,
      'Run the same command again to add the rest: documents already stored are replaced, not duplicated.',
    );
  } else {
    lines.push(
      `Indexed ${formatCount(summary.documents)} documents (${formatCount(summary.chunks)} chunks) from ${formatCount(summary.files)} file${summary.files === 1 ? '' : 's'} in ${seconds.toFixed(1)} s (${formatCount(rate)} chunks/s).`,
    );
  }
  lines.push(
    `The store ${summary.store} holds ${formatCount(summary.totals.documents)} documents, ${formatCount(summary.totals.chunks)} chunks: backend ${settings.backend.name}, hash embedder (${settings.embedder.dimension} dimensions), analyzer ${settings.analyzer.name}, BM25 k1=${settings.keyword.k1} b=${settings.keyword.b}, chunks of at most ${settings.chunking.size} words with ${settings.chunking.overlap} words of overlap.`,
  );
  const notes: string[] = [];
  if (summary.emptyDocuments > 0)
    notes.push(`${formatCount(summary.emptyDocuments)} empty documents skipped`);
  if (summary.duplicateDocuments > 0)
    notes.push(
      `${formatCount(summary.duplicateDocuments)} documents repeated an id in the same batch (the later kept)`,
    );
  if (summary.ignoredFiles > 0)
    notes.push(`${formatCount(summary.ignoredFiles)} files of other types in the folders ignored`);
  if (notes.length > 0) lines.push(`Note: ${notes.join('; ')}.`);
  if (summary.problems.length > 0) {
    const files = summary.problems.filter((p) => p.line === undefined).length;
    const lineProblems = summary.problems.length - files;
    lines.push(
      `${summary.problems.length} problem${summary.problems.length === 1 ? '' : 's'} (${files} file${files === 1 ? '' : 's'} not read, ${lineProblems} line${lineProblems === 1 ? '' : 's'} skipped):`,
    );
    for (const problem of summary.problems.slice(0, 20)) lines.push(`  ${describeProblem(problem)}`);
    if (summary.problems.length > 20) lines.push(`  and ${summary.problems.length - 20} more`);
  }
  if (summary.totals.chunks > 0) lines.push(`Search it: zerda search "<query>" --store ${summary.store}`);
  return `${lines.join('\n')}\n`;
}

export function describeProblem(problem: SourceProblem): string {
  return `${problem.path}${problem.line === undefined ? '' : ` line ${problem.line}`}: ${problem.message}`;
}

export const indexHelp = `Usage: zerda index <files or folders...> --store <dir> [options]

Reads documents, splits them into chunks, and stores the chunks, their vectors and a BM25
index in a store directory that 'zerda search' opens. An existing store is added to: a
document indexed again replaces its earlier chunks.

Inputs (folders are read recursively; hidden entries and node_modules are skipped):
  .txt, .md      one document per file; its id is the path; a Markdown file's first heading
                 is its title (YAML front matter is dropped)
  .jsonl         one document per line: a BEIR corpus line {"_id", "title", "text"} or a Zerda
                 chunk {"id", "text", "docId"?, "metadata"?}; a folder in BEIR layout (with a
                 corpus.jsonl) gives its corpus.jsonl only
  -              JSON lines from standard input

Chunks: at most --chunk-size words (runs of non-space characters), cut at the strongest
boundary in a chunk's second half (a paragraph break, then a sentence end, then a line break);
the next chunk repeats the last --overlap words, starting on a sentence where it can. A
document of one chunk keeps its id; a longer one gives <id>#1, <id>#2, ...

Options:
  --store <dir>            the store directory (required)
  --backend <name>         ${knownBackends.join(' | ')} (default ${INDEX_DEFAULTS.backend}); chroma, faiss and
                           pinecone need their package (@zerda/<name>) installed
  --backend-option <k=v>   a backend setting, repeatable: chroma url, collection, tenant, database;
                           pinecone index, host, namespace; faiss indexType (keys come from the
                           environment: CHROMA_API_KEY, PINECONE_API_KEY)
  --embedder <name>        ${knownEmbedders.join(' | ')} (default ${INDEX_DEFAULTS.embedder}: Zerda's HashEmbedder, no model, no network)
  --dimension <n>          the hash embedder's dimension (default ${INDEX_DEFAULTS.dimension})
  --analyzer <name>        ${Object.keys(namedAnalyzers).join(' | ')} (default ${INDEX_DEFAULTS.analyzer}); BM25's and the embedder's
  --k1 <n>, --b <n>        BM25 parameters (default ${DEFAULT_K1} and ${DEFAULT_B})
  --chunk-size <words>     most words per chunk (default ${INDEX_DEFAULTS.chunkSize})
  --overlap <words>        words repeated between consecutive chunks, at most half the chunk
                           size (default ${INDEX_DEFAULTS.overlap})
  --batch-size <n>         documents per batch, the unit written to the store (default ${INDEX_DEFAULTS.batchSize})
  --commit-interval <s>    least seconds between two commits (default ${INDEX_DEFAULTS.commitIntervalSeconds}; 0: every batch)
  --overwrite              start a new store in place of the existing one
  --json                   print the summary as JSON
  -h, --help               show this help

Progress goes to standard error: a bar (documents, chunks per second, time left) on a
terminal, plain lines otherwise. Ctrl-C (or SIGTERM) stops at the end of the current batch and
commits the whole batches read so far; a second Ctrl-C stops at once. Either way the store on disk holds
whole batches only: each commit writes a new data folder and then renames the manifest.
With chroma or pinecone the vectors are written to the service as each batch is added.

Exit codes: 0 success; 1 the run failed (the store cannot be written, no input could be read);
2 the command was called wrongly; 3 indexed, but some files or lines could not be read (each is
named); 130 interrupted (the store keeps whole batches).

Examples:
  pnpm zerda index ../shared/data/cranfield/corpus.jsonl --store /tmp/cranfield
  pnpm zerda index docs README.md --store .zerda --chunk-size 120 --overlap 20
  cat chunks.jsonl | pnpm zerda index - --store .zerda
`;

/** `zerda index` from command-line arguments; returns the exit code. */
export async function indexCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      store: { type: 'string' },
      backend: { type: 'string' },
      'backend-option': { type: 'string', multiple: true },
      embedder: { type: 'string' },
      dimension: { type: 'string' },
      analyzer: { type: 'string' },
      k1: { type: 'string' },
      b: { type: 'string' },
      'chunk-size': { type: 'string' },
      overlap: { type: 'string' },
      'batch-size': { type: 'string' },
      'commit-interval': { type: 'string' },
      overwrite: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    indexHelp,
  );
  if (values.help) {
    io.stdout(indexHelp);
    return ExitCode.ok;
  }
  if (positionals.length === 0) throw new UsageError('no files or folders to index', indexHelp);
  if (values.store === undefined || values.store.trim() === '')
    throw new UsageError('--store <dir> is required', indexHelp);
  const backend = values.backend ?? INDEX_DEFAULTS.backend;
  if (!knownBackends.includes(backend as BackendName)) {
    throw new UsageError(
      `unknown backend '${backend}': expected one of ${knownBackends.join(', ')}`,
      indexHelp,
    );
  }
  const embedder = values.embedder ?? INDEX_DEFAULTS.embedder;
  if (!knownEmbedders.includes(embedder as 'hash')) {
    throw new UsageError(`unknown embedder '${embedder}': expected ${knownEmbedders.join(', ')}`, indexHelp);
  }
  const analyzer = values.analyzer ?? INDEX_DEFAULTS.analyzer;
  if (!isAnalyzerName(analyzer)) {
    throw new UsageError(
      `unknown analyzer '${analyzer}': expected ${Object.keys(namedAnalyzers).join(' or ')}`,
      indexHelp,
    );
  }
  let backendOptions: BackendOptions;
  try {
    backendOptions = readBackendOptions(backend as BackendName, values['backend-option'] ?? []);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), indexHelp);
  }
  const chunkSize = readNumber(values['chunk-size'], 'chunk-size', indexHelp, { min: 1, integer: true });
  const overlap = readNumber(values.overlap, 'overlap', indexHelp, { min: 0, integer: true });
  const size = chunkSize ?? INDEX_DEFAULTS.chunkSize;
  const overlapWords = overlap ?? Math.min(INDEX_DEFAULTS.overlap, Math.floor(size / 2));
  if (overlapWords > size / 2) {
    throw new UsageError(
      `--overlap must be at most half the chunk size (${Math.floor(size / 2)}), got ${overlapWords}`,
      indexHelp,
    );
  }
  const commitInterval = readNumber(values['commit-interval'], 'commit-interval', indexHelp, { min: 0 });

  const bar = new ProgressBar(io);
  const controller = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts++;
    if (interrupts === 1) {
      bar.log(
        'interrupted: committing the whole batches read so far (press Ctrl-C again to stop at once; the store keeps its last commit)',
      );
      controller.abort();
      return;
    }
    bar.clear();
    io.stderr('stopped at once: the store keeps its last commit\n');
    process.exit(ExitCode.interrupted);
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  let summary: IndexSummary;
  try {
    summary = await runIndex({
      paths: positionals,
      store: values.store,
      backend: backend as BackendName,
      backendOptions,
      analyzer,
      dimension: readNumber(values.dimension, 'dimension', indexHelp, { min: 1, max: 65_536, integer: true }),
      k1: readNumber(values.k1, 'k1', indexHelp, { min: 0 }),
      b: readNumber(values.b, 'b', indexHelp, { min: 0, max: 1 }),
      chunkSize: size,
      overlap: overlapWords,
      batchSize: readNumber(values['batch-size'], 'batch-size', indexHelp, { min: 1, integer: true }),
      commitIntervalMs: commitInterval === undefined ? undefined : commitInterval * 1000,
      overwrite: values.overwrite,
      signal: controller.signal,
      onEvent: progressReporter(io, bar),
    });
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
    bar.clear();
  }
  io.stdout(values.json ? `${JSON.stringify(summary, null, 2)}\n` : formatIndexSummary(summary));
  if (summary.interrupted) return ExitCode.interrupted;
  if (summary.documents === 0 && summary.problems.length > 0) return ExitCode.failure;
  return summary.problems.length > 0 ? ExitCode.partial : ExitCode.ok;
}

/**
 * Progress on standard error: on a terminal, a bar with documents, chunks per second and the time
 * left (from the bytes read of the total); otherwise a line per commit. Problems are named as
 * they happen, either way.
 */
function progressReporter(io: CliIo, bar: ProgressBar): (event: IndexEvent) => void {
  let started = performance.now();
  let totalBytes = 0;
  let last: Extract<IndexEvent, { type: 'progress' }> | undefined;
  const rate = (chunks: number, ms: number) => (ms > 0 ? (chunks * 1000) / ms : 0);
  const eta = (bytes: number, elapsedMs: number) =>
    totalBytes > 0 && bytes > 0 ? ((elapsedMs / 1000) * (totalBytes - bytes)) / bytes : undefined;
  return (event) => {
    switch (event.type) {
      case 'start': {
        started = performance.now();
        totalBytes = event.totalBytes;
        const existing = event.store.counts;
        const line = `indexing ${event.files} file${event.files === 1 ? '' : 's'}${totalBytes > 0 ? ` (${formatBytes(totalBytes)})` : ''} into ${event.store.backend.name} store${existing.chunks > 0 ? ` holding ${formatCount(existing.documents)} documents` : ''}`;
        bar.log(line);
        return;
      }
      case 'problem':
        bar.log(`warning: ${describeProblem(event.problem)} (skipped)`);
        return;
      case 'progress': {
        last = event;
        const left = eta(event.bytes, event.elapsedMs);
        bar.update(
          'indexing',
          totalBytes > 0 ? event.bytes / totalBytes : undefined,
          `${formatCount(event.documents)} docs  ${formatCount(event.chunks)} chunks  ${formatCount(rate(event.chunks, event.elapsedMs))} chunks/s${left === undefined ? '' : `  ETA ${formatDuration(left)}`}`,
        );
        return;
      }
      case 'commit': {
        if (bar.enabled) return;
        const elapsed = performance.now() - started;
        const left = last ? eta(last.bytes, last.elapsedMs) : undefined;
        const percent = totalBytes > 0 && last ? ` ${Math.floor((100 * last.bytes) / totalBytes)}%,` : '';
        io.stderr(
          `committed batch ${event.batches}: ${formatCount(event.documents)} documents, ${formatCount(event.chunks)} chunks stored by this run (store: ${formatCount(event.store.documents)} documents);${percent} ${formatCount(rate(event.chunks, elapsed))} chunks/s${left === undefined ? '' : `, about ${formatDuration(left)} left`}\n`,
        );
        return;
      }
    }
  };
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}
