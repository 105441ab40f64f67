import { type Chunk, InvalidArgumentError, type Metadata, type MetadataValue } from '@zerda/core';

/** A metadata object as this store sends it to Chroma: scalars only (Chroma refuses `{}`: null instead). */
export type ChromaRecordMetadata = Record<string, string | number | boolean>;

/** Key prefixes a chunk's metadata may not use: Chroma drops `chroma:` keys, `zerda:` is this store's. */
export const reservedKeyPrefixes = ['chroma:', 'zerda:'] as const;

/** Set when the chunk had no `docId` and the value under `docIdKey` is its `metadata.docId`. */
const DOC_ID_SOURCE_KEY = 'zerda:docIdSource';
/** `metadata.docId` (as JSON) of a chunk that also has its own `docId`, when `docIdKey` is 'docId'. */
const METADATA_DOC_ID_KEY = 'zerda:metadataDocId';

/**
 * A chunk's metadata as stored in Chroma, or what Chroma cannot take. Filters see the document
 * id under `docIdKey` (the chunk's `docId`, else its `metadata.docId`: the value the `docId`
 * pseudo-field reads); one or two `zerda:` keys record where it came from, so that the chunk
 * comes back exactly as it was added.
 */
export function toChromaMetadata(
  chunk: Chunk,
  docIdKey: string,
): { metadata: ChromaRecordMetadata | null } | { problem: string } {
  const stored: ChromaRecordMetadata = {};
  const metadata = chunk.metadata ?? {};
  for (const [key, value] of Object.entries(metadata)) {
    if (key === docIdKey && docIdKey !== 'docId') {
      return {
        problem: `metadata key '${key}' is where this store keeps the document id (its docIdKey); rename the field or choose another docIdKey`,
      };
    }
    const reserved = reservedKeyPrefixes.find((prefix) => key.startsWith(prefix));
    if (reserved !== undefined) {
      return {
        problem: `metadata key '${key}' starts with '${reserved}', a prefix reserved ${reserved === 'chroma:' ? 'by Chroma (it drops such keys)' : 'by this store'}`,
      };
    }
    if (Array.isArray(value)) {
      return {
        problem: `metadata field '${key}' is a list; the Chroma server API (v2, server 1.0) stores only strings, numbers and booleans, so store it as separate fields or one string`,
      };
    }
    if (key === 'docId' && docIdKey === 'docId') continue;
    stored[key] = value;
  }
  const ownDocId = chunk.docId;
  const metadataDocId = Object.hasOwn(metadata, 'docId') ? metadata.docId : undefined;
  const docId = ownDocId ?? metadataDocId;
  if (docId !== undefined) stored[docIdKey] = docId as string | number | boolean;
  if (ownDocId === undefined && metadataDocId !== undefined) stored[DOC_ID_SOURCE_KEY] = 'metadata';
  if (ownDocId !== undefined && metadataDocId !== undefined && docIdKey === 'docId') {
    stored[METADATA_DOC_ID_KEY] = JSON.stringify(metadataDocId);
  }
  return { metadata: Object.keys(stored).length === 0 ? null : stored };
}

/** Each chunk's metadata as stored in Chroma; InvalidArgumentError for the first Chroma cannot take. */
export function toChromaMetadatas(
  chunks: readonly Chunk[],
  docIdKey: string,
): (ChromaRecordMetadata | null)[] {
  return chunks.map((chunk) => {
    const encoded = toChromaMetadata(chunk, docIdKey);
    if ('problem' in encoded)
      throw new InvalidArgumentError({ argument: 'records', message: encoded.problem });
    return encoded.metadata;
  });
}

/** Records read from Chroma, as the client returns them (lists side by side), as chunks. */
export function fromChromaRecords(
  ids: readonly string[],
  documents: readonly (string | null)[],
  metadatas: readonly (Readonly<Record<string, unknown>> | null)[],
  docIdKey: string,
): Chunk[] {
  return ids.map((id, index) => fromChromaRecord(id, documents[index], metadatas[index], docIdKey));
}

/**
 * A record read from Chroma as a chunk: the inverse of `toChromaMetadata`. Records written by
 * other tools come back with their metadata as it is (a non-string value under `docIdKey` stays
 * in the metadata) and an empty text where they have no document.
 */
export function fromChromaRecord(
  id: string,
  document: string | null | undefined,
  stored: Readonly<Record<string, unknown>> | null | undefined,
  docIdKey: string,
): Chunk {
  const chunk: Chunk = { id, text: document ?? '' };
  const metadata: Metadata = {};
  let docId: unknown;
  let source: unknown;
  let metadataDocId: unknown;
  for (const [key, value] of Object.entries(stored ?? {})) {
    if (value === null || value === undefined) continue;
    if (key === DOC_ID_SOURCE_KEY) source = value;
    else if (key === METADATA_DOC_ID_KEY) metadataDocId = value;
    else if (key === docIdKey) docId = value;
    else if (isMetadataValue(value)) metadata[key] = value;
  }
  if (docId !== undefined) {
    if (source === 'metadata') {
      // With another docIdKey, `metadata.docId` is stored under 'docId' as it is.
      if (docIdKey === 'docId' && isMetadataValue(docId)) metadata.docId = docId;
    } else if (typeof docId === 'string') {
      chunk.docId = docId;
    } else if (isMetadataValue(docId)) {
      metadata[docIdKey] = docId;
    }
  }
  if (typeof metadataDocId === 'string') {
    const parsed = parseJson(metadataDocId);
    metadata.docId = isMetadataValue(parsed) ? parsed : metadataDocId;
  }
  if (Object.keys(metadata).length > 0) chunk.metadata = metadata;
  return chunk;
}

function isMetadataValue(value: unknown): value is MetadataValue {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value)) ||
    (Array.isArray(value) && value.every((item) => typeof item === 'string'))
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
