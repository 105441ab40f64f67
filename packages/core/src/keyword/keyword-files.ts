// Keyword retrievers and BM25 indexes in files (Node only: `@zerda/core/node`). The classes themselves
// serialise to bytes (`BM25Index.serialize`, `KeywordRetriever.fromParts`) and need no file system.
import { mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { IndexFormatError, throwIfAborted } from '../errors/index.js';
import { type Chunk, normalizeChunks } from '../model/index.js';
import type { Analyzer } from '../text/index.js';
import { replaceFileDurably } from '../util/durable-files.js';
import { type DataFileReference, readDataFile, writeManifestSaveFiles } from '../util/manifest-save.js';
import { BM25Index } from './bm25-index.js';
import { KeywordRetriever, type KeywordRetrieverOptions } from './keyword-retriever.js';

/*
 * A saved keyword retriever is a directory with three files:
 *
 * - `zerda-keyword.json`, the manifest: format name and version, analyser, chunk count, and the
 *   name, size and SHA-256 of the two data files;
 * - `keyword-index-<random>.bin`, the BM25 index (BM25Index.serialize);
 * - `keyword-chunks-<random>.jsonl`, the chunks, one JSON object a line, in index order.
 *
 * Saving writes both data files under new names and flushes them, flushes the folder, then renames
 * a flushed manifest over the old one (the commit, one atomic step) and removes the previous data
 * files (writeManifestSaveFiles). A reader finds the old save or the new one, whole, whenever the
 * process or the machine stops. Folders written by earlier versions (`keyword-index.bin` and
 * `chunks.jsonl`, no manifest) still load; the next save replaces them.
 */
const MANIFEST_FILE = 'zerda-keyword.json';
const FORMAT = 'zerda.keyword-retriever';
const FORMAT_VERSION = 1;
const INDEX_PREFIX = 'keyword-index';
const CHUNKS_PREFIX = 'keyword-chunks';
const LEGACY_INDEX_FILE = 'keyword-index.bin';
const LEGACY_CHUNKS_FILE = 'chunks.jsonl';

interface KeywordManifest {
  format: typeof FORMAT;
  version: typeof FORMAT_VERSION;
  analyzer: string;
  count: number;
  index: DataFileReference;
  chunks: DataFileReference;
}

export interface KeywordSaveOptions {
  signal?: AbortSignal;
}

/**
 * Saves the index and the chunks into a directory, crash-safe: new files, flushed, then one atomic
 * switch of the manifest. After a crash or power loss at any point, `load` finds the previous save
 * or this one, never a mix of the two or a half-written file.
 */
export async function saveKeywordRetriever(
  retriever: KeywordRetriever,
  directory: string,
  options: KeywordSaveOptions = {},
): Promise<void> {
  throwIfAborted(options.signal);
  const lines = [...retriever.chunks()].map((chunk) => JSON.stringify(chunk));
  const count = lines.length;
  const analyzer = retriever.index.analyzer.name;
  await writeManifestSaveFiles({
    directory,
    manifestFile: MANIFEST_FILE,
    files: [
      { prefix: INDEX_PREFIX, extension: '.bin', data: retriever.index.serialize() },
      { prefix: CHUNKS_PREFIX, extension: '.jsonl', data: lines.join('\n') },
    ],
    manifest: ([index, chunks]): KeywordManifest => ({
      format: FORMAT,
      version: FORMAT_VERSION,
      analyzer,
      count,
      index: index as DataFileReference,
      chunks: chunks as DataFileReference,
    }),
    dataFilesOf: (manifest) => {
      const value = manifest as { index?: { file?: unknown }; chunks?: { file?: unknown } } | null;
      return [value?.index?.file, value?.chunks?.file];
    },
    signal: options.signal,
  });
  // The files of the format before the manifest, now superseded (harmless if this is interrupted:
  // the manifest wins when both are present).
  for (const legacy of [LEGACY_INDEX_FILE, LEGACY_CHUNKS_FILE]) {
    await rm(join(directory, legacy), { force: true }).catch(() => undefined);
  }
}

/**
 * Loads a directory written by `save` (or by the versions before its manifest); the analyser must
 * match the one used to build it. Anything missing, corrupt or inconsistent is an IndexFormatError.
 */
export async function loadKeywordRetriever(
  directory: string,
  options: Omit<KeywordRetrieverOptions, 'k1' | 'b'> & { analyzer?: Analyzer } = {},
): Promise<KeywordRetriever> {
  const manifestPath = join(directory, MANIFEST_FILE);
  // A save running in another process may commit, and remove the data files just named, between
  // reading the manifest and reading those files: read again then (a few times at most).
  for (let attempt = 0; ; attempt++) {
    let manifestText: string;
    try {
      manifestText = await readFile(manifestPath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return loadLegacy(directory, options);
      throw new IndexFormatError({ message: 'Cannot read the manifest', path: manifestPath, cause: error });
    }
    const manifest = parseKeywordManifest(manifestText, manifestPath);
    let indexBytes: Uint8Array;
    let chunksBytes: Uint8Array;
    try {
      indexBytes = await readDataFile(directory, manifest.index, 'index file');
      chunksBytes = await readDataFile(directory, manifest.chunks, 'chunks file');
    } catch (error) {
      const now = await readFile(manifestPath, 'utf8').catch(() => undefined);
      if (attempt < 4 && now !== undefined && now !== manifestText) continue;
      throw error;
    }
    const indexPath = join(directory, manifest.index.file);
    const index = BM25Index.deserialize(indexBytes, { ...options, path: indexPath, adopt: true });
    const chunksPath = join(directory, manifest.chunks.file);
    const chunks = parseChunkLines(new TextDecoder().decode(chunksBytes), chunksPath);
    if (chunks.length !== manifest.count) {
      throw new IndexFormatError({
        message: `The chunks file holds ${chunks.length} chunks, the manifest says ${manifest.count}`,
        path: chunksPath,
      });
    }
    return KeywordRetriever.fromParts(index, chunks, options, chunksPath);
  }
}

/** A directory of the format before the manifest: `keyword-index.bin` and `chunks.jsonl`. */
async function loadLegacy(
  directory: string,
  options: Omit<KeywordRetrieverOptions, 'k1' | 'b'> & { analyzer?: Analyzer },
): Promise<KeywordRetriever> {
  const indexPath = join(directory, LEGACY_INDEX_FILE);
  let indexBytes: Uint8Array;
  try {
    indexBytes = await readFile(indexPath);
  } catch (error) {
    throw new IndexFormatError({
      message: `No saved keyword retriever could be read here (no ${MANIFEST_FILE})`,
      path: join(directory, MANIFEST_FILE),
      cause: error,
    });
  }
  const index = BM25Index.deserialize(indexBytes, { ...options, path: indexPath, adopt: true });
  const chunksPath = join(directory, LEGACY_CHUNKS_FILE);
  let text: string;
  try {
    text = await readFile(chunksPath, 'utf8');
  } catch (error) {
    throw new IndexFormatError({ message: 'Cannot read the chunks file', path: chunksPath, cause: error });
  }
  return KeywordRetriever.fromParts(index, parseChunkLines(text, chunksPath), options, chunksPath);
}

function parseChunkLines(text: string, path: string): Chunk[] {
  try {
    return normalizeChunks(text.length === 0 ? [] : text.split('\n').map((line) => JSON.parse(line)));
  } catch (error) {
    throw new IndexFormatError({ message: 'The chunks file is corrupt', path, cause: error });
  }
}

function parseKeywordManifest(text: string, path: string): KeywordManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new IndexFormatError({ message: 'The manifest is not valid JSON', path, cause: error });
  }
  const fail = (message: string): never => {
    throw new IndexFormatError({ message, path });
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return fail('The manifest is not an object');
  const manifest = value as Record<string, unknown>;
  if (manifest.format !== FORMAT)
    return fail(`Not a Zerda keyword retriever (format ${String(manifest.format)})`);
  if (manifest.version !== FORMAT_VERSION) {
    return fail(
      `Format version ${String(manifest.version)} is not supported (this version of Zerda reads ${FORMAT_VERSION})`,
    );
  }
  if (typeof manifest.count !== 'number' || !Number.isInteger(manifest.count) || manifest.count < 0) {
    return fail('The manifest has no valid chunk count');
  }
  for (const [key, prefix, extension] of [
    ['index', INDEX_PREFIX, '.bin'],
    ['chunks', CHUNKS_PREFIX, '.jsonl'],
  ] as const) {
    const reference = manifest[key] as Partial<DataFileReference> | undefined;
    const pattern = new RegExp(`^${prefix}-[0-9a-f]{16}\\${extension}$`);
    if (
      reference === null ||
      typeof reference !== 'object' ||
      typeof reference.file !== 'string' ||
      !pattern.test(reference.file) ||
      typeof reference.bytes !== 'number' ||
      typeof reference.sha256 !== 'string'
    ) {
      return fail(`The manifest does not name a valid ${key} file`);
    }
  }
  return manifest as unknown as KeywordManifest;
}

/**
 * Writes a BM25 index to a file, crash-safe: the bytes go to a temporary file beside it, flushed to
 * disk, which is renamed over the old file, and the folder is flushed. A reader finds the old file
 * or the new one, whole, whenever the process or the machine stops.
 */
export async function saveBM25Index(index: BM25Index, path: string): Promise<void> {
  const bytes = index.serialize();
  await mkdir(dirname(path), { recursive: true });
  await replaceFileDurably(path, bytes);
}

/** Reads an index written by `saveBM25Index`; the analyser must match the one it was built with. */
export async function loadBM25Index(path: string, options: { analyzer?: Analyzer } = {}): Promise<BM25Index> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new IndexFormatError({ message: 'Cannot read the index file', path, cause: error });
  }
  return BM25Index.deserialize(bytes, { ...options, path, adopt: true });
}
