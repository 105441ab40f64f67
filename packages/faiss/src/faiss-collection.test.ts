import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Embedder, HashEmbedder, openCollection } from '@zerda/core';
import { createFileStorage } from '@zerda/core/node';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFaissStore } from './faiss-store.js';
import { testChunks } from './test-utils/data.js';
import { faissSkipped, requireFaiss } from './test-utils/faiss-available.js';

/** A hash embedder that counts the texts it embeds. */
function countingEmbedder(): Embedder & { texts: number } {
  const inner = new HashEmbedder({ dimension: 64 });
  const counting = {
    dimension: inner.dimension,
    texts: 0,
    async embed(texts: readonly string[]) {
      counting.texts += texts.length;
      return inner.embed(texts);
    },
  };
  return counting;
}

describe.skipIf(faissSkipped)('a collection over FAISS', () => {
  beforeAll(async () => {
    await requireFaiss();
  });

  it.each(['flat', 'hnsw'] as const)(
    '%s: reopens from its snapshot with the listed vectors, embedding nothing again',
    async (indexType) => {
      const directory = await mkdtemp(join(tmpdir(), 'zerda-faiss-collection-'));
      try {
        const embedder = countingEmbedder();
        const open = () =>
          openCollection({
            store: createFaissStore({ indexType, embedder }),
            storage: createFileStorage(directory),
          });
        const first = await open();
        await first.add(testChunks(40));
        const before = await first.retrieve('chunk number 7', { mode: 'vector', k: 5 });
        // Into the snapshot: a close alone leaves so short a log for the next open to replay.
        await first.checkpoint();
        await first.close();
        const embedded = embedder.texts;
        const second = await open();
        expect(embedder.texts).toBe(embedded);
        expect(second.report.restored).toBe(40);
        expect(second.report.warnings.filter((warning) => /embedded again/.test(warning.message))).toEqual(
          [],
        );
        const after = await second.retrieve('chunk number 7', { mode: 'vector', k: 5 });
        expect(after.hits.map((hit) => [hit.chunk.id, hit.score])).toEqual(
          before.hits.map((hit) => [hit.chunk.id, hit.score]),
        );
        // A few more, closed without a snapshot: the next open replays the log, vectors included.
        await second.add(testChunks(3).map((chunk) => ({ ...chunk, id: `late-${chunk.id}` })));
        await second.close();
        const embeddedLate = embedder.texts;
        const third = await open();
        expect(embedder.texts).toBe(embeddedLate);
        expect(third.report.restored).toBe(40);
        expect(await third.count()).toBe(43);
        const late = await third.retrieve('chunk number 1', { mode: 'vector', k: 50 });
        expect(late.hits.map((hit) => hit.chunk.id)).toContain(`late-${testChunks(3)[1]?.id}`);
        await third.close();
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    },
  );
});
