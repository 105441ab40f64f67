import {
  BackendError,
  ChunkValidationError,
  HashEmbedder,
  HybridRetriever,
  KeywordRetriever,
  VectorRetriever,
} from '@zerda/core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createChromaStore } from './chroma-store.js';
import { type ChromaServer, startChromaServer } from './test-utils/chroma-server.js';

const passages = [
  { id: 'p1', text: 'Solar panels convert sunlight into electricity for homes.', docId: 'energy' },
  { id: 'p2', text: 'Wind turbines generate power on offshore farms.', docId: 'energy' },
  { id: 'p3', text: 'The river floods the valley every spring after the snow melts.', docId: 'water' },
  { id: 'p4', text: 'Contract disputes are settled by the commercial court.', docId: 'law' },
  { id: 'p5', text: 'Battery storage smooths the output of solar farms.', docId: 'energy' },
];

const TIMEOUT_MS = 2_000;

/** A server of its own, killed in the middle of the test. */
describe('when the Chroma server dies', () => {
  let server: ChromaServer;
  beforeAll(async () => {
    server = await startChromaServer();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('the next search fails fast with a typed, descriptive error, and a hybrid query still answers from BM25 with a warning', {
    timeout: 60_000,
  }, async () => {
    const embedder = new HashEmbedder({ dimension: 64 });
    const store = createChromaStore({ url: server.url, collection: 'dies', embedder, timeoutMs: TIMEOUT_MS });
    await store.add(passages);
    const keyword = new KeywordRetriever();
    keyword.add(passages);
    const hybrid = new HybridRetriever({ vector: new VectorRetriever({ store }), keyword });

    const before = await hybrid.retrieve('solar electricity', { k: 3 });
    expect(before.warnings).toEqual([]);
    expect(before.hits[0]!.chunk.id).toBe('p1');
    expect(before.hits[0]!.scores.vector).toBeDefined();
    expect(before.hits[0]!.scores.keyword).toBeDefined();

    await server.kill();

    const started = performance.now();
    const error = await store.search('solar electricity', { topK: 3 }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    const elapsed = performance.now() - started;
    expect(BackendError.isInstance(error), `got ${String(error)}`).toBe(true);
    const failure = error as BackendError;
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 500);
    expect(failure.backend).toBe('chroma');
    expect(failure.operation).toBe('search');
    expect(failure.retryable).toBe(true);
    expect(failure.message).toContain(server.url);
    expect(failure.message).toMatch(/cannot reach the Chroma server/);
    // Retried while the next try fitted in timeoutMs, then the real failure, not a timeout.
    expect(failure.message).toMatch(/gave up after \d+ attempts/);
    expect(failure.cause).toBeInstanceOf(Error);
    expect((failure.cause as Error).name).toBe('ChromaConnectionError');

    const after = await hybrid.retrieve('solar electricity', { k: 3 });
    expect(after.hits.length).toBeGreaterThan(0);
    expect(after.hits[0]!.chunk.id).toBe('p1');
    expect(
      after.hits.every((hit) => hit.scores.vector === undefined && hit.scores.keyword !== undefined),
    ).toBe(true);
    const warning = after.warnings.find((entry) => entry.type === 'partial-failure');
    expect(warning?.source).toBe('vector');
    expect(warning?.message).toMatch(/chroma search failed/);
    expect(warning?.message).toMatch(/keyword only/);
  });

  it('a server that stops answering is bounded by timeoutMs', { timeout: 60_000 }, async () => {
    const other = await startChromaServer();
    const store = createChromaStore({ url: other.url, collection: 'hangs', dimension: 3, timeoutMs: 1_000 });
    try {
      await store.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 0, 0]] });
      process.kill(other.pid!, 'SIGSTOP');
      const started = performance.now();
      const error = await store.search([1, 0, 0], { topK: 1 }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      const elapsed = performance.now() - started;
      expect(BackendError.isInstance(error)).toBe(true);
      expect((error as BackendError).message).toMatch(/did not answer within 1000 ms/);
      expect((error as BackendError).cause).toMatchObject({ name: 'TimeoutError' });
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(3_000);
    } finally {
      process.kill(other.pid!, 'SIGCONT');
      await other.stop();
    }
  });
});

describe('a refused batch', () => {
  it('writes nothing, even where the bad chunk is in a later request than the first', async () => {
    const store = createChromaStore({
      url: inject('chromaUrl'),
      collection: `refused-${crypto.randomUUID()}`,
      dimension: 3,
      maxBatchSize: 2,
    });
    try {
      await store.add([{ id: 'kept', text: 'kept', metadata: { n: 1 } }], { embeddings: [[1, 0, 0]] });
      const chunks = Array.from({ length: 7 }, (_, i) => ({
        id: `c${i}`,
        text: `chunk ${i}`,
        metadata: { n: i },
      }));
      const vectors = chunks.map((_, i) => [1, i, 0]);
      const bad = [
        { ...chunks[6]!, metadata: { tags: ['a', 'b'] } },
        { ...chunks[6]!, metadata: { 'chroma:document': 'x' } },
        { ...chunks[6]!, metadata: { nested: { a: 1 } } },
      ];
      for (const chunk of bad) {
        const replaced = { id: 'kept', text: 'replaced', metadata: { n: 2 } };
        await expect(
          store.add([replaced, ...chunks.slice(0, 6), chunk as never], {
            embeddings: [[0, 1, 0], ...vectors],
          }),
        ).rejects.toSatisfy(ChunkValidationError.isInstance);
        expect(await store.count()).toBe(1);
        const { hits } = await store.search([1, 0, 0], { topK: 10 });
        expect(hits.map((hit) => hit.chunk)).toEqual([{ id: 'kept', text: 'kept', metadata: { n: 1 } }]);
      }
      const error = await store
        .add([{ id: 'x', text: 'x', metadata: { tags: ['a'] } }], { embeddings: [[1, 1, 1]] })
        .catch((caught: unknown) => caught);
      expect(String((error as Error).message)).toMatch(/metadata field 'tags' is a list/);
    } finally {
      await store.deleteCollection();
    }
  });
});
