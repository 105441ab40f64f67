import type { Chunk } from '@zerda/core';
import type { DriverCallOptions, DriverQueryOptions, VectorDriver, VectorRecord } from '@zerda/core/backend';
import type { PineconeDriver } from '../pinecone-driver.js';
import type { PineconeFilter } from '../pinecone-filter.js';

/**
 * For live tests against one real index of a fixed dimension: a driver of a smaller dimension
 * over the Pinecone driver, padding every vector (stored and queried) with zeros, which leaves
 * cosine similarity, dot product and Euclidean distance unchanged. It also waits, after each
 * write, until the index stats count what was written (Pinecone is eventually consistent), so
 * that the conformance suite's read-after-write checks see the write. `createVectorStore` makes
 * it a store (the store's embedder then embeds at the smaller dimension). Sparse vectors (with the
 * inner driver's `sparse` setting) are kept as they are.
 */
export function paddedDriver(
  inner: PineconeDriver,
  dimension: number,
  options: { freshnessTimeoutMs?: number; pollMs?: number } = {},
): VectorDriver<PineconeFilter> & {
  delete: NonNullable<PineconeDriver['delete']>;
  list: NonNullable<PineconeDriver['list']>;
} {
  const ids = new Set<string>();
  const pad = (vector: Float32Array): Float32Array => {
    const target = inner.dimension;
    if (target === undefined || target === vector.length) return vector;
    const padded = new Float32Array(target);
    padded.set(vector);
    return padded;
  };
  const padAll = (records: readonly VectorRecord[]) =>
    records.map((record) => ({ ...record, vector: pad(record.vector) }));
  const settle = async (call: DriverCallOptions): Promise<void> => {
    const deadline = Date.now() + (options.freshnessTimeoutMs ?? 60_000);
    while ((await inner.count(call)) !== ids.size) {
      if (Date.now() > deadline) throw new Error('the index stats did not catch up with the writes in time');
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1_000));
    }
  };
  return {
    specificationVersion: 'v2',
    name: inner.name,
    get capabilities() {
      return inner.capabilities;
    },
    filterConvention: inner.filterConvention,
    dimension,
    open: () => inner.open(),
    checkRecords: (records) => inner.checkRecords(padAll(records)),
    async upsert(records, call) {
      await inner.upsert(padAll(records), call);
      for (const record of records) ids.add(record.id);
      await settle(call);
    },
    query: (vector: Float32Array, call: DriverQueryOptions<PineconeFilter>) => inner.query(pad(vector), call),
    get: (list: readonly string[], call: DriverCallOptions): Promise<Chunk[]> => inner.get(list, call),
    count: (call) => inner.count(call),
    async delete(list, call) {
      const removed = await inner.delete(list, call);
      for (const id of list) ids.delete(id);
      await settle(call);
      return removed;
    },
    list: (call) => inner.list(call),
    // Sparse vectors pass as they are; the dense part of a hybrid query is padded like any query.
    ...(inner.querySparse ? { querySparse: inner.querySparse } : {}),
    ...(inner.queryHybrid
      ? { queryHybrid: (dense, sparse, call) => inner.queryHybrid!(pad(dense), sparse, call) }
      : {}),
  };
}
