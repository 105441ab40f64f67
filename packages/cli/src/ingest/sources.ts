import { createReadStream, type Stats } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import {
  beirDocumentText,
  ChunkValidationError,
  type Metadata,
  normalizeChunk,
  ZerdaError,
} from '@zerda/core';
import { findJsonSyntaxError } from '../json-position.js';

/** The file types `zerda index` reads, by extension. */
export const SUPPORTED_EXTENSIONS = ['.txt', '.md', '.markdown', '.jsonl', '.ndjson'] as const;

/** `-` as a path: JSON lines from standard input. */
export const STDIN_PATH = '-';

/** A document to index, before chunking. */
export interface SourceDocument {
  /** The document id: a file's path, a JSON line's `_id` or `id`. */
  id: string;
  text: string;
  /** Where it came from (a file path, or `-` for standard input). */
  source: string;
  title?: string;
  /** For a Zerda chunk line, its own `docId`. */
  docId?: string;
  /** A JSON line's own metadata. */
  metadata?: Metadata;
  /** Bytes of input this document accounts for (for progress). */
  bytes: number;
}

/** A file or line that could not be read; the run goes on without it. */
export interface SourceProblem {
  /** The file (as given or found). */
  path: string;
  /** The line, for a malformed JSON line. */
  line?: number;
  message: string;
}

/** A file to read. */
export interface SourceFile {
  path: string;
  /** How it is read. */
  kind: 'text' | 'markdown' | 'jsonl';
  /** Its size in bytes (0 when unknown, as for standard input). */
  bytes: number;
}

export interface SourceListing {
  files: SourceFile[];
  /** Paths that were given but cannot be read (missing, unreadable, of an unsupported type). */
  problems: SourceProblem[];
  /** Files inside folders that were passed over: other types, and queries.jsonl beside a corpus.jsonl. */
  ignored: number;
  totalBytes: number;
}

function kindOf(path: string): SourceFile['kind'] | undefined {
  const extension = extname(path).toLowerCase();
  if (extension === '.txt') return 'text';
  if (extension === '.md' || extension === '.markdown') return 'markdown';
  if (extension === '.jsonl' || extension === '.ndjson') return 'jsonl';
  return undefined;
}

function reason(error: unknown): string {
  const code = error instanceof Error && 'code' in error ? String(error.code) : undefined;
  if (code === 'ENOENT') return 'no such file or folder';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a folder';
  return error instanceof Error ? error.message : String(error);
}

/** A path as shown and stored: relative to the working directory when inside it, with `/`. */
export function displayPath(path: string, cwd = process.cwd()): string {
  if (path === STDIN_PATH) return path;
  const rel = isAbsolute(path) ? relative(cwd, path) : path;
  const shown = rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
  return shown.split(sep).join('/');
}

/**
 * The files to read under `paths`: files as given, folders walked recursively (in name order;
 * hidden entries and node_modules skipped; files of other types ignored). A folder holding a
 * `corpus.jsonl` (BEIR layout) gives that file only; folders in `exclude` (the store being
 * written) are not entered. A path given that is missing,
 * unreadable or of an unsupported type is a problem, not a failure.
 */
export async function listSources(
  paths: readonly string[],
  options: { exclude?: readonly string[] } = {},
): Promise<SourceListing> {
  const listing: SourceListing = { files: [], problems: [], ignored: 0, totalBytes: 0 };
  const excluded = new Set((options.exclude ?? []).map((path) => resolve(path)));
  const seen = new Set<string>();
  const add = (path: string, kind: SourceFile['kind'], stats: Stats | undefined) => {
    if (seen.has(path)) return;
    seen.add(path);
    const bytes = stats?.isFile() ? stats.size : 0;
    listing.files.push({ path, kind, bytes });
    listing.totalBytes += bytes;
  };
  const walk = async (folder: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (error) {
      listing.problems.push({
        path: displayPath(folder),
        message: `cannot list the folder: ${reason(error)}`,
      });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // A folder in BEIR layout gives its corpus only (not queries.jsonl, SOURCE.txt, README.md).
    const beir = entries.some((entry) => entry.name === 'corpus.jsonl' && !entry.isDirectory());
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!beir && !excluded.has(resolve(path))) await walk(path);
        continue;
      }
      const kind = kindOf(entry.name);
      if (kind === undefined || (beir && entry.name !== 'corpus.jsonl')) {
        listing.ignored++;
        continue;
      }
      let stats: Stats | undefined;
      try {
        stats = await stat(path);
      } catch (error) {
        listing.problems.push({ path: displayPath(path), message: reason(error) });
        continue;
      }
      add(path, kind, stats);
    }
  };
  for (const path of paths) {
    if (path === STDIN_PATH) {
      add(path, 'jsonl', undefined);
      continue;
    }
    let stats: Stats;
    try {
      stats = await stat(path);
    } catch (error) {
      listing.problems.push({ path: displayPath(path), message: reason(error) });
      continue;
    }
    if (stats.isDirectory()) {
      await walk(path);
      continue;
    }
    const kind = kindOf(path);
    if (kind === undefined) {
      listing.problems.push({
        path: displayPath(path),
        message: `unsupported file type '${extname(path) || basename(path)}' (zerda index reads ${SUPPORTED_EXTENSIONS.join(', ')})`,
      });
      continue;
    }
    add(path, kind, stats);
  }
  return listing;
}

/** Reads the documents of one file; problems go to `onProblem` and the reading goes on. */
export async function* readSourceFile(
  file: SourceFile,
  onProblem: (problem: SourceProblem) => void,
  options: { stdin?: Readable } = {},
): AsyncGenerator<SourceDocument> {
  const shown = displayPath(file.path);
  if (file.kind === 'jsonl') {
    yield* readJsonLines(file, shown, onProblem, options.stdin);
    return;
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file.path);
  } catch (error) {
    onProblem({ path: shown, message: `cannot be read: ${reason(error)}` });
    return;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    onProblem({ path: shown, message: 'is not UTF-8 text' });
    return;
  }
  text = text.replace(/^\uFEFF/u, '');
  let title: string | undefined;
  if (file.kind === 'markdown') {
    text = text.replace(/^---\r?\n[\s\S]*?\r?\n---[^\S\n]*(?:\r?\n|$)/u, '');
    title = /^#{1,6}[^\S\n]+(.+?)[^\S\n]*#*[^\S\n]*$/mu.exec(text)?.[1];
  }
  yield {
    id: shown,
    text,
    source: shown,
    ...(title === undefined ? {} : { title }),
    bytes: bytes.byteLength,
  };
}

async function* readJsonLines(
  file: SourceFile,
  shown: string,
  onProblem: (problem: SourceProblem) => void,
  stdin: Readable | undefined,
): AsyncGenerator<SourceDocument> {
  const stream: Readable = file.path === STDIN_PATH ? (stdin ?? process.stdin) : createReadStream(file.path);
  let failed: unknown;
  const onError = (error: unknown) => {
    failed = error;
  };
  stream.on('error', onError);
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  try {
    for await (const line of lines) {
      number++;
      const bytes = Buffer.byteLength(line) + 1;
      if (line.trim() === '') continue;
      const parsed = parseDocumentLine(line, shown);
      if ('problem' in parsed) {
        onProblem({ path: shown, line: number, message: parsed.problem });
        continue;
      }
      yield { ...parsed.document, bytes };
    }
  } catch (error) {
    failed = error;
  } finally {
    lines.close();
    if (file.path !== STDIN_PATH) stream.destroy();
  }
  if (failed !== undefined) {
    onProblem({
      path: shown,
      ...(number > 0 ? { line: number } : {}),
      message: `cannot be read: ${reason(failed)}`,
    });
  }
}

/**
 * One JSON line as a document: a BEIR corpus line (`_id`, `title`, `text`) or a Zerda chunk
 * (`id`, `text`, optional `docId` and `metadata`; `content` or `pageContent` as the text).
 */
export function parseDocumentLine(
  line: string,
  source: string,
): { document: Omit<SourceDocument, 'bytes'> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    const problem = findJsonSyntaxError(line);
    return {
      problem: `not valid JSON${problem ? ` at column ${problem.column}: ${problem.message}` : ` (${error instanceof Error ? error.message : String(error)})`}`,
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { problem: 'expected a JSON object with "_id" or "id" and "text"' };
  }
  const record = value as Record<string, unknown>;
  if ('_id' in record) {
    const id = record._id;
    if ((typeof id !== 'string' && typeof id !== 'number') || String(id).trim() === '') {
      return { problem: '"_id" must be a non-empty string or a number' };
    }
    if (typeof record.text !== 'string') return { problem: 'a BEIR line needs "text" as a string' };
    const title = typeof record.title === 'string' && record.title.trim() !== '' ? record.title : undefined;
    const metadata = cleanMetadata(record.metadata);
    if (typeof metadata === 'string') return { problem: metadata };
    return {
      document: {
        id: String(id),
        text: beirDocumentText({ title, text: record.text }),
        source,
        ...(title === undefined ? {} : { title }),
        ...(metadata === undefined ? {} : { metadata }),
      },
    };
  }
  try {
    const chunk = normalizeChunk(record);
    const title =
      typeof chunk.metadata?.title === 'string' && chunk.metadata.title.trim() !== ''
        ? chunk.metadata.title
        : undefined;
    return {
      document: {
        id: chunk.id,
        text: chunk.text,
        source,
        ...(title === undefined ? {} : { title }),
        ...(chunk.docId === undefined ? {} : { docId: chunk.docId }),
        ...(chunk.metadata === undefined ? {} : { metadata: chunk.metadata }),
      },
    };
  } catch (error) {
    if (ChunkValidationError.isInstance(error)) {
      return { problem: error.problems.map((p) => p.reason).join('; ') };
    }
    if (!ZerdaError.isInstance(error)) throw error;
    return { problem: error.message.replace(/\s+/gu, ' ') };
  }
}

/** A BEIR line's `metadata`: kept when its values are strings, numbers, booleans or string lists. */
function cleanMetadata(value: unknown): Metadata | undefined | string {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return '"metadata" must be an object';
  const metadata: Metadata = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' || typeof item === 'boolean') metadata[key] = item;
    else if (typeof item === 'number' && Number.isFinite(item)) metadata[key] = item;
    else if (Array.isArray(item) && item.every((element) => typeof element === 'string'))
      metadata[key] = item as string[];
    else if (item !== null) return `metadata "${key}" must be a string, number, boolean or list of strings`;
  }
  return Object.keys(metadata).length === 0 ? undefined : metadata;
}
