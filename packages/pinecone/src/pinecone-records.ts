import type { Chunk, Metadata, MetadataValue } from '@zerda/core';

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
});

/** Where chunk fields live in a record's metadata. */
export interface RecordLayout {
  /** Metadata key of the chunk text; undefined when texts are kept in a TextStore. */
  textKey: string | undefined;
  /** Metadata key of the document id (the filter convention's `docIdKey`). */
  docIdKey: string;
}

/** A record as the client sends it (key order as the client serialises it, for exact sizes). */
export interface PineconeWireRecord {
  id: string;
  values: number[];
  metadata?: Record<string, MetadataValue>;
}

/**
 * Metadata key of the store's hints, present only where a chunk's document id cannot be told
 * apart otherwise: a JSON string, `{"docIdFrom":"metadata"}` (the value under `docIdKey` is the
 * chunk's `metadata.docId`; the chunk has no `docId`) or `{"metadataDocId":…}` (the chunk has
 * both, and `docIdKey` is 'docId': its `metadata.docId` is kept here).
 */
export const HINTS_KEY = '_zerda';

interface Hints {
  docIdFrom?: 'metadata';
  metadataDocId?: MetadataValue;
}

/**
 * The metadata a chunk is stored with: its own metadata fields, its text under `textKey` and its
 * document id (the chunk's `docId`, else `metadata.docId`, which is what the filter language
 * reads for `docId`) under `docIdKey`, plus the hints (`HINTS_KEY`) that make the way back exact.
 * Returns a string saying why the chunk cannot be stored this way instead.
 */
export function toPineconeMetadata(
  chunk: Chunk,
  layout: RecordLayout,
): Record<string, MetadataValue> | string {
  const source: Metadata = chunk.metadata ?? {};
  const { textKey, docIdKey } = layout;
  for (const [key, role] of [
    [HINTS_KEY, 'the store keeps its hints'],
    [textKey, 'the store keeps the chunk text (textKey)'],
    [docIdKey === 'docId' ? undefined : docIdKey, 'the store keeps the document id (docIdKey)'],
  ] as const) {
    if (key !== undefined && Object.hasOwn(source, key)) {
      return `metadata field '${key}' is where ${role}; rename the field${key === HINTS_KEY ? '' : ' or change the setting'}`;
    }
  }
  const stored: Record<string, MetadataValue> = {};
  for (const [key, value] of Object.entries(source)) stored[key] = value;
  if (textKey !== undefined) stored[textKey] = chunk.text;
  const hints: Hints = {};
  const metadataDocId = Object.hasOwn(source, 'docId') ? source.docId : undefined;
  if (chunk.docId !== undefined) {
    stored[docIdKey] = chunk.docId;
    if (docIdKey === 'docId' && metadataDocId !== undefined) hints.metadataDocId = metadataDocId;
  } else if (metadataDocId !== undefined) {
    stored[docIdKey] = metadataDocId;
    if (typeof metadataDocId === 'string') hints.docIdFrom = 'metadata';
  }
  if (Object.keys(hints).length > 0) stored[HINTS_KEY] = JSON.stringify(hints);
  return stored;
}

/**
 * The chunk a record stands for (the inverse of `toPineconeMetadata`); `text` is undefined when
 * the record has none under `textKey`. Records written by other tools (no hints) read as: a
 * string under `docIdKey` is the chunk's `docId`; every other field is metadata.
 */
export function fromPineconeMetadata(
  id: string,
  metadata: Readonly<Record<string, unknown>> | undefined,
  layout: RecordLayout,
): { chunk: Omit<Chunk, 'text'>; text: string | undefined } {
  const { textKey, docIdKey } = layout;
  const hints = readHints(metadata?.[HINTS_KEY]);
  let text: string | undefined;
  let docIdValue: unknown;
  const rest: Metadata = {};
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if (key === HINTS_KEY && hints !== undefined) continue;
    if (key === textKey && typeof value === 'string') {
      text = value;
      continue;
    }
    if (key === docIdKey) {
      docIdValue = value;
      continue;
    }
    if (isMetadataValue(value)) rest[key] = value;
  }
  let docId: string | undefined;
  if (docIdValue !== undefined) {
    if (hints?.docIdFrom === 'metadata' || typeof docIdValue !== 'string') {
      // It mirrors metadata.docId; with docIdKey 'docId' it is that field itself.
      if (docIdKey === 'docId' && isMetadataValue(docIdValue)) rest.docId = docIdValue;
    } else {
      docId = docIdValue;
    }
  }
  if (docIdKey === 'docId' && docId !== undefined && hints?.metadataDocId !== undefined) {
    rest.docId = hints.metadataDocId;
  }
  const chunk: Omit<Chunk, 'text'> = { id };
  if (docId !== undefined) chunk.docId = docId;
  if (Object.keys(rest).length > 0) chunk.metadata = rest;
  return { chunk, text };
}

function readHints(value: unknown): Hints | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Hints)
      : undefined;
  } catch {
    return undefined;
  }
}

function isMetadataValue(value: unknown): value is MetadataValue {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    typeof value === 'number' ||
    (Array.isArray(value) && value.every((item) => typeof item === 'string'))
  );
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
