import type { MetadataValue } from '@zerda/core';

/** Pinecone's documented limits, which the driver checks before any request is sent. */
export const pineconeLimits = Object.freeze({
  /** Records per upsert request. */
  maxRecordsPerUpsert: 1000,
  /** Bytes per upsert request (2 MB; the decimal reading, the stricter one). */
  maxRequestBytes: 2_000_000,
  /** Bytes of metadata per record (40 KB), measured as the metadata's JSON. */
  maxMetadataBytes: 40 * 1024,
  /** Characters in a record id. */
  maxIdLength: 512,
  /** Ids per fetch or delete request. */
  maxIdsPerRequest: 1000,
  /** Largest top_k of a query. */
  maxTopK: 10_000,
  /** Largest dense dimension. */
  maxDimension: 20_000,
  /** Ids per page of `list` (Pinecone's default page). */
  maxIdsPerList: 100,
  /** Non-zero entries of one sparse vector in a sparse-dense record. */
  maxSparseNonZero: 1000,
  /**
   * Sparse indices are uint32 (below 2^32). Declared one lower, so that an index at the declared
   * dimension is still a Uint32Array value core can refuse (2^32 wraps to 0); no encoder uses it.
   */
  sparseDimension: 2 ** 32 - 1,
});

/** What a store with the `sparse` setting declares (`capabilities.sparse`): Pinecone fuses dense and sparse itself. */
export const pineconeSparseCapabilities = Object.freeze({
  dimension: pineconeLimits.sparseDimension,
  maxNonZero: pineconeLimits.maxSparseNonZero,
  hybrid: true,
});

/** A record as the client sends it (key order as the client serialises it, for exact sizes). */
export interface PineconeWireRecord {
  id: string;
  values: number[];
  sparseValues?: { indices: number[]; values: number[] };
  metadata?: Record<string, MetadataValue>;
}

/** The exact size of a record in the client's JSON request body. */
export function recordBytes(record: PineconeWireRecord): number {
  return Buffer.byteLength(JSON.stringify(record));
}

/** Bytes of an upsert body around its records: `{"vectors":[...],"namespace":"..."}`. */
export function upsertEnvelopeBytes(namespace: string): number {
  return Buffer.byteLength(`{"vectors":[],"namespace":${JSON.stringify(namespace)}}`);
}

/**
 * Splits records, in order, into upsert requests of at most `maxRecords` records and
 * `maxBytes` bytes of JSON body each. Every record must fit alone (checked before).
 */
export function packUpsertBatches(
  sizes: readonly number[],
  { maxRecords, maxBytes, envelopeBytes }: { maxRecords: number; maxBytes: number; envelopeBytes: number },
): Array<{ start: number; end: number; bytes: number }> {
  const batches: Array<{ start: number; end: number; bytes: number }> = [];
  let start = 0;
  let bytes = envelopeBytes;
  sizes.forEach((size, index) => {
    const count = index - start;
    // A comma separates records after the first.
    const added = size + (count > 0 ? 1 : 0);
    if (count > 0 && (count >= maxRecords || bytes + added > maxBytes)) {
      batches.push({ start, end: index, bytes });
      start = index;
      bytes = envelopeBytes + size;
    } else {
      bytes += added;
    }
  });
  if (start < sizes.length) batches.push({ start, end: sizes.length, bytes });
  return batches;
}

/** Splits ids into requests of at most `maxIds` ids and `maxQueryBytes` of `ids=` query string. */
export function packIdBatches(ids: readonly string[], maxIds: number, maxQueryBytes = Infinity): string[][] {
  const batches: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const id of ids) {
    const size = 5 + encodeURIComponent(id).length; // '&ids=' + the encoded id
    if (current.length > 0 && (current.length >= maxIds || bytes + size > maxQueryBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(id);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
