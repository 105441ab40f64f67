import { Pinecone } from '@pinecone-database/pinecone';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackPinecone, startLoopbackPinecone } from './loopback-pinecone.js';

// The loopback server speaks Pinecone's wire protocol to the real client, with Pinecone's
// documented semantics. These tests drive it through the client only, as the store does.

const apiKey = 'loopback-server-test-key';
let server: LoopbackPinecone;
let client: Pinecone;

beforeAll(async () => {
  server = await startLoopbackPinecone({
    apiKey,
    indexes: [
      { name: 'cos', dimension: 3, metric: 'cosine' },
      { name: 'dot', dimension: 3, metric: 'dotproduct' },
      { name: 'l2', dimension: 3, metric: 'euclidean' },
    ],
  });
  client = new Pinecone({ apiKey, controllerHostUrl: server.url, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
});

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('loopback Pinecone', () => {
  it('describes an index with its host, metric and dimension; 404 for an unknown one', async () => {
    const description = await client.describeIndex('l2');
    expect(description).toMatchObject({
      name: 'l2',
      dimension: 3,
      metric: 'euclidean',
      host: server.hostOf('l2'),
    });
    expect(description.status?.ready).toBe(true);
    const error = await rejection(client.describeIndex('missing'));
    expect(error.name).toBe('PineconeNotFoundError');
  });

  it('scores by metric: cosine similarity, dot product, squared Euclidean distance (nearest first)', async () => {
    const vectors = {
      a: [1, 0, 0],
      b: [1, 1, 0],
      c: [0, 0, 2],
    };
    const records = Object.entries(vectors).map(([id, values]) => ({ id, values }));
    const scores: Record<string, Record<string, number>> = {};
    for (const name of ['cos', 'dot', 'l2']) {
      const index = client.index({ name, namespace: 'scores' });
      await index.upsert({ records });
      const { matches } = await index.query({ vector: [1, 0, 0], topK: 3 });
      scores[name] = Object.fromEntries(matches.map((match) => [match.id, match.score!]));
      if (name === 'l2') expect(matches.map((match) => match.id)).toEqual(['a', 'b', 'c']);
    }
    expect(scores.cos!.a).toBeCloseTo(1, 6);
    expect(scores.cos!.b).toBeCloseTo(Math.SQRT1_2, 6);
    expect(scores.cos!.c).toBeCloseTo(0, 6);
    expect(scores.dot).toEqual({ a: 1, b: 1, c: 0 });
    expect(scores.l2).toEqual({ a: 0, b: 1, c: 5 });
  });

  it('keeps namespaces apart and reports them in the stats (the default one as __default__)', async () => {
    const index = client.index({ name: 'cos' });
    await index.upsert({ records: [{ id: 'x', values: [1, 2, 3] }] });
    await index.upsert({
      records: [
        { id: 'x', values: [3, 2, 1] },
        { id: 'y', values: [1, 1, 1] },
      ],
      namespace: 'n1',
    });
    const stats = await index.describeIndexStats();
    expect(stats.namespaces).toMatchObject({ __default__: { recordCount: 1 }, n1: { recordCount: 2 } });
    const fetched = await index.fetch({ ids: ['x', 'y'], namespace: 'n1' });
    expect(Object.keys(fetched.records).sort()).toEqual(['x', 'y']);
    expect(fetched.records.x!.values).toEqual([3, 2, 1]);
    await index.deleteAll({ namespace: 'n1' });
    expect((await index.describeIndexStats()).namespaces?.n1).toBeUndefined();
    await index.deleteMany({ ids: ['x'] });
  });

  it("filters with Pinecone's semantics, and deletes by filter", async () => {
    const index = client.index({ name: 'dot', namespace: 'filters' });
    await index.upsert({
      records: [
        { id: 'r1', values: [1, 0, 0], metadata: { genre: 'drama', year: 2020, tags: ['a', 'b'] } },
        { id: 'r2', values: [1, 0, 0], metadata: { genre: 'comedy', year: 2021 } },
        { id: 'r3', values: [1, 0, 0], metadata: { year: 2022 } },
      ],
    });
    const ids = async (filter: object) =>
      (await index.query({ vector: [1, 0, 0], topK: 10, filter, includeMetadata: true })).matches
        .map((match) => match.id)
        .sort();
    expect(await ids({ genre: 'drama' })).toEqual(['r1']);
    expect(await ids({ year: { $gte: 2021 } })).toEqual(['r2', 'r3']);
    // $ne does not match a record without the field (Pinecone since 2024).
    expect(await ids({ genre: { $ne: 'drama' } })).toEqual(['r2']);
    expect(await ids({ tags: { $in: ['b'] } })).toEqual(['r1']);
    expect(await ids({ $or: [{ genre: 'comedy' }, { genre: { $exists: false } }] })).toEqual(['r2', 'r3']);
    const malformed = await rejection(ids({ year: { $in: [true] } }));
    expect(malformed.name).toBe('PineconeBadRequestError');
    await index.deleteMany({ filter: { year: { $lt: 2022 } } });
    expect(await ids({ year: { $exists: true } })).toEqual(['r3']);
  });

  it('refuses what Pinecone refuses: wrong dimension, zero vectors, null or oversized metadata, top_k', async () => {
    const index = client.index({ name: 'cos', namespace: 'limits' });
    const cases: Array<[string, Promise<unknown>, RegExp]> = [
      ['dimension', index.upsert({ records: [{ id: 'a', values: [1, 2] }] }), /dimension 2 does not match/],
      ['zeros', index.upsert({ records: [{ id: 'z', values: [0, 0, 0] }] }), /at least one non-zero value/],
      [
        'null metadata',
        index.upsert({
          records: [{ id: 'n', values: [1, 1, 1], metadata: { a: null as unknown as string } }],
        }),
        /Metadata value must be/,
      ],
      [
        'metadata size',
        index.upsert({ records: [{ id: 'big', values: [1, 1, 1], metadata: { text: 'x'.repeat(41_000) } }] }),
        /exceeds the limit of 40960 bytes/,
      ],
      [
        'batch size',
        index.upsert({
          records: Array.from({ length: 1001 }, (_, i) => ({ id: `v${i}`, values: [1, 1, 1] })),
        }),
        /max batch size of 1000/,
      ],
      ['top_k', index.query({ vector: [1, 1, 1], topK: 10_001 }), /topK must be an integer from 1 to 10000/],
    ];
    for (const [label, call, message] of cases) {
      const error = await rejection(call);
      expect(error.name, label).toBe('PineconeBadRequestError');
      expect(error.message, label).toMatch(message);
    }
    // A request over 2 MB is refused whole.
    const values = Array.from({ length: 3 }, () => 0.123456789);
    const large = Array.from({ length: 60 }, (_, i) => ({
      id: `big-${i}`,
      values,
      metadata: { text: 'y'.repeat(39_000) },
    }));
    const tooLarge = await rejection(index.upsert({ records: large }));
    expect(tooLarge.message).toMatch(/exceeds the maximum supported size of 2000000 bytes/);
    expect(server.records('cos', 'limits').size).toBe(0);
  });

  it('lists ids by prefix in byte order, a page at a time, with pagination tokens', async () => {
    const index = client.index({ name: 'cos', namespace: 'listing' });
    // Byte order (UTF-8), not UTF-16 order: '\uffff' sorts before '😀' in bytes, after it in code units.
    const ids = ['doc2#1', 'doc1#2', 'doc1#10', 'doc1#1', 'other', 'doc1#\uffff', 'doc1#😀', 'Doc1#0'];
    await index.upsert({ records: ids.map((id) => ({ id, values: [1, 2, 3] })) });
    const pages: string[][] = [];
    let token: string | undefined;
    do {
      const page = await index.listPaginated({
        prefix: 'doc1#',
        limit: 2,
        ...(token ? { paginationToken: token } : {}),
      });
      pages.push((page.vectors ?? []).map((item) => item.id!));
      token = page.pagination?.next;
    } while (token !== undefined);
    expect(pages).toEqual([['doc1#1', 'doc1#10'], ['doc1#2', 'doc1#\uffff'], ['doc1#😀']]);
    // No prefix: the whole namespace, 100 a page by default; another namespace is empty.
    const all = await index.listPaginated();
    expect(all.vectors?.map((item) => item.id)).toEqual(
      [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    );
    expect(all.pagination).toBeUndefined();
    expect((await client.index({ name: 'cos', namespace: 'empty' }).listPaginated()).vectors).toEqual([]);
    const badToken = await rejection(index.listPaginated({ paginationToken: 'not-a-token' }));
    expect(badToken.name).toBe('PineconeBadRequestError');
    expect(server.requests.at(-1)).toMatchObject({ operation: 'list', status: 400 });
  });

  it('stores sparse-dense records and scores a hybrid query by the summed dot product (dotproduct only)', async () => {
    const index = client.index({ name: 'dot', namespace: 'hybrid' });
    await index.upsert({
      records: [
        // Indices out of order on the wire are stored ascending.
        {
          id: 'a',
          values: [1, 0, 0],
          sparseValues: { indices: [7, 3], values: [2, 1] },
          metadata: { kind: 'x' },
        },
        { id: 'b', values: [0, 1, 0], sparseValues: { indices: [3, 4_000_000_000], values: [5, 1] } },
        { id: 'c', values: [0, 0, 1] },
      ],
    });
    const fetched = await index.fetch({ ids: ['a', 'c'] });
    expect(fetched.records.a!.sparseValues).toEqual({ indices: [3, 7], values: [1, 2] });
    expect(fetched.records.c!.sparseValues).toBeUndefined();

    const sparseVector = { indices: [3, 7, 4_000_000_000], values: [1, 0.5, 2] };
    const hybrid = await index.query({ vector: [1, 1, 0], sparseVector, topK: 3, includeValues: true });
    // a: 1 + (1·1 + 2·0.5) = 3; b: 1 + (5·1 + 1·2) = 8; c: 0 + 0.
    expect(hybrid.matches.map(({ id, score }) => [id, score])).toEqual([
      ['b', 8],
      ['a', 3],
      ['c', 0],
    ]);
    expect(hybrid.matches[0]!.sparseValues).toEqual({ indices: [3, 4_000_000_000], values: [5, 1] });
    // A zero dense vector ranks by the sparse part alone (Pinecone's alpha = 0); filters apply.
    const sparseOnly = await index.query({ vector: [0, 0, 0], sparseVector, topK: 3, filter: { kind: 'x' } });
    expect(sparseOnly.matches.map(({ id, score }) => [id, score])).toEqual([['a', 2]]);

    // update replaces the sparse values of one record and leaves the rest.
    await index.update({ id: 'c', sparseValues: { indices: [7], values: [10] } });
    await index.update({ id: 'missing', sparseValues: { indices: [7], values: [10] } });
    expect(server.records('dot', 'hybrid').get('c')).toMatchObject({
      values: [0, 0, 1],
      sparseValues: { indices: [7], values: [10] },
    });
    const updated = await index.query({ vector: [0, 0, 0], sparseVector, topK: 1 });
    expect(updated.matches.map(({ id, score }) => [id, score])).toEqual([['b', 7]]);
    expect(server.records('dot', 'hybrid').has('missing')).toBe(false);
  });

  it('refuses sparse queries where Pinecone does: other metrics, no dense vector, malformed sparse values', async () => {
    // Other metrics store and fetch sparse values, but cannot query with them.
    const cosine = client.index({ name: 'cos', namespace: 'sparse' });
    await cosine.upsert({
      records: [{ id: 'a', values: [1, 0, 0], sparseValues: { indices: [1], values: [1] } }],
    });
    expect((await cosine.fetch({ ids: ['a'] })).records.a!.sparseValues).toEqual({
      indices: [1],
      values: [1],
    });
    const wrongMetric = await rejection(
      cosine.query({ vector: [1, 0, 0], sparseVector: { indices: [1], values: [1] }, topK: 1 }),
    );
    expect(wrongMetric.name).toBe('PineconeBadRequestError');
    expect(wrongMetric.message).toMatch(/Index configuration does not support sparse values/);

    const dot = client.index({ name: 'dot', namespace: 'sparse-limits' });
    const sparseOnly = await rejection(
      dot.query({ sparseVector: { indices: [1], values: [1] }, topK: 1 } as unknown as Parameters<
        typeof dot.query
      >[0]),
    );
    expect(sparseOnly.message).toMatch(/needs a dense query vector/);
    const tooMany = Array.from({ length: 1001 }, (_, i) => i);
    const cases: Array<[string, { indices: number[]; values: number[] }, RegExp]> = [
      ['lengths', { indices: [1, 2], values: [1] }, /2 indices but 1 values/],
      ['duplicates', { indices: [4, 4], values: [1, 2] }, /sparse index 4 appears twice/],
      ['negative', { indices: [-1], values: [1] }, /not a uint32/],
      ['too large', { indices: [2 ** 32], values: [1] }, /not a uint32/],
      [
        'non-zeros',
        { indices: tooMany, values: tooMany },
        /1001 non-zero values, more than the limit of 1000/,
      ],
    ];
    for (const [label, sparseValues, message] of cases) {
      const error = await rejection(
        dot.upsert({ records: [{ id: 'bad', values: [1, 0, 0], sparseValues }] }),
      );
      expect(error.name, label).toBe('PineconeBadRequestError');
      expect(error.message, label).toMatch(message);
    }
    expect(server.records('dot', 'sparse-limits').size).toBe(0);
  });

  it('answers a wrong API key with 401, and records the API-version header', async () => {
    const intruder = new Pinecone({ apiKey: 'not-the-key', controllerHostUrl: server.url, maxRetries: 0 });
    const error = await rejection(intruder.index({ host: server.hostOf('cos') }).describeIndexStats());
    expect(error.name).toBe('PineconeAuthorizationError');
    const last = server.requests.at(-1)!;
    expect(last).toMatchObject({ status: 401, authorized: false, operation: 'describe_index_stats' });
    expect(last.apiVersion).toMatch(/^\d{4}-\d{2}$/);
  });

  it('injects faults: statuses with Retry-After, lost responses, drops, delays, by count or probability', async () => {
    const index = client.index({ name: 'dot', namespace: 'faults' });
    server.addFault({
      operations: ['upsert'],
      count: 1,
      fault: { type: 'status', status: 429, retryAfter: 3 },
    });
    const limited = await rejection(index.upsert({ records: [{ id: 'a', values: [1, 0, 0] }] }));
    expect(limited.message).toMatch(/Status: 429/);
    expect(server.records('dot', 'faults').size).toBe(0);

    // The write took effect, the answer says it did not.
    server.addFault({
      operations: ['upsert'],
      count: 1,
      fault: { type: 'status', status: 500, afterApplying: true },
    });
    await rejection(index.upsert({ records: [{ id: 'b', values: [1, 0, 0] }] }));
    expect([...server.records('dot', 'faults').keys()]).toEqual(['b']);

    server.addFault({ operations: ['describe_index_stats'], count: 1, fault: { type: 'drop' } });
    const dropped = await rejection(index.describeIndexStats());
    expect(dropped.name).toBe('PineconeConnectionError');

    server.addFault({ operations: ['describe_index_stats'], count: 1, fault: { type: 'delay', ms: 150 } });
    const started = performance.now();
    await index.describeIndexStats();
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);

    server.addFault({ operations: ['fetch'], probability: 0.5, fault: { type: 'status', status: 503 } });
    let failures = 0;
    for (let i = 0; i < 40; i++) {
      try {
        await index.fetch({ ids: ['b'] });
      } catch {
        failures++;
      }
    }
    server.clearFaults();
    expect(failures).toBeGreaterThan(8);
    expect(failures).toBeLessThan(32);
    await index.fetch({ ids: ['b'] });
  });
});
