import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
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

/**
 * Saves a data file and a JSON manifest so that a crash at any point leaves the previous save
 * readable: the data file gets a new name and is flushed, the manifest is written to a temporary
 * name, flushed, and renamed over the old one (the commit), and only then is the previous data
 * file removed.
 */
export async function writeManifestSave(options: ManifestSaveOptions): Promise<void> {
  const { directory, manifestFile, dataPrefix, dataExtension, data, signal } = options;
  const token = randomBytes(8).toString('hex');
  const dataFile = `${dataPrefix}-${token}${dataExtension}`;
  const manifestText = JSON.stringify(
    options.manifest({ file: dataFile, bytes: data.byteLength, sha256: sha256Hex(data) }),
  );
  throwIfAborted(signal);

  await mkdir(directory, { recursive: true });
  const previous = await previousDataFile(options);
  const dataPath = join(directory, dataFile);
  const manifestPath = join(directory, manifestFile);
  const temporaryManifest = `${manifestPath}.${token}.tmp`;
  try {
    await writeFileDurably(dataPath, data);
    throwIfAborted(signal);
    await writeFileDurably(temporaryManifest, manifestText);
    await rename(temporaryManifest, manifestPath);
  } catch (error) {
    await rm(temporaryManifest, { force: true }).catch(() => undefined);
    await rm(dataPath, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDirectory(directory);
  if (previous !== undefined && previous !== dataFile) {
    await rm(join(directory, previous), { force: true }).catch(() => undefined);
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

async function previousDataFile(options: ManifestSaveOptions): Promise<string | undefined> {
  const pattern = new RegExp(
    `^${escapeRegExp(options.dataPrefix)}-[0-9a-f]{16}${escapeRegExp(options.dataExtension)}$`,
  );
  try {
    const manifest: unknown = JSON.parse(
      await readFile(join(options.directory, options.manifestFile), 'utf8'),
    );
    const file = options.dataFileOf(manifest);
    return typeof file === 'string' && pattern.test(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
