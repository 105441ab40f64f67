import { Document, type DocumentInterface } from '@langchain/core/documents';
import {
  type Chunk,
  ChunkValidationError,
  contentHash,
  type Metadata,
  readMetadataValue,
  type ScoredChunk,
} from '@zerda/core';

/**
 * How LangChain metadata that Zerda cannot store (nested objects such as a text splitter's
 * `loc`, numbers in arrays, null, dates) is treated:
 * - `'strict'`: refused with a ChunkValidationError naming the document and the field;
 * - `'flatten'`: nested objects become dotted keys (`loc.lines.from`), arrays that are not all
 *   strings and other values become their JSON text, dates their ISO text, `null` and
 *   `undefined` are left out.
 */
export type MetadataMode = 'strict' | 'flatten';

/** The Zerda side of a hit, as ZerdaRetriever puts it under `metadata.zerda`. */
export interface ZerdaHitMetadata {
  /** The chunk id (also the Document's `id`). */
  id: string;
  /** The source document id, where the chunk has one. */
  docId?: string;
  /** Final score: a similarity, higher is better. */
  score: number;
  /** 1-based position in Zerda's result. */
  rank: number;
  /** The retriever that produced the hit ('hybrid', 'vector', 'keyword', ...). */
  retriever: string;
  /** The score each signal gave, for example `{ keyword: 0.8, vector: 0.61 }`. */
  scores: Record<string, number>;
  /** The 1-based rank in each signal's own list. */
  ranks: Record<string, number>;
  /** How the final score was built, where the retriever says. */
  explanation?: { method: string; description: string; components?: Record<string, number> };
}

/**
 * A Zerda chunk as a LangChain Document: `id`, `pageContent` and the chunk's metadata (a copy),
 * with the chunk's `docId` added as `metadata.docId` when the metadata has none.
 */
export function chunkToDocument(chunk: Chunk): Document<Record<string, unknown>> {
  const metadata: Record<string, unknown> = copyMetadata(chunk.metadata);
  if (chunk.docId !== undefined && !Object.hasOwn(metadata, 'docId')) metadata.docId = chunk.docId;
  return new Document({ id: chunk.id, pageContent: chunk.text, metadata });
}

/** A Zerda hit as a LangChain Document, with Zerda's scores and explanation under `metadataKey`. */
export function hitToDocument(hit: ScoredChunk, metadataKey: string): Document<Record<string, unknown>> {
  const document = chunkToDocument(hit.chunk);
  const zerda: ZerdaHitMetadata = {
    id: hit.chunk.id,
    score: hit.score,
    rank: hit.rank,
    retriever: hit.retriever,
    scores: definedNumbers(hit.scores),
    ranks: definedNumbers(hit.ranks),
  };
  if (hit.chunk.docId !== undefined) zerda.docId = hit.chunk.docId;
  if (hit.explanation !== undefined) {
    zerda.explanation = {
      method: hit.explanation.method,
      description: hit.explanation.description,
      ...(hit.explanation.components === undefined ? {} : { components: { ...hit.explanation.components } }),
    };
  }
  document.metadata[metadataKey] = zerda;
  return document;
}

/**
 * A LangChain Document given to Zerda as a chunk, with the id chosen by the caller. A string
 * `metadata.docId` also becomes the chunk's `docId` (so backends that filter by document, such
 * as FAISS, see it). Throws ChunkValidationError (strict mode) naming the document's position.
 */
export function documentToChunk(
  document: DocumentInterface,
  id: string,
  index: number,
  mode: MetadataMode,
): Chunk {
  if (document === null || typeof document !== 'object' || typeof document.pageContent !== 'string') {
    throw new ChunkValidationError({
      problems: [{ index, id, reason: "expected a Document with a string 'pageContent'" }],
    });
  }
  const metadata = readMetadata(document.metadata, mode);
  if (typeof metadata === 'string') {
    throw new ChunkValidationError({ problems: [{ index, id, reason: metadata }] });
  }
  const chunk: Chunk = { id, text: document.pageContent, metadata };
  if (typeof metadata.docId === 'string') chunk.docId = metadata.docId;
  return chunk;
}

/** Where the LangChain-over-Zerda direction keeps the chunk's id and docId in a store's metadata. */
export interface StoredMetadataKeys {
  id: string;
  docId: string;
}

/**
 * A chunk as the Document written into a LangChain store: the id goes both into `Document.id`
 * and into `metadata[keys.id]` (many stores, FakeVectorStore among them, drop `Document.id`),
 * and the chunk's docId into `metadata[keys.docId]`.
 */
export function chunkToStoredDocument(
  chunk: Chunk,
  keys: StoredMetadataKeys,
): Document<Record<string, unknown>> {
  const metadata: Record<string, unknown> = copyMetadata(chunk.metadata);
  metadata[keys.id] = chunk.id;
  if (chunk.docId !== undefined) metadata[keys.docId] = chunk.docId;
  return new Document({ id: chunk.id, pageContent: chunk.text, metadata });
}

/**
 * A Document read back from a LangChain store as a chunk. The id is `metadata[keys.id]`, else
 * `Document.id`, else a hash of the text (documents that Zerda did not write may have none);
 * metadata that Zerda cannot hold is flattened, never refused, since it is already stored.
 */
export function storedDocumentToChunk(document: DocumentInterface, keys: StoredMetadataKeys): Chunk {
  const raw: Record<string, unknown> =
    document.metadata !== null && typeof document.metadata === 'object' ? { ...document.metadata } : {};
  const storedId = raw[keys.id];
  const storedDocId = raw[keys.docId];
  delete raw[keys.id];
  delete raw[keys.docId];
  const text = typeof document.pageContent === 'string' ? document.pageContent : String(document.pageContent);
  const id =
    typeof storedId === 'string' && storedId !== ''
      ? storedId
      : typeof document.id === 'string' && document.id !== ''
        ? document.id
        : `sha256:${contentHash(text)}`;
  const metadata = readMetadata(raw, 'flatten') as Metadata;
  const chunk: Chunk = { id, text };
  if (typeof storedDocId === 'string') chunk.docId = storedDocId;
  if (Object.keys(metadata).length > 0) chunk.metadata = metadata;
  return chunk;
}

function copyMetadata(metadata: Metadata | undefined): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  if (metadata === undefined) return copy;
  for (const [key, value] of Object.entries(metadata)) copy[key] = Array.isArray(value) ? [...value] : value;
  return copy;
}

function definedNumbers(values: Record<string, number | undefined>): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [key, value] of Object.entries(values)) if (typeof value === 'number') result[key] = value;
  return result;
}

/** Zerda metadata from LangChain metadata, or a string saying what is wrong (strict mode). */
function readMetadata(input: unknown, mode: MetadataMode): Metadata | string {
  const metadata: Metadata = {};
  if (input === undefined || input === null) return metadata;
  if (typeof input !== 'object' || Array.isArray(input)) {
    return `'metadata' must be an object, got ${describe(input)}`;
  }
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    if (value === undefined) continue;
    const direct = readMetadataValue(value);
    if (direct !== undefined) {
      metadata[key] = direct;
      continue;
    }
    if (mode === 'strict') {
      return `metadata field '${key}' must be a string, finite number, boolean or array of strings, got ${describe(value)} (use metadata: 'flatten' to flatten it)`;
    }
    flattenInto(metadata, key, value, 0);
  }
  return metadata;
}

function flattenInto(target: Metadata, key: string, value: unknown, depth: number): void {
  if (value === null || value === undefined) return;
  const direct = readMetadataValue(value);
  if (direct !== undefined) {
    target[key] = direct;
    return;
  }
  if (value instanceof Date) {
    if (!Number.isNaN(value.getTime())) target[key] = value.toISOString();
    return;
  }
  if (typeof value === 'object' && !Array.isArray(value) && depth < 8) {
    for (const [child, childValue] of Object.entries(value)) {
      flattenInto(target, `${key}.${child}`, childValue, depth + 1);
    }
    return;
  }
  const text = typeof value === 'bigint' || typeof value === 'number' ? String(value) : safeJson(value);
  if (text !== undefined) target[key] = text;
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array that is not all strings';
  if (value instanceof Date) return 'a Date';
  if (typeof value === 'number') return String(value);
  return typeof value;
}
