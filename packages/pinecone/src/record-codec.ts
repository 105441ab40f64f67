import type { Chunk, Metadata, MetadataValue, Warning } from '@zerda/core';
import type { RecordProblem, SparseVector, VectorRecord } from '@zerda/core/backend';
import {
  pineconeLimits as limits,
  type PineconeWireRecord,
  packUpsertBatches,
  recordBytes,
  upsertEnvelopeBytes,
} from './pinecone-records.js';
import type { TextStore } from './text-store.js';

/*
 * How chunks become Pinecone records and back: the chunk's metadata fields, its text under
 * `textKey` (or in a TextStore) and its document id under `docIdKey`, with the hints that make
 * the way back exact; and the per-record limits Pinecone would refuse a write for.
 */

/** Where chunk fields live in a record's metadata. */
export interface RecordLayout {
  /** Metadata key of the chunk text; undefined when texts are kept in a TextStore. */
  textKey: string | undefined;
  /** Metadata key of the document id (the filter convention's `docIdKey`). */
  docIdKey: string;
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

/** Pinecone's `sparseValues` / `sparseVector`: plain lists of uint32 indices and float32 values. */
export function sparseToWire({ indices, values }: SparseVector): { indices: number[]; values: number[] } {
  return { indices: Array.from(indices), values: Array.from(values) };
}

/** A record as fetched or matched (values present when asked for). */
export type FetchedRecord = { id: string; values?: number[]; metadata?: Record<string, unknown> | undefined };

/** Chunks to wire records and back for one store: its layout, text store and size limits. */
export class RecordCodec {
  constructor(
    private readonly layout: RecordLayout,
    private readonly textStore: TextStore | undefined,
    private readonly maxMetadataBytes: number,
    private readonly maxRequestBytes: number,
  ) {}

  /** The record as the client sends it (dense values, sparse values, metadata), or why it cannot be. */
  toWire(record: VectorRecord): PineconeWireRecord | string {
    const metadata = toPineconeMetadata(record, this.layout);
    if (typeof metadata === 'string') return metadata;
    const wire: PineconeWireRecord = { id: record.id, values: Array.from(record.vector) };
    // No sparse values (an empty vector, say of an empty text) scores 0, as Pinecone's sparse side does.
    if (record.sparse && record.sparse.indices.length > 0) wire.sparseValues = sparseToWire(record.sparse);
    if (Object.keys(metadata).length > 0) wire.metadata = metadata;
    return wire;
  }

  /** Pinecone's limits: ids of at most 512 characters, a non-zero vector, 40 KB of metadata, one request per record. */
  problems(records: readonly VectorRecord[], namespace: string): RecordProblem[] {
    const envelopeBytes = upsertEnvelopeBytes(namespace);
    const problems: RecordProblem[] = [];
    records.forEach((record, index) => {
      const reason = this.#problemOf(record, envelopeBytes);
      if (reason !== undefined) problems.push({ index, reason });
    });
    return problems;
  }

  /** Checked records as upsert requests, in order: at most `maxRecords` records and `maxRequestBytes` of body each. */
  upsertRequests(
    records: readonly VectorRecord[],
    maxRecords: number,
    namespace: string,
  ): PineconeWireRecord[][] {
    const wire = records.map((record) => this.toWire(record) as PineconeWireRecord);
    const sizes = wire.map(recordBytes);
    const envelopeBytes = upsertEnvelopeBytes(namespace);
    return packUpsertBatches(sizes, { maxRecords, maxBytes: this.maxRequestBytes, envelopeBytes }).map(
      ({ start, end }) => wire.slice(start, end),
    );
  }

  /** Texts go to the text store (if any) before their vectors: a search never finds a vector without its text. */
  async saveTexts(records: readonly VectorRecord[], signal: AbortSignal | undefined): Promise<void> {
    await this.textStore?.setTexts(
      records.map(({ id, text }) => ({ id, text })),
      { signal },
    );
  }

  async deleteTexts(ids: readonly string[], signal: AbortSignal | undefined): Promise<void> {
    await this.textStore?.deleteTexts(ids, { signal });
  }

  /** The chunks of fetched or matched records, texts from the metadata or the text store; `warn` hears of those without. */
  async toChunks(
    records: readonly FetchedRecord[],
    signal: AbortSignal | undefined,
    warn?: (warning: Warning) => void,
  ): Promise<Chunk[]> {
    const { textStore } = this;
    const texts =
      textStore && records.length > 0
        ? await textStore.getTexts(
            records.map(({ id }) => id),
            { signal },
          )
        : undefined;
    let missing = 0;
    const chunks = records.map(({ id, metadata }) => {
      const { chunk, text } = fromPineconeMetadata(id, metadata, this.layout);
      const found = texts ? texts.get(id) : text;
      if (found === undefined) missing++;
      return { ...chunk, text: found ?? '' };
    });
    if (missing > 0) {
      warn?.({
        type: 'compatibility',
        source: 'pinecone',
        message: textStore
          ? `${missing} hit(s) have no text in the text store; their text is ''`
          : `${missing} hit(s) have no text under metadata key '${this.layout.textKey}'; their text is ''`,
      });
    }
    return chunks;
  }

  #problemOf(record: VectorRecord, envelopeBytes: number): string | undefined {
    if (record.id.length > limits.maxIdLength) {
      return `the id has ${record.id.length} characters; Pinecone allows ${limits.maxIdLength}`;
    }
    if (record.vector.every((value) => value === 0)) {
      return 'the vector is all zeros; Pinecone refuses dense vectors without a non-zero value';
    }
    const wire = this.toWire(record);
    if (typeof wire === 'string') return wire;
    const metadataBytes = Buffer.byteLength(JSON.stringify(wire.metadata ?? {}));
    const { maxMetadataBytes, maxRequestBytes } = this;
    if (metadataBytes > maxMetadataBytes) {
      const textBytes = this.layout.textKey === undefined ? 0 : Buffer.byteLength(record.text);
      return `its Pinecone metadata would be ${metadataBytes} bytes (the text ${textBytes} of them); Pinecone allows ${maxMetadataBytes} per record: shorten the text or metadata, or keep texts elsewhere with the textStore setting`;
    }
    const bytes = recordBytes(wire);
    if (envelopeBytes + bytes > maxRequestBytes)
      return `the record is ${bytes} bytes, more than one request may carry (${maxRequestBytes})`;
    return undefined;
  }
}
