import { Pinecone } from '@pinecone-database/pinecone';
import {
  BatchWriteError,
  type Chunk,
  ChunkValidationError,
  FilterError,
  HashEmbedder,
  InvalidArgumentError,
  type NativeFilter,
  nativeFilter,
  resolveFilter,
  VectorRetriever,
} from '@zerda/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PineconeFilter, pineconeFilterConvention } from './pinecone-filter.js';
import { packUpsertBatches, pineconeLimits, recordBytes, upsertEnvelopeBytes } from './pinecone-records.js';
import { createPineconeStore } from './pinecone-store.js';
import { HINTS_KEY } from './record-codec.js';
import { type LoopbackPinecone, startLoopbackPinecone } from './test-utils/loopback-pinecone.js';
import { connectedLoopbackStore, fastRetry, loopbackStore } from './test-utils/store-factory.js';
import { createMapTextStore } from './text-store.js';

const apiKey = 'pcsk_store-test-key-000';
let server: LoopbackPinecone;

beforeAll(async () => {
  server = await startLoopbackPinecone({ apiKey });
});
afterAll(async () => {
  await server.close();
});

function unit(dimension: number, seed: number): number[] {
  const values = Array.from({ length: dimension }, (_, i) => Math.sin(seed * 7.1 + i * 1.3) + 0.01);
  const norm = Math.hypot(...values);
  return values.map((value) => value / norm);
}

function requestsTo(indexName: string) {
  return server.requests.filter((request) => request.path.includes(`/${indexName}`));
}

describe('connecting', () => {
  it('describes the index by name, takes its metric and dimension, and then talks to its host', async () => {
    const { store, indexName } = loopbackStore(server, { apiKey, dimension: 5, metric: 'l2' });
    expect(store.capabilities.metric).toBe('cosine'); // Pinecone's default, until opened
    expect(store.dimension).toBeUndefined();
    await store.driver.open();
    expect(store.capabilities).toMatchObject({
      metric: 'l2',
      persistent: true,
      deletion: true,
      listing: true,
      maxBatchSize: 100,
      maxIdsPerCall: 1000,
      maxConcurrentWrites: 4,
    });
    expect(store.capabilities.scoreConversion).toBe('squared-euclidean-distance');
    expect(store.dimension).toBe(5);
    expect(requestsTo(indexName).map((request) => request.operation)).toEqual(['describe_index']);
    expect(await store.count()).toBe(0);
  });

  it('refuses a metric or a dimension that contradicts the index', async () => {
    const wrongMetric = loopbackStore(server, { apiKey, dimension: 4, metric: 'cosine' });
    const store = createPineconeStore({
      apiKey,
      controllerHostUrl: server.url,
      indexName: wrongMetric.indexName,
      metric: 'dotproduct',
    });
    const error = await store.count().catch((caught: unknown) => caught);
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/uses the cosine metric; set metric: 'cosine'/);

    const wrongDimension = createPineconeStore({
      apiKey,
      controllerHostUrl: server.url,
      indexName: wrongMetric.indexName,
      embedder: new HashEmbedder({ dimension: 16 }),
    });
    await expect(wrongDimension.driver.open()).rejects.toThrow(
      /the index has dimension 4, the store's embedder produces 16/,
    );
  });

  it('with a host and a metric, makes no control-plane call (dimension from the index stats)', async () => {
    server.createIndex({ name: 'host-only', dimension: 3, metric: 'dotproduct' });
    const store = createPineconeStore({ apiKey, host: server.hostOf('host-only'), metric: 'dot' });
    await store.add([{ id: 'a', text: 'A' }], { embeddings: [[1, 2, 3]] });
    const { hits } = await store.search([1, 0, 0], { topK: 1 });
    expect(hits[0]).toMatchObject({ chunk: { id: 'a', text: 'A' }, score: 1 });
    expect(store.dimension).toBe(3);
    expect(requestsTo('host-only').map((request) => request.operation)).toEqual([
      'describe_index_stats',
      'upsert',
      'query',
    ]);
  });

  it('shares an injected client or index handle (the handle keeps its namespace)', async () => {
    server.createIndex({ name: 'shared', dimension: 3, metric: 'cosine' });
    const client = new Pinecone({ apiKey, controllerHostUrl: server.url });
    const viaClient = createPineconeStore({ client, indexName: 'shared', namespace: 'one' });
    await viaClient.add([{ id: 'c', text: 'from the client' }], { embeddings: [[1, 0, 0]] });

    const handle = client.index({ host: server.hostOf('shared'), namespace: 'one' });
    const viaHandle = createPineconeStore({ index: handle, dimension: 3 });
    expect(viaHandle.driver.namespace).toBe('one');
    expect(await viaHandle.count()).toBe(1);
    expect((await viaHandle.search([1, 0, 0], { topK: 1 })).hits[0]!.chunk.text).toBe('from the client');
  });

  it('reads PINECONE_API_KEY only when first needed, and says so when it is missing', async () => {
    const saved = process.env.PINECONE_API_KEY;
    delete process.env.PINECONE_API_KEY;
    try {
      server.createIndex({ name: 'env-key', dimension: 2 });
      const store = createPineconeStore({ indexName: 'env-key', controllerHostUrl: server.url });
      const missing = await store.count().catch((caught: unknown) => caught);
      expect(InvalidArgumentError.isInstance(missing)).toBe(true);
      expect((missing as Error).message).toMatch(/PINECONE_API_KEY is not set/);
      process.env.PINECONE_API_KEY = apiKey;
      expect(await store.count()).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.PINECONE_API_KEY;
      else process.env.PINECONE_API_KEY = saved;
    }
  });

  it('needs an index name, a host or a handle', () => {
    const saved = process.env.PINECONE_INDEX;
    delete process.env.PINECONE_INDEX;
    try {
      expect(() => createPineconeStore({ apiKey })).toThrow(/give indexName, host or an index handle/);
    } finally {
      if (saved !== undefined) process.env.PINECONE_INDEX = saved;
    }
    expect(() => createPineconeStore({ apiKey, indexName: 'x', maxBatchSize: 1001 })).toThrow(/maxBatchSize/);
    expect(() => createPineconeStore({ apiKey, indexName: 'x', maxConcurrentWrites: 0 })).toThrow(
      /maxConcurrentWrites/,
    );
    expect(() => createPineconeStore({ apiKey, indexName: 'x', timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => createPineconeStore({ apiKey, indexName: 'x', maxRequestBytes: 3_000_000 })).toThrow(
      /maxRequestBytes/,
    );
  });
});

describe('namespaces', () => {
  it('keeps namespaces apart: writes, searches, deletes and counts see only their own', async () => {
    server.createIndex({ name: 'spaces', dimension: 4, metric: 'cosine' });
    const make = (namespace?: string) =>
      createPineconeStore({
        apiKey,
        controllerHostUrl: server.url,
        indexName: 'spaces',
        retry: fastRetry,
        ...(namespace === undefined ? {} : { namespace }),
      });
    const base = make();
    const left = make('left');
    const right = make('right');
    await base.add([{ id: 'same', text: 'default' }], { embeddings: [unit(4, 1)] });
    await left.add(
      [
        { id: 'same', text: 'left' },
        { id: 'l2', text: 'left two' },
      ],
      { embeddings: [unit(4, 1), unit(4, 2)] },
    );
    await right.add([{ id: 'same', text: 'right' }], { embeddings: [unit(4, 1)] });
    expect([await base.count(), await left.count(), await right.count()]).toEqual([1, 2, 1]);
    expect((await right.search(unit(4, 1), { topK: 5 })).hits.map((hit) => hit.chunk.text)).toEqual([
      'right',
    ]);
    expect(await left.delete(['same', 'l2'])).toBe(2);
    expect([await base.count(), await left.count(), await right.count()]).toEqual([1, 0, 1]);
    expect([...server.records('spaces', '').keys()]).toEqual(['same']);
  });
});

describe('records', () => {
  it('stores text and docId in metadata where filters see them (docIdKey of the convention)', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
      docIdKey: 'document_id',
      textKey: 'body',
    });
    const chunks: Chunk[] = [
      { id: 'a', text: 'alpha', docId: 'd1', metadata: { lang: 'en' } },
      { id: 'b', text: 'beta', metadata: { docId: 'd2', lang: 'fr' } },
      { id: 'c', text: 'gamma', docId: 'd3', metadata: { docId: 'other' } },
    ];
    await store.add(chunks, { embeddings: [unit(3, 1), unit(3, 2), unit(3, 3)] });
    const stored = server.records(indexName);
    expect(stored.get('a')!.metadata).toEqual({ lang: 'en', body: 'alpha', document_id: 'd1' });
    expect(stored.get('b')!.metadata).toEqual({
      docId: 'd2',
      lang: 'fr',
      body: 'beta',
      document_id: 'd2',
      [HINTS_KEY]: '{"docIdFrom":"metadata"}',
    });
    const resolved = resolveFilter(store, { docId: { $in: ['d2', 'd3'] } });
    expect(resolved.native?.convention).toBe('pinecone');
    expect(resolved.native?.filter).toEqual({ document_id: { $in: ['d2', 'd3'] } });
    // resolveFilter's result is typed NativeFilter<unknown>, the store's option NativeFilter<PineconeFilter>.
    const native = resolved.native as NativeFilter<PineconeFilter>;
    const { hits } = await store.search(unit(3, 2), { topK: 3, nativeFilter: native });
    expect(hits.map((hit) => hit.chunk).sort((x, y) => x.id.localeCompare(y.id))).toEqual(chunks.slice(1));
  });

  it('refuses, naming the chunk, metadata fields that collide with the keys it uses', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
    });
    const error = await store
      .add(
        [
          { id: 'fine', text: 'fine' },
          { id: 'clash', text: 'x', metadata: { text: 'also text' } },
          { id: 'hint', text: 'y', metadata: { [HINTS_KEY]: 'mine' } },
        ],
        { embeddings: [unit(3, 1), unit(3, 2), unit(3, 3)] },
      )
      .catch((caught: unknown) => caught);
    expect(ChunkValidationError.isInstance(error)).toBe(true);
    expect((error as ChunkValidationError).problems.map((problem) => problem.id)).toEqual(['clash', 'hint']);
    expect((error as Error).message).toMatch(/metadata field 'text' is where the store keeps the chunk text/);
    expect(requestsTo(indexName).some((request) => request.operation === 'upsert')).toBe(false);
  });

  it("checks Pinecone's 40 KB of metadata per record before writing, naming the chunk", async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
    });
    const long = 'é'.repeat(20_500); // 41,000 bytes of UTF-8 in 20,500 characters
    const error = await store
      .add(
        [
          { id: 'short', text: 'short' },
          { id: 'long', text: long, metadata: { title: 'a long one' } },
        ],
        { embeddings: [unit(3, 1), unit(3, 2)] },
      )
      .catch((caught: unknown) => caught);
    expect(ChunkValidationError.isInstance(error), String(error)).toBe(true);
    const problems = (error as ChunkValidationError).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ index: 1, id: 'long' });
    expect(problems[0]!.reason).toMatch(
      /would be 41\d{3} bytes \(the text 41000 of them\); Pinecone allows 40960/,
    );
    expect(problems[0]!.reason).toMatch(/textStore/);
    expect(requestsTo(indexName).some((request) => request.operation === 'upsert')).toBe(false);
  });

  it('keeps texts in a TextStore when asked: long texts fit, metadata holds no text', async () => {
    const texts = createMapTextStore();
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
      textStore: texts,
    });
    const long = 'word '.repeat(30_000);
    await store.add(
      [
        { id: 'long', text: long, metadata: { kind: 'book' } },
        { id: 'short', text: 'short' },
      ],
      { embeddings: [unit(3, 1), unit(3, 2)] },
    );
    expect(server.records(indexName).get('long')!.metadata).toEqual({ kind: 'book' });
    const { hits } = await store.search(unit(3, 1), { topK: 2 });
    expect(hits[0]!.chunk).toEqual({ id: 'long', text: long, metadata: { kind: 'book' } });
    expect(await store.delete(['long'])).toBe(1);
    expect(texts.size).toBe(1);
  });

  it('reads records written by other tools: missing text is reported, not invented', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
    });
    const client = new Pinecone({ apiKey, controllerHostUrl: server.url });
    await client.index({ host: server.hostOf(indexName) }).upsert({
      records: [{ id: 'foreign', values: [1, 0, 0], metadata: { docId: 'd9', source: 'elsewhere' } }],
    });
    const result = await store.search([1, 0, 0], { topK: 1 });
    expect(result.hits[0]!.chunk).toEqual({
      id: 'foreign',
      text: '',
      docId: 'd9',
      metadata: { source: 'elsewhere' },
    });
    expect(result.warnings?.[0]).toMatchObject({ type: 'compatibility', source: 'pinecone' });
  });
});

describe('scores', () => {
  it("converts each metric's score: cosine and dot as returned, euclidean 1/(1+√s) of the squared distance", async () => {
    const expected = { cosine: [1, 0.6], dot: [25, 15], l2: [1, 1 / (1 + Math.sqrt(20))] } as const;
    for (const metric of ['cosine', 'dot', 'l2'] as const) {
      const { store } = await connectedLoopbackStore(server, { apiKey, dimension: 2, metric });
      await store.add(
        [
          { id: 'same', text: 'same' },
          { id: 'other', text: 'other' },
        ],
        {
          embeddings: [
            [3, 4],
            [5, 0],
          ],
        },
      );
      const { hits } = await store.search([3, 4], { topK: 2 });
      expect(hits.map((hit) => hit.chunk.id)).toEqual(['same', 'other']);
      hits.forEach((hit, index) => {
        expect(hit.score).toBeCloseTo(expected[metric][index]!, 6);
      });
    }
  });

  it('lowers a topK above 10,000 to Pinecone’s limit, with a warning', async () => {
    const { store } = await connectedLoopbackStore(server, { apiKey, dimension: 2, metric: 'cosine' });
    await store.add([{ id: 'a', text: 'a' }], { embeddings: [[1, 1]] });
    const result = await store.search([1, 1], { topK: 50_000 });
    expect(result.hits).toHaveLength(1);
    expect(result.warnings?.[0]?.message).toMatch(/at most 10000 matches/);
  });

  it('works under VectorRetriever with a pushed-down filter and a residual on ids', async () => {
    const { store } = await connectedLoopbackStore(server, { apiKey, dimension: 8, metric: 'cosine' });
    const embedder = new HashEmbedder({ dimension: 8 });
    const texts = ['red apples', 'green apples', 'red cars', 'blue cars', 'red roses'];
    await store.add(
      texts.map((text, i) => ({ id: `t${i}`, text, metadata: { colour: text.split(' ')[0]!, i } })),
      { embeddings: await embedder.embed(texts) },
    );
    const retriever = new VectorRetriever({ store, embedder });
    const result = await retriever.retrieve('red', { k: 5, filter: { colour: 'red', id: { $ne: 't2' } } });
    expect(result.hits.map((hit) => hit.chunk.id).sort()).toEqual(['t0', 't4']);
  });
});

describe('request limits', () => {
  it('packs requests to the byte: the size it counts is the size the client sends', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 4,
      metric: 'cosine',
      namespace: 'bytes',
      maxBatchSize: 1000,
      maxRequestBytes: 5_000,
    });
    const chunks = Array.from({ length: 40 }, (_, i) => ({
      id: `id-${i}`,
      text: `text ${'z'.repeat(i * 3)}`,
    }));
    const vectors = chunks.map((_, i) => unit(4, i));
    await store.add(chunks, { embeddings: vectors });
    const upserts = requestsTo(indexName).filter((request) => request.operation === 'upsert');
    // The vectors go as float32, as core hands them to the driver.
    const records = chunks.map((chunk, i) => ({
      id: chunk.id,
      values: vectors[i]!.map(Math.fround),
      metadata: { text: chunk.text },
    }));
    const planned = packUpsertBatches(records.map(recordBytes), {
      maxRecords: 1000,
      maxBytes: 5_000,
      envelopeBytes: upsertEnvelopeBytes('bytes'),
    });
    expect(upserts.map((request) => request.bytes)).toEqual(planned.map((batch) => batch.bytes));
    expect(Math.max(...upserts.map((request) => request.bytes))).toBeLessThanOrEqual(5_000);
    expect(upserts.length).toBeGreaterThan(1);
  });

  it('splits a write that one request could not carry: never sent whole, never refused', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 64,
      metric: 'cosine',
      maxBatchSize: 1000,
      maxConcurrentWrites: 3,
    });
    // 300 records of about 38 KB: about 11 MB, far over one 2 MB request, each record under 40 KB of metadata.
    const chunks = Array.from({ length: 300 }, (_, i) => ({
      id: `doc-${i}`,
      text: `${i} ${'lorem ipsum '.repeat(3_150)}`,
    }));
    const vectors = chunks.map((_, i) => unit(64, i));
    await store.add(chunks, { embeddings: vectors });
    const upserts = requestsTo(indexName).filter((request) => request.operation === 'upsert');
    expect(upserts.length).toBeGreaterThanOrEqual(6);
    for (const request of upserts) {
      expect(request.status).toBe(200);
      expect(request.bytes).toBeLessThanOrEqual(pineconeLimits.maxRequestBytes);
      expect(request.records).toBeLessThanOrEqual(pineconeLimits.maxRecordsPerUpsert);
    }
    expect(upserts.reduce((sum, request) => sum + request.records!, 0)).toBe(300);
    expect(server.records(indexName).size).toBe(300);
  });

  it('splits by record count too (1,000 a request at most)', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 2,
      metric: 'dot',
      maxBatchSize: 1000,
    });
    const chunks = Array.from({ length: 2_500 }, (_, i) => ({ id: `n${i}`, text: '' }));
    await store.add(chunks, { embeddings: chunks.map((_, i) => [1, i]) });
    const upserts = requestsTo(indexName).filter((request) => request.operation === 'upsert');
    expect(upserts.map((request) => request.records)).toEqual([1000, 1000, 500]);
    // Deletes and fetches go 1,000 ids a request at most too.
    expect(await store.delete(chunks.map((chunk) => chunk.id))).toBe(2_500);
    const deletes = requestsTo(indexName).filter((request) => request.operation === 'delete');
    expect(deletes).toHaveLength(3);
    expect(await store.count()).toBe(0);
  });

  it('refuses a zero vector (Pinecone does), and ids over 512 characters, before writing', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, { apiKey, dimension: 3, metric: 'l2' });
    const error = await store
      .add(
        [
          { id: 'zero', text: 'z' },
          { id: 'x'.repeat(513), text: 'long id' },
        ],
        {
          embeddings: [
            [0, 0, 0],
            [1, 0, 0],
          ],
        },
      )
      .catch((caught: unknown) => caught);
    expect(ChunkValidationError.isInstance(error)).toBe(true);
    expect((error as ChunkValidationError).problems.map((problem) => problem.reason)).toEqual([
      expect.stringMatching(/all zeros; Pinecone refuses/),
      expect.stringMatching(/513 characters; Pinecone allows 512/),
    ]);
    expect(requestsTo(indexName).some((request) => request.operation === 'upsert')).toBe(false);
  });
});

describe('opening', () => {
  it('store.driver.open() reads the index’s metric and dimension before the first operation, once', async () => {
    server.createIndex({ name: 'connected', dimension: 2, metric: 'euclidean' });
    const store = createPineconeStore({
      apiKey,
      controllerHostUrl: server.url,
      indexName: 'connected',
    });
    await Promise.all([store.driver.open(), store.driver.open()]);
    expect(await store.count()).toBe(0);
    expect(requestsTo('connected').map((request) => request.operation)).toEqual([
      'describe_index',
      'describe_index_stats',
    ]);
    expect(store.capabilities.metric).toBe('l2');
    expect(store.dimension).toBe(2);
  });
});

describe('reading back', () => {
  const chunksOf = (count: number): Chunk[] =>
    Array.from({ length: count }, (_, i) => ({
      id: `r-${String(i).padStart(3, '0')}`,
      text: `text ${i}`,
      ...(i % 3 === 0 ? { docId: `d${i % 5}` } : {}),
      metadata: { i, tags: [`t${i % 4}`] },
    }));

  it('get fetches chunks by id (unknown ids left out, the order of the ids kept)', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
    });
    const chunks = chunksOf(5);
    await store.add(chunks, { embeddings: chunks.map((_, i) => unit(3, i)) });
    expect(await store.get(['r-003', 'missing', 'r-000'])).toEqual([chunks[3], chunks[0]]);
    expect(requestsTo(indexName).filter((request) => request.operation === 'fetch')).toHaveLength(1);
  });

  it("list goes through the whole namespace with Pinecone's list and fetch, a page at a time", async () => {
    const texts = createMapTextStore();
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 3,
      metric: 'cosine',
      namespace: 'listed',
      textStore: texts,
    });
    const chunks = chunksOf(250);
    await store.add(chunks, { embeddings: chunks.map((_, i) => unit(3, i)) });
    const pages: Chunk[][] = [];
    for await (const page of store.list({ pageSize: 70 })) pages.push(page);
    expect(pages.map((page) => page.length)).toEqual([70, 70, 70, 40]);
    expect(pages.flat()).toEqual(chunks); // ids in byte order, which is their order here
    // Pinecone's pages hold at most 100 ids, whatever the page size asked for.
    const large: Chunk[][] = [];
    for await (const page of store.list({ pageSize: 1000 })) large.push(page);
    expect(large.map((page) => page.length)).toEqual([100, 100, 50]);
    // With the stored vectors (as float32), from the same fetches.
    const listed: Array<{ id: string; vector: number[] }> = [];
    for await (const { chunks: page, vectors } of store.listRecords({ pageSize: 100 })) {
      listed.push(...page.map((chunk, i) => ({ id: chunk.id, vector: [...vectors![i]!] })));
    }
    expect(listed).toEqual(chunks.map((chunk, i) => ({ id: chunk.id, vector: unit(3, i).map(Math.fround) })));
    const lists = requestsTo(indexName).filter((request) => request.operation === 'list');
    expect(lists).toHaveLength(10);
  });

  it('a request refused part-way through one split batch names the ids written (BatchWriteError)', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 4,
      metric: 'cosine',
      maxBatchSize: 1000,
      maxRequestBytes: 2_000,
    });
    const chunks = Array.from({ length: 40 }, (_, i) => ({
      id: `s-${i}`,
      text: `text ${'z'.repeat(i * 3)}`,
    }));
    server.addFault({
      indexes: [indexName],
      operations: ['upsert'],
      skip: 2,
      count: 1,
      fault: { type: 'status', status: 400 },
    });
    const error = await store
      .add(chunks, { embeddings: chunks.map((_, i) => unit(4, i)) })
      .catch((caught: unknown) => caught);
    expect(BatchWriteError.isInstance(error), String(error)).toBe(true);
    const upserts = requestsTo(indexName).filter((request) => request.operation === 'upsert');
    expect(upserts.map((request) => request.status)).toEqual([200, 200, 400]); // and no request after the failure
    const written = upserts[0]!.records! + upserts[1]!.records!;
    expect((error as BatchWriteError).writtenIds).toEqual(chunks.slice(0, written).map((chunk) => chunk.id));
    expect((error as BatchWriteError).failedIds).toEqual(chunks.slice(written).map((chunk) => chunk.id));
    expect((error as BatchWriteError).retryable).toBe(false);
    expect([...server.records(indexName).keys()]).toEqual(chunks.slice(0, written).map((chunk) => chunk.id));
  });

  it('takes a native filter only in its own convention, checked before any request', async () => {
    const { store, indexName } = await connectedLoopbackStore(server, {
      apiKey,
      dimension: 2,
      metric: 'cosine',
    });
    await store.add(
      [
        { id: 'a', text: 'a', metadata: { n: 1 } },
        { id: 'b', text: 'b', metadata: { n: 2 } },
      ],
      {
        embeddings: [
          [1, 0],
          [0, 1],
        ],
      },
    );
    const own = nativeFilter(pineconeFilterConvention, { n: { $gte: 2 } });
    expect(
      (await store.search([1, 0], { topK: 2, nativeFilter: own })).hits.map((hit) => hit.chunk.id),
    ).toEqual(['b']);
    const before = requestsTo(indexName).length;
    for (const wrong of [
      nativeFilter('chroma', { n: { $gte: 2 } }),
      { n: { $gte: 2 } },
      nativeFilter(pineconeFilterConvention, { $not: { n: 1 } }),
    ]) {
      const error = await store
        .search([1, 0], { topK: 2, nativeFilter: wrong as typeof own })
        .catch((caught: unknown) => caught);
      expect(FilterError.isInstance(error), String(error)).toBe(true);
    }
    expect(requestsTo(indexName)).toHaveLength(before);
  });
});
