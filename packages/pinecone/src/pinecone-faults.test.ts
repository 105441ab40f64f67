import { AbortedError, BackendError, BatchWriteError, type Chunk } from '@zerda/core';
import type { RetryEvent } from '@zerda/core/backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPineconeStore } from './pinecone-store.js';
import { type LoopbackPinecone, startLoopbackPinecone, unusedPort } from './test-utils/loopback-pinecone.js';
import { connectedLoopbackStore } from './test-utils/store-factory.js';

// Faults injected by the loopback Pinecone, met by the store's retries, through the real client.

const apiKey = 'pcsk_faults-test-key-000';
let server: LoopbackPinecone;

beforeAll(async () => {
  server = await startLoopbackPinecone({ apiKey, seed: 20_240_611 });
});
afterAll(async () => {
  await server.close();
});

function vectorOf(i: number, dimension: number): number[] {
  return Array.from({ length: dimension }, (_, j) => Math.cos(i * 0.37 + j * 1.1) + (j === 0 ? 1.5 : 0));
}

function chunksOf(count: number, prefix = 'c'): Chunk[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${i}`,
    text: `chunk number ${i}`,
    metadata: { i, even: i % 2 === 0 },
  }));
}

function upsertsTo(indexName: string) {
  return server.requests.filter((request) => request.index === indexName && request.operation === 'upsert');
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('retries', () => {
  it('with 30% of upsert requests answered 429 or 500, 5,000 chunks all arrive, once each', async () => {
    const dimension = 16;
    const events: RetryEvent[] = [];
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension,
      metric: 'cosine',
      namespace: 'flaky',
      maxBatchSize: 100,
      maxConcurrentWrites: 4,
      retry: { maxRetries: 10, initialDelayMs: 1, maxDelayMs: 8 },
      onRetry: (event) => events.push(event),
    });
    const indexes = [indexName];
    // 15% 429 (Retry-After: 0), 7.5% 500 before the write, 7.5% 500 AFTER the write took effect
    // (a lost answer: the retry writes the same records again): 30% of requests in all.
    server.addFault({
      indexes,
      operations: ['upsert'],
      probability: 0.15,
      fault: { type: 'status', status: 429, retryAfter: 0 },
    });
    server.addFault({
      indexes,
      operations: ['upsert'],
      probability: 0.075 / 0.85,
      fault: { type: 'status', status: 500 },
    });
    server.addFault({
      indexes,
      operations: ['upsert'],
      probability: 0.075 / 0.775,
      fault: { type: 'status', status: 500, afterApplying: true },
    });

    const chunks = chunksOf(5_000);
    const progress: number[] = [];
    const result = await store.add(chunks, {
      embeddings: chunks.map((_, i) => vectorOf(i, dimension)),
      onProgress: ({ written }) => progress.push(written),
    });
    server.clearFaults();

    expect(result.ids).toEqual(chunks.map((chunk) => chunk.id));
    expect(progress.at(-1)).toBe(5_000);
    const upserts = upsertsTo(indexName);
    const faulted = upserts.filter((request) => request.status !== 200);
    const share = faulted.length / upserts.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.4);
    expect(faulted.some((request) => request.status === 429)).toBe(true);
    expect(faulted.some((request) => request.status === 500)).toBe(true);
    // Every batch was confirmed exactly once; each failure was retried.
    expect(upserts.filter((request) => request.status === 200)).toHaveLength(50);
    expect(events).toHaveLength(faulted.length);
    expect(new Set(events.map((event) => event.status))).toEqual(new Set([429, 500]));

    // Every chunk present, once, with its own vector and metadata.
    const stored = server.records(indexName, 'flaky');
    expect(stored.size).toBe(5_000);
    expect([...stored.keys()].sort()).toEqual(chunks.map((chunk) => chunk.id).sort());
    for (const i of [0, 1, 2_499, 4_999]) {
      expect(stored.get(`c${i}`)!.metadata).toEqual({ i, even: i % 2 === 0, text: `chunk number ${i}` });
      expect(stored.get(`c${i}`)!.values).toEqual(vectorOf(i, dimension).map(Math.fround));
    }
    expect(await store.count()).toBe(5_000);
    const { hits } = await store.search(vectorOf(0, dimension), { topK: 10_000 });
    expect(hits).toHaveLength(5_000);
    expect(new Set(hits.map((hit) => hit.chunk.id)).size).toBe(5_000);
  });

  it('honours Retry-After', async () => {
    const events: RetryEvent[] = [];
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'dot',
      onRetry: (event) => events.push(event),
    });
    server.addFault({
      indexes: [indexName],
      operations: ['upsert'],
      count: 1,
      fault: { type: 'status', status: 429, retryAfter: 1 },
    });
    const started = performance.now();
    await store.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 2, 3]] });
    const elapsed = performance.now() - started;
    expect(events).toEqual([expect.objectContaining({ status: 429, retryAfterMs: 1_000, attempt: 1 })]);
    expect(events[0]!.delayMs).toBeGreaterThanOrEqual(1_000);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(upsertsTo(indexName).map((request) => request.status)).toEqual([429, 200]);
  });

  it('stops at once when Retry-After asks for longer than it may wait', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'dot',
    });
    server.addFault({
      indexes: [indexName],
      operations: ['query'],
      count: 1,
      fault: { type: 'status', status: 429, retryAfter: 120 },
    });
    const started = performance.now();
    const error = await failure(store.search([1, 0, 0], { topK: 1 }));
    expect(performance.now() - started).toBeLessThan(10_000); // not the 120 s asked for
    expect(BackendError.isInstance(error)).toBe(true);
    expect((error as BackendError).retryable).toBe(true);
    expect((error as Error).message).toMatch(/429 Too Many Requests: the server asked to wait 120 s/);
  });

  it('abandons a slow request after timeoutMs and tries again', async () => {
    const events: RetryEvent[] = [];
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
      timeoutMs: 500,
      onRetry: (event) => events.push(event),
    });
    await store.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 0, 0]] });
    events.length = 0;
    server.addFault({
      indexes: [indexName],
      operations: ['query'],
      count: 1,
      fault: { type: 'delay', ms: 20_000 },
    });
    const started = performance.now();
    const { hits } = await store.search([1, 0, 0], { topK: 1 });
    expect(performance.now() - started).toBeLessThan(10_000); // not the 20 s of the slow answer
    expect(hits[0]!.chunk.id).toBe('a');
    expect(events[0]!.reason).toMatch(/did not answer within 500 ms/);
  });

  it('retries dropped connections, before and after the write took effect', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
    });
    server.addFault({ indexes: [indexName], operations: ['upsert'], count: 1, fault: { type: 'drop' } });
    server.addFault({
      indexes: [indexName],
      operations: ['upsert'],
      count: 1,
      fault: { type: 'drop', afterApplying: true },
    });
    const chunks = chunksOf(3);
    await store.add(chunks, { embeddings: chunks.map((_, i) => vectorOf(i, 3)) });
    expect(upsertsTo(indexName).map((request) => request.status)).toEqual(['dropped', 'dropped', 200]);
    expect(server.records(indexName).size).toBe(3);
  });

  it('does not retry what trying again cannot fix (a 400), and is the only one retrying', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
    });
    server.addFault({
      indexes: [indexName],
      operations: ['upsert'],
      count: 1,
      fault: { type: 'status', status: 400 },
    });
    const error = await failure(store.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 0, 0]] }));
    expect(BatchWriteError.isInstance(error)).toBe(true);
    expect((error as BatchWriteError).retryable).toBe(false);
    expect((error as Error).message).toMatch(/400 Bad Request/);
    expect(upsertsTo(indexName)).toHaveLength(1);

    // Two 500s, then success: three requests, not the client's own retries on top of the store's.
    server.addFault({
      indexes: [indexName],
      operations: ['describe_index_stats'],
      count: 2,
      fault: { type: 'status', status: 500 },
    });
    expect(await store.count()).toBe(0);
    const stats = server.requests.filter(
      (request) => request.index === indexName && request.operation === 'describe_index_stats',
    );
    expect(stats.map((request) => request.status)).toEqual([500, 500, 200]);
  });

  it('reports each retry to the logger', async () => {
    const lines: string[] = [];
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
      logger: { warn: (line) => lines.push(line) },
    });
    server.addFault({
      indexes: [indexName],
      operations: ['describe_index_stats'],
      count: 1,
      fault: { type: 'status', status: 503 },
    });
    await store.count();
    expect(lines).toEqual([
      expect.stringMatching(
        /^pinecone count: attempt 1 of 7 failed \(503 Service Unavailable\); retrying in \d+ ms$/,
      ),
    ]);
  });
});

describe('a write that cannot finish', () => {
  it('when the server goes down for good mid-write, the error names exactly the ids not written', async () => {
    const doomed = await startLoopbackPinecone({ apiKey, indexes: [{ name: 'doomed', dimension: 4 }] });
    const store = createPineconeStore({
      apiKey,
      controllerHostUrl: doomed.url,
      indexName: 'doomed',
      maxBatchSize: 100,
      maxConcurrentWrites: 1,
      retry: { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 5 },
      timeoutMs: 2_000,
    });
    const chunks = chunksOf(1_000, 'd');
    let closing: Promise<void> | undefined;
    const error = await failure(
      store.add(chunks, {
        embeddings: chunks.map((_, i) => vectorOf(i, 4)),
        onProgress: ({ written }) => {
          if (written === 300) closing = doomed.close();
        },
      }),
    );
    await closing;
    expect(BatchWriteError.isInstance(error)).toBe(true);
    const written = error as BatchWriteError;
    expect(written.writtenIds).toEqual(chunks.slice(0, 300).map((chunk) => chunk.id));
    expect(written.failedIds).toEqual(chunks.slice(300).map((chunk) => chunk.id));
    expect([...doomed.records('doomed').keys()].sort()).toEqual([...written.writtenIds].sort());
    expect(written.retryable).toBe(true);
    expect(written.message).toMatch(
      /^pinecone add failed: 300 of 1000 chunks were written before this failure \(adding the others again is safe\): pinecone upsert failed: /,
    );
    expect(written.message).toMatch(/gave up after 4 attempts; the last failed with connection failed/);
    expect(written.message).toMatch(/not written: "d300", "d301", .* and 690 more$/);
    expect(BackendError.isInstance(written.cause)).toBe(true);
    expect((written.cause as BackendError).cause).toBeDefined();
  });

  it('when every request is refused (503), nothing is written and every id is named', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 4,
      metric: 'cosine',
      retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 2 },
    });
    server.addFault({ indexes: [indexName], operations: ['upsert'], fault: { type: 'status', status: 503 } });
    const chunks = chunksOf(250, 'r');
    const error = await failure(store.add(chunks, { embeddings: chunks.map((_, i) => vectorOf(i, 4)) }));
    expect(BatchWriteError.isInstance(error)).toBe(true);
    expect((error as BatchWriteError).writtenIds).toEqual([]);
    expect((error as BatchWriteError).failedIds).toEqual(chunks.map((chunk) => chunk.id));
    expect((error as Error).message).toMatch(
      /gave up after 3 attempts; the last failed with 503 Service Unavailable/,
    );
    expect(server.records(indexName).size).toBe(0);
  });

  it('when nothing listens at all, every id is named', async () => {
    const store = createPineconeStore({
      apiKey,
      host: `http://127.0.0.1:${await unusedPort()}`,
      metric: 'cosine',
      dimension: 2,
      retry: { maxRetries: 1, initialDelayMs: 1 },
    });
    const error = await failure(
      store.add(chunksOf(3, 'x'), {
        embeddings: [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
      }),
    );
    expect(BatchWriteError.isInstance(error)).toBe(true);
    expect((error as BatchWriteError).failedIds).toEqual(['x0', 'x1', 'x2']);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
    expect((error as Error).message).toMatch(/not written: "x0", "x1", "x2"$/);
  });

  it('an abort stops the write: AbortedError before any batch, BatchWriteError after some', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 4,
      metric: 'cosine',
      maxBatchSize: 10,
      maxConcurrentWrites: 1,
    });
    const controller = new AbortController();
    const chunks = chunksOf(50, 'a');
    const error = await failure(
      store.add(chunks, {
        embeddings: chunks.map((_, i) => vectorOf(i, 4)),
        signal: controller.signal,
        onProgress: ({ written }) => {
          if (written === 20) controller.abort(new Error('enough'));
        },
      }),
    );
    expect(BatchWriteError.isInstance(error)).toBe(true);
    expect((error as BatchWriteError).writtenIds).toHaveLength(20);
    expect(AbortedError.isInstance((error as BatchWriteError).cause)).toBe(true);
    expect(server.records(indexName).size).toBe(20);

    // A request in flight is abandoned when the signal fires.
    server.addFault({
      indexes: [indexName],
      operations: ['query'],
      count: 1,
      fault: { type: 'delay', ms: 20_000 },
    });
    const slow = new AbortController();
    setTimeout(() => slow.abort(), 50);
    const started = performance.now();
    const aborted = await failure(store.search(vectorOf(1, 4), { topK: 1, signal: slow.signal }));
    expect(AbortedError.isInstance(aborted)).toBe(true);
    expect(performance.now() - started).toBeLessThan(10_000); // not the 20 s of the slow answer
  });
});
