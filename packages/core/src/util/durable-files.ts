import { createHash, randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Helpers for saves that survive a crash: write each file durably, then publish it by renaming a
 * manifest over the old one (the rename is the commit), then flush the directory entry.
 */

/** Writes and flushes to disk, so the rename that follows never exposes an unwritten file. */
export async function writeFileDurably(path: string, data: Uint8Array | string): Promise<void> {
  const handle = await open(path, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes the directory entry of a rename where the platform allows it (not on Windows). */
export async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort: the save is complete either way.
  }
}

/**
 * Replaces one file so that a reader sees the old content or the new, whole, whenever the process or
 * the machine stops: the new content goes to a temporary name beside it and is flushed, the rename
 * over the old file is the switch, and the folder is flushed so the rename itself is durable.
 */
export async function replaceFileDurably(path: string, data: Uint8Array | string): Promise<void> {
  const temporary = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    await writeFileDurably(temporary, data);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(path));
}

/** Hex SHA-256 of bytes, recorded in manifests so a mismatched or corrupt file is refused. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}
