import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { IndexFormatError, throwIfAborted } from '../errors/index.js';
import { sha256Hex, syncDirectory, writeFileDurably } from './durable-files.js';

/** How a manifest names its data file: the name, and the size and hash the file must have. */
export interface DataFileReference {
  file: string;
  bytes: number;
  sha256: string;
}

export interface ManifestSaveOptions {
  directory: string;
  /** The manifest's file name; renaming it into place is the commit. */
  manifestFile: string;
  /** Data files are named `${dataPrefix}-${16 hex digits}${dataExtension}`, new for every save. */
  dataPrefix: string;
  dataExtension: string;
  data: Uint8Array;
  /** The manifest to write, given the new data file's reference. */
  manifest: (data: DataFileReference) => unknown;
  /** Where a manifest names its data file (to remove the previous save's once this one is committed). */
  dataFileOf: (manifest: unknown) => unknown;
  signal?: AbortSignal;
}

/** One data file of a multi-file save. */
export interface DataFileContent {
  /** The file is named `${prefix}-${16 hex digits}${extension}`, new for every save. */
  prefix: string;
  extension: string;
  data: Uint8Array | string;
}

export interface ManifestFilesSaveOptions {
  directory: string;
  /** The manifest's file name; renaming it into place is the commit. */
  manifestFile: string;
  files: readonly DataFileContent[];
  /** The manifest to write, given the new data files' references (in the order of `files`). */
  manifest: (files: DataFileReference[]) => unknown;
  /** Where a manifest names its data files (to remove the previous save's once this one is committed). */
  dataFilesOf: (manifest: unknown) => unknown[];
  signal?: AbortSignal;
}

/**
 * Saves a data file and a JSON manifest so that a crash at any point leaves the previous save
 * readable: the data file gets a new name and is flushed, the manifest is written to a temporary
 * name, flushed, and renamed over the old one (the commit), and only then is the previous data
 * file removed.
 */
export async function writeManifestSave(options: ManifestSaveOptions): Promise<void> {
  await writeManifestSaveFiles({
    directory: options.directory,
    manifestFile: options.manifestFile,
    files: [{ prefix: options.dataPrefix, extension: options.dataExtension, data: options.data }],
    manifest: (references) => options.manifest(references[0] as DataFileReference),
    dataFilesOf: (manifest) => [options.dataFileOf(manifest)],
    signal: options.signal,
  });
}

/**
 * The same for several data files under one manifest: every data file is written under a new name
 * and flushed, the folder is flushed (so the new names are on disk before anything names them), the
 * manifest is written to a temporary name, flushed and renamed over the old one (the commit, one
 * atomic step), the folder is flushed again, and only then are the previous save's data files
 * removed. A reader therefore finds the old save or the new one, complete, whenever the process or
 * the machine stops.
 */
export async function writeManifestSaveFiles(options: ManifestFilesSaveOptions): Promise<void> {
  const { directory, manifestFile, files, signal } = options;
  const token = randomBytes(8).toString('hex');
  const references = files.map(
    ({ prefix, extension, data }): DataFileReference => ({
      file: `${prefix}-${token}${extension}`,
      bytes: typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength,
      sha256: sha256Hex(data),
    }),
  );
  const manifestText = JSON.stringify(options.manifest(references));
  throwIfAborted(signal);

  await mkdir(directory, { recursive: true });
  const previous = await previousDataFiles(options);
  const dataPaths = references.map((reference) => join(directory, reference.file));
  const manifestPath = join(directory, manifestFile);
  const temporaryManifest = `${manifestPath}.${token}.tmp`;
  try {
    for (let i = 0; i < files.length; i++) {
      await writeFileDurably(dataPaths[i] as string, (files[i] as DataFileContent).data);
      throwIfAborted(signal);
    }
    await writeFileDurably(temporaryManifest, manifestText);
    await syncDirectory(directory);
    await rename(temporaryManifest, manifestPath);
  } catch (error) {
    await rm(temporaryManifest, { force: true }).catch(() => undefined);
    for (const path of dataPaths) await rm(path, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDirectory(directory);
  const current = new Set(references.map((reference) => reference.file));
  for (const file of previous) {
    if (!current.has(file)) await rm(join(directory, file), { force: true }).catch(() => undefined);
  }
  await removeDebris(options, current);
}

/**
 * Files of saves that never committed (the process or the machine stopped part-way) are named by no
 * manifest and would stay for ever. They are removed by a later save once they are old enough that
 * no save could still be writing them: a writer in another process (which Zerda does not support,
 * but a user may run) is never robbed of a file it is about to commit.
 */
export const DEBRIS_AGE_MS = 60 * 60_000;

async function removeDebris(options: ManifestFilesSaveOptions, current: ReadonlySet<string>): Promise<void> {
  const patterns = [
    ...options.files.map(
      ({ prefix, extension }) =>
        new RegExp(`^${escapeRegExp(prefix)}-[0-9a-f]{16}${escapeRegExp(extension)}$`),
    ),
    new RegExp(`^${escapeRegExp(options.manifestFile)}\\.[0-9a-f]{16}\\.tmp$`),
  ];
  let names: string[];
  try {
    names = await readdir(options.directory);
  } catch {
    return;
  }
  const oldest = Date.now() - DEBRIS_AGE_MS;
  for (const name of names) {
    if (current.has(name) || !patterns.some((pattern) => pattern.test(name))) continue;
    const path = join(options.directory, name);
    try {
      if ((await stat(path)).mtimeMs < oldest) await rm(path, { force: true });
    } catch {
      // Best effort: a file that went away or cannot be removed is left for the next save.
    }
  }
}

/** Reads the manifest's text, or an IndexFormatError saying that no save could be read there. */
export async function readManifestText(
  directory: string,
  manifestFile: string,
  what: string,
): Promise<string> {
  const manifestPath = join(directory, manifestFile);
  try {
    return await readFile(manifestPath, 'utf8');
  } catch (error) {
    throw new IndexFormatError({
      message: `No saved ${what} could be read here`,
      path: manifestPath,
      cause: error,
    });
  }
}

/** Reads the data file a manifest names and checks its size and hash (IndexFormatError otherwise). */
export async function readDataFile(
  directory: string,
  reference: DataFileReference,
  what: string,
): Promise<Uint8Array> {
  const path = join(directory, reference.file);
  let data: Uint8Array;
  try {
    data = await readFile(path);
  } catch (error) {
    throw new IndexFormatError({
      message: `The ${what} named by the manifest is missing`,
      path,
      cause: error,
    });
  }
  if (data.byteLength !== reference.bytes || sha256Hex(data) !== reference.sha256) {
    throw new IndexFormatError({
      message: `The ${what} does not match the manifest (truncated, corrupt or from another save)`,
      path,
    });
  }
  return data;
}

async function previousDataFiles(options: ManifestFilesSaveOptions): Promise<string[]> {
  const patterns = options.files.map(
    ({ prefix, extension }) => new RegExp(`^${escapeRegExp(prefix)}-[0-9a-f]{16}${escapeRegExp(extension)}$`),
  );
  try {
    const manifest: unknown = JSON.parse(
      await readFile(join(options.directory, options.manifestFile), 'utf8'),
    );
    return options
      .dataFilesOf(manifest)
      .filter(
        (file): file is string => typeof file === 'string' && patterns.some((pattern) => pattern.test(file)),
      );
  } catch {
    return [];
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
