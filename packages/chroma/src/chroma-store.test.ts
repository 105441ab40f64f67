import { BackendError, HashEmbedder, InvalidArgumentError } from '@zerda/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChromaTimeoutError } from './chroma-errors.js';
import { ChromaStore, createChromaStore } from './chroma-store.js';

// Unit tests that need no server (the server tests are the *.int.test.ts files).
describe('ChromaStore settings', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('has documented defaults', () => {
    vi.stubEnv('CHROMA_URL', '');
    vi.stubEnv('CHROMA_COLLECTION', '');
    delete process.env.CHROMA_URL;
    delete process.env.CHROMA_COLLECTION;
    const store = createChromaStore();
    expect(store.url).toBe('http://localhost:8000');
    expect(store.collectionName).toBe('zerda');
    expect(store.metric).toBe('cosine');
    expect(store.timeoutMs).toBe(30_000);
    expect(store.docIdKey).toBe('docId');
    expect(store.dimension).toBeUndefined();
    expect(store.filterConvention.name).toBe('chroma');
    expect(store.filterConvention.option).toBe('where');
    expect(store.capabilities).toMatchObject({ metric: 'cosine', persistent: true, deletion: true });
    expect(store.capabilities.scoreConversion).toMatch(/1 - d/);
  });

  it('reads CHROMA_URL and CHROMA_COLLECTION from the environment', () => {
    vi.stubEnv('CHROMA_URL', 'https://chroma.example.com:8443');
    vi.stubEnv('CHROMA_COLLECTION', 'passages');
    const store = new ChromaStore();
    expect(store.url).toBe('https://chroma.example.com:8443');
    expect(store.collectionName).toBe('passages');
  });

  it('states each score conversion', () => {
    expect(new ChromaStore({ metric: 'l2' }).capabilities.scoreConversion).toMatch(/1 \/ \(1 \+ sqrt\(d\)\)/);
    expect(new ChromaStore({ metric: 'dot' }).capabilities.scoreConversion).toMatch(/space 'ip'/);
  });

  it('takes the dimension from the embedder', () => {
    expect(new ChromaStore({ embedder: new HashEmbedder({ dimension: 32 }) }).dimension).toBe(32);
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
      { embedder: new HashEmbedder({ dimension: 16 }), dimension: 8 },
    ];
    for (const settings of bad) {
      expect(() => new ChromaStore(settings as never), JSON.stringify(settings)).toThrow(
        expect.objectContaining({ name: 'InvalidArgumentError' }),
      );
    }
  });

  it('checks search options and query vectors before any request', async () => {
    // Nothing listens on port 9: any request would fail with a BackendError instead.
    const store = new ChromaStore({ url: 'http://127.0.0.1:9', dimension: 3 });
    for (const options of [
      { topK: 0 },
      { topK: 2.5 },
      { topK: 1, scoreThreshold: Number.NaN },
      { topK: 1, where: [] },
    ]) {
      await expect(store.search([1, 0, 0], options as never)).rejects.toSatisfy(
        InvalidArgumentError.isInstance,
      );
    }
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

describe('ChromaStore requests', () => {
  it('bounds a request that gets no answer by timeoutMs (BackendError, cause a TimeoutError)', async () => {
    // A server that accepts connections and never answers.
    const { createServer } = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const store = new ChromaStore({ url: `http://127.0.0.1:${port}`, dimension: 3, timeoutMs: 300 });
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
      expect(backendError.cause).toBeInstanceOf(ChromaTimeoutError);
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
      const store = new ChromaStore({ url: `http://127.0.0.1:${port}`, dimension: 3, timeoutMs: 10_000 });
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
