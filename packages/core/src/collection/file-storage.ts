import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { IndexFormatError, InvalidArgumentError, StorageLockedError } from '../errors/index.js';
import { crc32 } from '../util/crc32.js';
import { syncDirectory, writeFileDurably } from '../util/durable-files.js';
import { type DataFileReference, readDataFile, readManifestText } from '../util/manifest-save.js';
import {
  type BlobSource,
  blobBuffer,
  type CollectionStorage,
  frameRecord,
  type SnapshotReadOptions,
  type StorageLock,
  unframeRecords,
} from './storage.js';

/*
 * A collection folder holds:
 * - `zerda-collection.json`, the manifest: format and version, and the name, size and CRC-32 of
 *   each snapshot blob (`blob-<key>-<random>.bin`) plus the name of the log (`log-<random>.wal`)
 *   (version 1 had a SHA-256 per blob, and is still read; the next commit writes version 2);
 * - the blobs, written once and never changed;
 * - the log, framed records (length, CRC-32, bytes) appended and flushed one by one;
 * - `zerda-collection.lock` while a writer holds the folder (its process id and host).
 * A snapshot commit writes new blobs and a new empty log under new names, flushes them and the
 * folder, and renames a flushed manifest over the old one: one atomic step (writeManifestSaveFiles).
 */
const MANIFEST_FILE = 'zerda-collection.json';
const LOCK_FILE = 'zerda-collection.lock';
const FORMAT = 'zerda.collection-storage';
/** 2: a CRC-32 per blob (hashing hundreds of megabytes with SHA-256 dominated opening). 1: SHA-256. */
const FORMAT_VERSION = 2;
const KEY_PATTERN = /^[a-z0-9-]{1,40}$/;
/** Bytes per read of a blob: large enough that a read costs little beside its copy. */
const READ_PIECE = 8 * 1024 * 1024;
const OWN_FILE = /^(blob-[a-z0-9-]+-[0-9a-f]{16}\.bin|log-[0-9a-f]{16}\.wal)$/;

/** A blob as the manifest names it: version 2 carries `crc32`, version 1 `sha256`. */
interface BlobReference {
  file: string;
  bytes: number;
  crc32?: number;
  sha256?: string;
}

interface StorageManifest {
  format: typeof FORMAT;
  version: 1 | typeof FORMAT_VERSION;
  blobs: Record<string, BlobReference>;
  log: string;
}

export interface FileStorageSettings {
  /** The folder, created when missing. A folder holding anything other than a collection is refused. */
  directory: string;
}

/** A collection storage in a folder, for Node: fsync and rename commits, a flushed append-only log, a lock file. */
export function createFileStorage(settings: FileStorageSettings | string): CollectionStorage {
  const directory = typeof settings === 'string' ? settings : settings?.directory;
  if (typeof directory !== 'string' || directory.length === 0) {
    throw new InvalidArgumentError({
      argument: 'directory',
      value: directory,
      message: 'expected a folder path',
    });
  }
  return new FileStorage(directory);
}

class FileStorage implements CollectionStorage {
  readonly location: string;
  /** Every blob is read against the CRC-32 the manifest holds for it. */
  readonly verified = true;
  outdated = false;
  #log: FileHandle | undefined;
  #logName: string | undefined;

  constructor(readonly directory: string) {
    this.location = directory;
  }

  async lock(): Promise<StorageLock> {
    try {
      await mkdir(this.directory, { recursive: true });
    } catch (error) {
      throw this.#unusable(error, 'could not be created');
    }
    const path = join(this.directory, LOCK_FILE);
    const me = { pid: process.pid, host: hostname() };
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const handle = await open(path, 'wx');
        await handle.writeFile(JSON.stringify(me));
        await handle.sync();
        await handle.close();
        await this.#removeLeftovers();
        return {
          release: async () => {
            await this.#closeLog();
            await rm(path, { force: true });
          },
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await readLockHolder(path);
      if (holder !== undefined && isAlive(holder)) {
        throw new StorageLockedError({
          location: this.location,
          holder: `process ${holder.pid} on ${holder.host}`,
          pid: holder.pid,
        });
      }
      // The holder has died (or left an unreadable lock): take the lock over.
      await rm(path, { force: true });
    }
    throw new StorageLockedError({ location: this.location, holder: 'a writer that keeps taking the lock' });
  }

  /**
   * Files of a commit that a crash interrupted (written, never named by the manifest): removed by
   * the writer that takes the lock, so only one writer ever does it and no commit is in progress.
   */
  async #removeLeftovers(): Promise<void> {
    const manifest = await this.#readManifest().catch(() => undefined);
    if (manifest === undefined) return;
    const named = new Set([
      ...Object.values(manifest.blobs).map((reference) => reference.file),
      manifest.log,
    ]);
    for (const entry of await readdir(this.directory)) {
      if (/^(blob-.*\.bin|log-.*\.wal|zerda-collection\.json\..*\.tmp)$/.test(entry) && !named.has(entry)) {
        await rm(join(this.directory, entry), { force: true });
      }
    }
  }

  async readSnapshot(options?: SnapshotReadOptions): Promise<Map<string, Uint8Array> | undefined> {
    const manifest = await this.#readManifest();
    if (manifest === undefined) return undefined;
    this.outdated = manifest.version !== FORMAT_VERSION;
    if (manifest.version === 1) {
      const entries = await Promise.all(
        Object.entries(manifest.blobs).map(
          async ([key, reference]) =>
            [
              key,
              await readDataFile(this.directory, reference as DataFileReference, `'${key}' blob`),
            ] as const,
        ),
      );
      for (const [key, bytes] of entries) options?.onRead?.(key, bytes);
      return new Map(entries);
    }
    // One blob after another, smallest first, each with all its pieces read at once. A blob read
    // is handed to `onRead` once the next blob's reads are under way, so a caller that decodes it
    // then does so while the larger ones are still being read in the I/O threads.
    const entries: Array<readonly [string, Uint8Array | undefined]> = [];
    const unannounced: Array<readonly [string, Uint8Array]> = [];
    const announce = () => {
      for (const [key, bytes] of unannounced.splice(0)) options?.onRead?.(key, bytes);
    };
    const ordered = Object.entries(manifest.blobs).sort(([, a], [, b]) => (a.bytes ?? 0) - (b.bytes ?? 0));
    for (const [key, reference] of ordered) {
      const bytes = await this.#readBlob(key, reference, options, announce);
      if (bytes !== undefined) unannounced.push([key, bytes]);
      entries.push([key, bytes]);
    }
    announce();
    // Deferred blobs, handed to their consumer unread, are left out.
    return new Map(entries.filter((entry): entry is [string, Uint8Array] => entry[1] !== undefined));
  }

  /**
   * One blob into a buffer of its own, in pieces read in parallel, each piece's CRC taken while
   * later ones are still being read, so checking costs little time beside the read (readFile's
   * small pieces and a CRC after it took about a third longer for a 100,000-chunk collection).
   */
  async #readBlob(
    key: string,
    reference: BlobReference,
    options: SnapshotReadOptions | undefined,
    /** Called once this blob's reads are under way (not for a deferred blob, which is not read). */
    reading: () => void = () => {},
  ): Promise<Uint8Array | undefined> {
    const path = join(this.directory, String(reference?.file));
    if (
      typeof reference?.file !== 'string' ||
      !/^blob-[a-z0-9-]+-[0-9a-f]{16}\.bin$/.test(reference.file) ||
      !Number.isSafeInteger(reference.bytes) ||
      reference.bytes < 0 ||
      typeof reference.crc32 !== 'number'
    ) {
      throw new IndexFormatError({ message: `The manifest's entry for the '${key}' blob is damaged`, path });
    }
    const mismatch = () =>
      new IndexFormatError({
        message: `The '${key}' blob does not match the manifest (truncated, corrupt or from another save)`,
        path,
      });
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new IndexFormatError({
        message:
          code === 'ENOENT'
            ? `The '${key}' blob named by the manifest is missing`
            : `The '${key}' blob named by the manifest could not be opened (${String(code)})`,
        path,
        cause: error,
      });
    }
    try {
      if ((await handle.stat()).size !== reference.bytes) throw mismatch();
      const consume = options?.defer?.(key, reference.bytes);
      if (consume !== undefined) {
        consume(deferredSource(path, key, reference.bytes));
        return undefined;
      }
      const data = blobBuffer(options, key, reference.bytes);
      // Every piece's read started at once (the I/O threads take them in turn, each into its own
      // part of the buffer); the CRC is taken in order as they arrive.
      const reads: Array<Promise<void>> = [];
      for (let offset = 0; offset < data.byteLength; offset += READ_PIECE) {
        const read = readFully(handle, data.subarray(offset, offset + READ_PIECE), offset, mismatch);
        // Handled here, so a later piece failing while an earlier one is awaited is no unhandled
        // rejection; awaiting it below still throws.
        read.catch(() => {});
        reads.push(read);
      }
      let crc = 0;
      try {
        reading();
        for (let piece = 0; piece < reads.length; piece++) {
          await reads[piece];
          crc = crc32(data.subarray(piece * READ_PIECE, (piece + 1) * READ_PIECE), crc);
        }
      } finally {
        // No read is left running on the handle the caller closes.
        await Promise.allSettled(reads);
      }
      if (crc !== reference.crc32) throw mismatch();
      return data;
    } catch (error) {
      // A system call's failure (EIO, ...) said as such; anything else (a consumer's) as it is.
      if (typeof (error as NodeJS.ErrnoException)?.syscall !== 'string') throw error;
      throw new IndexFormatError({
        message: `The '${key}' blob could not be read (${String((error as NodeJS.ErrnoException).code)})`,
        path,
        cause: error,
      });
    } finally {
      await handle.close();
    }
  }

  async commitSnapshot(blobs: ReadonlyMap<string, Uint8Array>): Promise<void> {
    const keys = [...blobs.keys()];
    for (const key of keys) {
      if (!KEY_PATTERN.test(key))
        throw new InvalidArgumentError({ argument: 'key', value: key, message: 'expected [a-z0-9-]' });
    }
    await this.#closeLog();
    // New names for every file of this commit; the previous commit's stay until the manifest moves.
    const token = randomBytes(8).toString('hex');
    const previous = await this.#readManifest().catch(() => undefined);
    const manifest: StorageManifest = {
      format: FORMAT,
      version: FORMAT_VERSION,
      blobs: Object.fromEntries(
        keys.map((key) => {
          const data = blobs.get(key) as Uint8Array;
          return [key, { file: `blob-${key}-${token}.bin`, bytes: data.byteLength, crc32: crc32(data) }];
        }),
      ),
      log: `log-${token}.wal`,
    };
    const written = [...Object.values(manifest.blobs).map((reference) => reference.file), manifest.log];
    const manifestPath = join(this.directory, MANIFEST_FILE);
    const temporaryManifest = `${manifestPath}.${token}.tmp`;
    await mkdir(this.directory, { recursive: true });
    try {
      // Every file flushed, then the folder (so their names are on disk before anything names
      // them), then the flushed manifest renamed over the old one: the commit, one atomic step.
      for (const key of keys) {
        await writeFileDurably(
          join(this.directory, `blob-${key}-${token}.bin`),
          blobs.get(key) as Uint8Array,
        );
      }
      await writeFileDurably(join(this.directory, manifest.log), new Uint8Array(0));
      await writeFileDurably(temporaryManifest, JSON.stringify(manifest));
      await syncDirectory(this.directory);
      await rename(temporaryManifest, manifestPath);
    } catch (error) {
      await rm(temporaryManifest, { force: true }).catch(() => undefined);
      for (const file of written)
        await rm(join(this.directory, file), { force: true }).catch(() => undefined);
      throw error;
    }
    await syncDirectory(this.directory);
    this.#logName = manifest.log;
    if (previous !== undefined) {
      const current = new Set(written);
      for (const file of [
        ...Object.values(previous.blobs).map((reference) => reference?.file),
        previous.log,
      ]) {
        // Only names this storage writes: a damaged manifest never sends a removal elsewhere.
        if (typeof file !== 'string' || current.has(file) || !OWN_FILE.test(file)) continue;
        await rm(join(this.directory, file), { force: true }).catch(() => undefined);
      }
    }
  }

  async appendLog(record: Uint8Array): Promise<void> {
    const handle = await this.#openLog();
    await handle.write(frameRecord(record));
    await handle.datasync();
  }

  async readLog(): Promise<Uint8Array[]> {
    const manifest = await this.#readManifest();
    if (manifest === undefined) return [];
    const path = join(this.directory, manifest.log);
    let bytes: Uint8Array;
    try {
      bytes = await readFile(path);
    } catch (error) {
      throw new IndexFormatError({ message: 'The log named by the manifest is missing', path, cause: error });
    }
    const { records, validLength } = unframeRecords(bytes);
    if (validLength < bytes.byteLength) {
      // A crash cut the last append short: drop the torn tail so new records follow whole ones.
      const handle = await open(path, 'r+');
      try {
        await handle.truncate(validLength);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    this.#logName = manifest.log;
    // Copies (a Buffer's slice would share the file's memory).
    return records.map((record) => new Uint8Array(record));
  }

  async #openLog(): Promise<FileHandle> {
    if (this.#log) return this.#log;
    if (this.#logName === undefined) {
      const manifest = await this.#readManifest();
      if (manifest === undefined)
        throw new IndexFormatError({ message: 'No snapshot committed yet', path: this.directory });
      this.#logName = manifest.log;
    }
    this.#log = await open(join(this.directory, this.#logName), 'a');
    return this.#log;
  }

  async #closeLog(): Promise<void> {
    const handle = this.#log;
    this.#log = undefined;
    await handle?.close();
  }

  /** The storage's folder refused by the file system: a file in its place, no permission, ... */
  #unusable(error: unknown, what: string): IndexFormatError {
    const code = (error as NodeJS.ErrnoException).code;
    return new IndexFormatError({
      message:
        code === 'EEXIST' || code === 'ENOTDIR'
          ? 'The collection storage path is a file, not a folder; nothing was written'
          : `The collection storage folder ${what} (${String(code)}); nothing was written`,
      path: this.directory,
      cause: error,
    });
  }

  /** The manifest, undefined for a missing or empty folder; a folder of something else is an IndexFormatError. */
  async #readManifest(): Promise<StorageManifest | undefined> {
    let entries: string[];
    try {
      entries = await readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw this.#unusable(error, 'could not be listed');
    }
    if (!entries.includes(MANIFEST_FILE)) {
      const foreign = entries.filter(
        (entry) => entry !== LOCK_FILE && !/^(blob-.*\.bin|log-.*\.wal|.*\.tmp)$/.test(entry),
      );
      if (foreign.length === 0) return undefined;
      throw new IndexFormatError({
        message: `This folder is not a Zerda collection (it holds ${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', ...' : ''} and no ${MANIFEST_FILE}); nothing was written`,
        path: this.directory,
      });
    }
    const path = join(this.directory, MANIFEST_FILE);
    const text = await readManifestText(this.directory, MANIFEST_FILE, 'collection');
    let value: Partial<StorageManifest>;
    try {
      value = JSON.parse(text) as Partial<StorageManifest>;
    } catch (error) {
      throw new IndexFormatError({
        message: 'The collection manifest is not valid JSON',
        path,
        cause: error,
      });
    }
    if (value?.format !== FORMAT)
      throw new IndexFormatError({ message: 'Not a Zerda collection manifest', path });
    if (value.version !== FORMAT_VERSION && value.version !== 1) {
      throw new IndexFormatError({
        message: `Collection storage version ${String(value.version)} is not supported (this version of Zerda reads 1 and ${FORMAT_VERSION})`,
        path,
      });
    }
    if (
      typeof value.log !== 'string' ||
      !/^log-[0-9a-f]{16}\.wal$/.test(value.log) ||
      typeof value.blobs !== 'object' ||
      value.blobs === null
    ) {
      throw new IndexFormatError({ message: 'The collection manifest is damaged', path });
    }
    return value as StorageManifest;
  }
}

async function readLockHolder(path: string): Promise<{ pid: number; host: string } | undefined> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as { pid?: unknown; host?: unknown };
    return typeof value.pid === 'number' && typeof value.host === 'string'
      ? { pid: value.pid, host: value.host }
      : undefined;
  } catch {
    return undefined;
  }
}

/** A holder on another host is taken as alive (its lock cannot be checked from here). */
function isAlive(holder: { pid: number; host: string }): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Fills `target` from the file at `position`, however many reads that takes (a mismatch: it ends first). */
async function readFully(
  handle: FileHandle,
  target: Uint8Array,
  position: number,
  mismatch: () => Error,
): Promise<void> {
  let done = 0;
  while (done < target.byteLength) {
    const { bytesRead } = await handle.read(target, done, target.byteLength - done, position + done);
    if (bytesRead === 0) throw mismatch();
    done += bytesRead;
  }
}

/** The largest read a deferred blob's source serves from the buffer it keeps. */
const SCRATCH_LIMIT = 64 * 1024;

/** Descriptors of deferred blobs, each closed once its source is unreachable. */
const deferredBlobs = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // Closed already: nothing is left to release.
  }
});

/**
 * A blob read a range at a time, through a descriptor of its own: the blob stays readable while the
 * source is reachable, even once a later snapshot has removed its file (POSIX keeps an open file).
 */
function deferredSource(path: string, key: string, byteLength: number): BlobSource {
  const failure = (error: unknown) =>
    new IndexFormatError({
      message: `The '${key}' blob could not be read (${String((error as NodeJS.ErrnoException).code)})`,
      path,
      cause: error,
    });
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw failure(error);
  }
  // One buffer reused for the small reads of single texts; a large read (a snapshot copying texts)
  // gets its own, so the source never keeps megabytes.
  let scratch = new Uint8Array(0);
  const source: BlobSource = {
    byteLength,
    read(offset, length) {
      if (scratch.byteLength < length && length <= SCRATCH_LIMIT)
        scratch = new Uint8Array(Math.min(SCRATCH_LIMIT, Math.max(length, 2 * scratch.byteLength, 4096)));
      const target = length <= SCRATCH_LIMIT ? scratch : new Uint8Array(length);
      let done = 0;
      while (done < length) {
        let read: number;
        try {
          read = offset + done < byteLength ? readSync(fd, target, done, length - done, offset + done) : 0;
        } catch (error) {
          throw failure(error);
        }
        if (read === 0) {
          throw new IndexFormatError({
            message: `The '${key}' blob ends before the ${length} bytes read at ${offset} (truncated)`,
            path,
          });
        }
        done += read;
      }
      return target.subarray(0, length);
    },
  };
  deferredBlobs.register(source, fd);
  return source;
}
