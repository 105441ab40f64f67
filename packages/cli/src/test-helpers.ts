import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Chunk } from '@zerda/core';
import type { CliIo } from './io.js';
import type { StoreConfig } from './store-folder/store-config.js';
import { openStoreForReading, storeCounts } from './store-folder/store-folder.js';

/** The repository root: three levels up from packages/cli/src. */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The evaluation collections the repository carries (`datasets/` at the repository root). */
export const dataRoot = join(repoRoot, 'datasets');

/** A CliIo that records what a command writes. */
export function captureIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}

/** What a store folder holds, read through its collection (opened for reading, then closed). */
export async function readStore(directory: string): Promise<{
  config: StoreConfig;
  chunks: Chunk[];
  /** Records in the backend's vector store. */
  vectors: number;
  counts: { documents: number; chunks: number };
}> {
  const store = await openStoreForReading(directory);
  try {
    const chunks: Chunk[] = [];
    for await (const page of store.collection.list()) chunks.push(...page);
    return {
      config: store.config,
      chunks,
      vectors: await store.collection.store.count(),
      counts: await storeCounts(store.collection),
    };
  } finally {
    await store.close();
  }
}
