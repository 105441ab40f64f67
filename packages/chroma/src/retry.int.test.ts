import { createServer, request as forward, type Server } from 'node:http';
import { BackendError } from '@zerda/core';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createChromaStore } from './chroma-store.js';

const target = new URL(inject('chromaUrl'));

interface Proxy {
  url: string;
  /** Requests seen, failed or forwarded. */
  requests: number;
  server: Server;
}

/** A proxy in front of the real server that answers the next `failures.length` requests with those statuses. */
async function flakyProxy(failures: number[]): Promise<Proxy> {
  const proxy: Proxy = { url: '', requests: 0, server: createServer() };
  proxy.server.on('request', (incoming, outgoing) => {
    proxy.requests++;
    const status = failures.shift();
    if (status !== undefined) {
      outgoing.writeHead(status, { 'content-type': 'application/json' });
      outgoing.end(JSON.stringify({ error: 'Injected', message: `injected ${status}` }));
      return;
    }
    const upstream = forward(
      {
        host: target.hostname,
        port: target.port,
        path: incoming.url,
        method: incoming.method,
        headers: incoming.headers,
      },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      },
    );
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(proxy.server.address() as { port: number }).port}`;
  return proxy;
}

const proxies: Proxy[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) {
    proxy.server.closeAllConnections();
    await new Promise((resolve) => proxy.server.close(resolve));
  }
});

async function storeBehind(failures: number[], maxRetries?: number) {
  const proxy = await flakyProxy(failures);
  proxies.push(proxy);
  const store = createChromaStore({
    url: proxy.url,
    collection: `retry-${crypto.randomUUID()}`,
    dimension: 2,
    timeoutMs: 10_000,
    retry: { initialDelayMs: 10, ...(maxRetries === undefined ? {} : { maxRetries }) },
  });
  return { proxy, store };
}

describe('Chroma retries', () => {
  it('retries server errors (5xx) and rate limits (429), then succeeds', async () => {
    const { proxy, store } = await storeBehind([503, 429, 500]);
    try {
      await store.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 0]] });
      expect(await store.count()).toBe(1);
      // Three failed answers, then the open and the writes went through.
      expect(proxy.requests).toBeGreaterThan(3);
    } finally {
      await store.deleteCollection();
    }
  });

  it('gives up after retry.maxRetries with a retryable BackendError naming the server', async () => {
    const { proxy, store } = await storeBehind([503, 503, 503], 1);
    const error = await store.count().catch((caught: unknown) => caught);
    expect(BackendError.isInstance(error), String(error)).toBe(true);
    const failure = error as BackendError;
    expect(failure.retryable).toBe(true);
    expect(failure.backend).toBe('chroma');
    expect(failure.operation).toBe('open collection');
    expect(failure.message).toMatch(/gave up after 2 attempts/);
    expect(failure.message).toContain(`the Chroma server at ${proxy.url} answered with an error`);
    expect((failure.cause as Error).name).toBe('ChromaServerError');
    expect(proxy.requests).toBe(2);
  });

  it('does not retry a refused request (4xx)', async () => {
    const { proxy, store } = await storeBehind([400]);
    const error = await store.count().catch((caught: unknown) => caught);
    expect(BackendError.isInstance(error), String(error)).toBe(true);
    expect((error as BackendError).retryable).toBe(false);
    expect((error as BackendError).message).toContain(proxy.url);
    expect(proxy.requests).toBe(1);
  });
});
