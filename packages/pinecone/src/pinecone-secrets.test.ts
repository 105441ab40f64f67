import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPineconeStore } from './pinecone-store.js';
import { type LoopbackPinecone, startLoopbackPinecone, unusedPort } from './test-utils/loopback-pinecone.js';

// No API key in any log line or error message: a recognisable fake key goes through every path
// that logs or fails (the store's retry log, the client's PINECONE_DEBUG log, 401s, 404s, 5xx,
// connection failures, timeouts, validation errors), and none of it may contain the key.

const FAKE_KEY = 'pcsk_ZERDA-FAKE-KEY-do-not-leak-7f3a9c1e';
const SERVER_KEY = 'pcsk_the-right-key-0000';

let captured: string[];
const restore: Array<() => void> = [];

beforeEach(() => {
  captured = [];
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    const spy = vi.spyOn(console, method).mockImplementation((...parts: unknown[]) => {
      captured.push(
        parts.map((part) => (typeof part === 'string' ? part : inspect(part, { depth: null }))).join(' '),
      );
    });
    restore.push(() => spy.mockRestore());
  }
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      captured.push(String(chunk));
      return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
    restore.push(() => {
      stream.write = original;
    });
  }
  process.env.PINECONE_DEBUG = 'true';
  restore.push(() => {
    delete process.env.PINECONE_DEBUG;
  });
});

afterEach(() => {
  while (restore.length > 0) restore.pop()!();
});

/** Every text an error shows: message, stack, inspection with its causes, JSON. */
function everythingSaidBy(error: unknown): string {
  const parts = [String(error), inspect(error, { depth: null, showHidden: true })];
  if (error instanceof Error) parts.push(error.message, error.stack ?? '');
  let cause: unknown = error;
  for (let depth = 0; depth < 10 && cause instanceof Error; depth++) {
    parts.push(cause.message, cause.stack ?? '');
    cause = cause.cause;
  }
  try {
    parts.push(JSON.stringify(error));
  } catch {
    // circular: the inspection above has it all
  }
  return parts.join('\n');
}

async function errorOf(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('the API key never shows', () => {
  let server: LoopbackPinecone;

  beforeEach(async () => {
    server = await startLoopbackPinecone({
      apiKey: FAKE_KEY,
      indexes: [
        { name: 'secrets', dimension: 3, metric: 'cosine' },
        { name: 'other', dimension: 4, metric: 'dotproduct' },
      ],
    });
  });
  afterEach(async () => {
    await server.close();
  });

  it('in logs and errors of every failure path', async () => {
    const errors: unknown[] = [];
    const base = {
      apiKey: FAKE_KEY,
      controllerHostUrl: server.url,
      retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 2 },
      timeoutMs: 300,
      logger: console,
    };
    const store = createPineconeStore({ ...base, indexName: 'secrets' });
    await store.add([{ id: 'a', text: 'a', metadata: { n: 1 } }], { embeddings: [[1, 0, 0]] });

    // 429 and 503, retried then passed: the retry log goes to console.warn.
    server.addFault({
      operations: ['query'],
      count: 1,
      fault: { type: 'status', status: 429, retryAfter: 0 },
    });
    server.addFault({ operations: ['query'], count: 1, fault: { type: 'status', status: 503 } });
    await store.search([1, 0, 0], { topK: 1 });
    // A 500 on every try: a BatchWriteError.
    server.addFault({ operations: ['upsert'], count: 3, fault: { type: 'status', status: 500 } });
    errors.push(await errorOf(() => store.add([{ id: 'b', text: 'b' }], { embeddings: [[0, 1, 0]] })));
    // A slow answer on every try: timeouts.
    server.addFault({ operations: ['describe_index_stats'], count: 3, fault: { type: 'delay', ms: 600 } });
    errors.push(await errorOf(() => store.count()));
    // Dropped connections.
    server.addFault({ operations: ['fetch'], count: 3, fault: { type: 'drop' } });
    errors.push(await errorOf(() => store.delete(['a'])));
    // Refused by the server (400), and refused before sending (validation).
    server.addFault({ operations: ['query'], count: 1, fault: { type: 'status', status: 400 } });
    errors.push(await errorOf(() => store.search([1, 0, 0], { topK: 1 })));
    errors.push(await errorOf(() => store.add([{ id: 'z', text: 'z' }], { embeddings: [[0, 0, 0]] })));
    errors.push(await errorOf(() => store.search([1, 0], { topK: 1 })));
    // A wrong key (the server expects another): 401, control plane and data plane.
    const intruderServer = await startLoopbackPinecone({
      apiKey: SERVER_KEY,
      indexes: [{ name: 'x', dimension: 2 }],
    });
    try {
      errors.push(
        await errorOf(() =>
          createPineconeStore({ ...base, controllerHostUrl: intruderServer.url, indexName: 'x' }).count(),
        ),
      );
      errors.push(
        await errorOf(() =>
          createPineconeStore({
            ...base,
            host: intruderServer.hostOf('x'),
            metric: 'cosine',
            dimension: 2,
          }).count(),
        ),
      );
    } finally {
      await intruderServer.close();
    }
    // An index that does not exist (404), settings that contradict the index.
    errors.push(await errorOf(() => createPineconeStore({ ...base, indexName: 'missing' }).count()));
    errors.push(
      await errorOf(() => createPineconeStore({ ...base, indexName: 'other', metric: 'cosine' }).count()),
    );
    errors.push(
      await errorOf(() => createPineconeStore({ ...base, indexName: 'other', dimension: 9 }).count()),
    );
    // Nothing listening.
    const nowhere = createPineconeStore({
      ...base,
      host: `http://127.0.0.1:${await unusedPort()}`,
      metric: 'cosine',
      dimension: 3,
    });
    errors.push(await errorOf(() => nowhere.add([{ id: 'q', text: 'q' }], { embeddings: [[1, 1, 1]] })));
    // The key from the environment, as most users give it.
    const saved = process.env.PINECONE_API_KEY;
    process.env.PINECONE_API_KEY = FAKE_KEY;
    try {
      const fromEnv = createPineconeStore({
        controllerHostUrl: server.url,
        indexName: 'secrets',
        logger: console,
        retry: base.retry,
      });
      server.addFault({ operations: ['query'], count: 3, fault: { type: 'status', status: 502 } });
      errors.push(await errorOf(() => fromEnv.search([1, 0, 0], { topK: 1 })));
      expect(inspect(fromEnv, { depth: null, showHidden: true })).not.toContain(FAKE_KEY);
    } finally {
      if (saved === undefined) delete process.env.PINECONE_API_KEY;
      else process.env.PINECONE_API_KEY = saved;
    }

    // The key really was sent, and the paths above really logged and failed.
    expect(server.requests.filter((request) => request.authorized).length).toBeGreaterThan(10);
    expect(errors).toHaveLength(13);
    expect(captured.some((line) => /attempt 1 of 3 failed \(429 Too Many Requests\)/.test(line))).toBe(true);
    expect(captured.some((line) => line.includes('>>> Request'))).toBe(true); // the client's PINECONE_DEBUG log

    for (const error of errors) {
      expect(error).toBeInstanceOf(Error);
      expect(everythingSaidBy(error)).not.toContain(FAKE_KEY);
    }
    for (const line of captured) expect(line).not.toContain(FAKE_KEY);
    expect(inspect(store, { depth: null, showHidden: true })).not.toContain(FAKE_KEY);
    expect(JSON.stringify(store)).not.toContain(FAKE_KEY);
  });

  it('is stripped from any backend message that would quote it', async () => {
    // A server that echoes the key back in its error (as a misconfigured proxy might).
    const { createServer } = await import('node:http');
    const echo = createServer((request, response) => {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ code: 3, message: `bad key ${String(request.headers['api-key'])}` }));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const port = (echo.address() as { port: number }).port;
    try {
      const store = createPineconeStore({
        apiKey: FAKE_KEY,
        host: `http://127.0.0.1:${port}`,
        metric: 'cosine',
        dimension: 2,
        retry: { maxRetries: 0 },
      });
      const error = await errorOf(() => store.search([1, 0], { topK: 1 }));
      expect((error as Error).message).toMatch(/bad key \[redacted\]/);
      expect(everythingSaidBy(error)).not.toContain(FAKE_KEY);
    } finally {
      await new Promise<void>((resolve) => echo.close(() => resolve()));
    }
  });
});
