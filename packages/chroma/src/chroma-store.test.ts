import { BackendError, FilterError, HashEmbedder, InvalidArgumentError, nativeFilter } from '@zerda/core';
import { RequestTimeoutError } from '@zerda/core/backend';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chromaFilterConvention } from './chroma-filter.js';
import { createChromaStore } from './chroma-store.js';

// Unit tests that need no server (the server tests are the *.int.test.ts files).
describe('createChromaStore settings', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('has documented defaults', () => {
    vi.stubEnv('CHROMA_URL', '');
    vi.stubEnv('CHROMA_COLLECTION', '');
    delete process.env.CHROMA_URL;
    delete process.env.CHROMA_COLLECTION;
    const store = createChromaStore();
    expect(store.specificationVersion).toBe('v2');
    expect(store.name).toBe('chroma');
    expect(store.driver.settings.url).toBe('http://localhost:8000');
    expect(store.driver.settings.collectionName).toBe('zerda');
    expect(store.capabilities.metric).toBe('cosine');
    expect(store.driver.settings.timeoutMs).toBe(30_000);
    expect(store.driver.settings.docIdKey).toBe('docId');
    expect(store.dimension).toBeUndefined();
    expect(store.filterConvention?.name).toBe('chroma');
    expect(store.capabilities).toMatchObject({
      metric: 'cosine',
      persistent: true,
      deletion: true,
      listing: true,
    });
    expect(store.capabilities.scoreConversion).toBe('one-minus-distance');
    expect(store.capabilities.maxBatchSize).toBeUndefined();
  });

  it('reads CHROMA_URL and CHROMA_COLLECTION from the environment', () => {
    vi.stubEnv('CHROMA_URL', 'https://chroma.example.com:8443');
    vi.stubEnv('CHROMA_COLLECTION', 'passages');
    const store = createChromaStore();
    expect(store.driver.settings.url).toBe('https://chroma.example.com:8443');
    expect(store.driver.settings.collectionName).toBe('passages');
  });

  it('states each score conversion', () => {
    // Chroma's l2 space returns the squared Euclidean distance, its ip space 1 - q·x.
    expect(createChromaStore({ metric: 'l2' }).capabilities.scoreConversion).toBe(
      'squared-euclidean-distance',
    );
    expect(createChromaStore({ metric: 'dot' }).capabilities.scoreConversion).toBe('one-minus-distance');
  });

  it('takes the dimension from the embedder', () => {
    expect(createChromaStore({ embedder: new HashEmbedder({ dimension: 32 }) }).dimension).toBe(32);
  });

  it('refuses bad settings with InvalidArgumentError', () => {
    const bad: Array<Record<string, unknown>> = [
      { metric: 'manhattan' },
      { dimension: 0 },
      { maxBatchSize: 1.5 },
      { timeoutMs: -1 },
      { url: 'not a url' },
      { url: 'ftp://host:1' },
      { url: 'http://host:8000/prefix' },
      { docIdKey: '' },
      { docIdKey: '$id' },
      { collection: '' },
      { retry: { maxRetries: -1 } },
      { embedder: new HashEmbedder({ dimension: 16 }), dimension: 8 },
    ];
    for (const settings of bad) {
      expect(() => createChromaStore(settings as never), JSON.stringify(settings)).toThrow(
        expect.objectContaining({ name: 'InvalidArgumentError' }),
      );
    }
  });

  it('checks search options and query vectors before any request', async () => {
    // Nothing listens on port 9: any request would fail with a BackendError instead.
    const store = createChromaStore({ url: 'http://127.0.0.1:9', dimension: 3 });
    for (const options of [{ topK: 0 }, { topK: 2.5 }, { topK: 1, scoreThreshold: Number.NaN }]) {
      await expect(store.search([1, 0, 0], options as never)).rejects.toSatisfy(
        InvalidArgumentError.isInstance,
      );
    }
    // A native filter must be a Chroma where made by nativeFilter (or resolveFilter).
    for (const filter of [
      nativeFilter(chromaFilterConvention, [] as never),
      nativeFilter(chromaFilterConvention, 'year' as never),
      nativeFilter('pinecone', { year: { $gte: 2020 } }),
      { year: { $gte: 2020 } },
    ]) {
      await expect(store.search([1, 0, 0], { topK: 1, nativeFilter: filter as never })).rejects.toSatisfy(
        FilterError.isInstance,
      );
    }
    await expect(
      store.search([1, 0, 0], { topK: 1, filter: { year: { $gte: 'x' } } as never }),
    ).rejects.toSatisfy(FilterError.isInstance);
    for (const query of [
      [1, 0],
      [Number.NaN, 0, 0],
      [0, 0, 0],
    ]) {
      await expect(store.search(query, { topK: 1 })).rejects.toSatisfy(InvalidArgumentError.isInstance);
    }
    await expect(store.search('text', { topK: 1 })).rejects.toSatisfy(InvalidArgumentError.isInstance);
  });
});

describe('Chroma requests', () => {
  it('bounds a request that gets no answer by timeoutMs (BackendError, cause a TimeoutError)', async () => {
    // A server that accepts connections and never answers.
    const { createServer } = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const store = createChromaStore({ url: `http://127.0.0.1:${port}`, dimension: 3, timeoutMs: 300 });
      const started = performance.now();
      const error = await store.count().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      const elapsed = performance.now() - started;
      expect(BackendError.isInstance(error)).toBe(true);
      const backendError = error as BackendError;
      expect(backendError.operation).toBe('open collection');
      expect(backendError.retryable).toBe(true);
      expect(backendError.cause).toBeInstanceOf(RequestTimeoutError);
      expect(backendError.message).toMatch(/did not answer within 300 ms/);
      expect(elapsed).toBeLessThan(2_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('gives up waiting when the caller aborts', async () => {
    const { createServer } = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const store = createChromaStore({ url: `http://127.0.0.1:${port}`, dimension: 3, timeoutMs: 10_000 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('user cancelled')), 100);
      const started = performance.now();
      await expect(store.count({ signal: controller.signal })).rejects.toMatchObject({
        name: 'AbortedError',
      });
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
