import { type ChunkProblem, ChunkValidationError, InvalidArgumentError } from '../errors/index.js';
import type { Chunk, Metadata, MetadataValue } from './chunk.js';

/**
 * The one place where foreign chunk shapes become a `Chunk`: Zerda's own shape, LangChain's
 * `Document` (`pageContent`, optional `id`), and objects with `content`. Metadata may be a
 * plain object or a class instance (its own enumerable fields are copied).
 * Throws ChunkValidationError naming the chunk when it cannot be read.
 */
export function normalizeChunk(input: unknown, index = 0): Chunk {
  const problem = readChunk(input, index);
  if ('reason' in problem) throw new ChunkValidationError({ problems: [problem] });
  return problem;
}

/**
 * Normalises a whole batch: every bad chunk is reported at once (with its position), duplicate
 * ids within the batch included, and nothing is returned unless all are valid.
 */
export function normalizeChunks(inputs: Iterable<unknown>): Chunk[] {
  return normalizeChunksWithPlaces(inputs).chunks;
}

/**
 * As `normalizeChunks`, with the map from each chunk's id to its place in `chunks`, which finding
 * duplicates builds anyway: a caller that needs that map takes it rather than building another.
 */
export function normalizeChunksWithPlaces(inputs: Iterable<unknown>): {
  chunks: Chunk[];
  placeOf: Map<string, number>;
} {
  if (
    inputs === null ||
    typeof inputs !== 'object' ||
    typeof (inputs as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function'
  ) {
    throw new InvalidArgumentError({
      argument: 'chunks',
      value: inputs,
      message: `expected a list of chunks, got ${describeType(inputs)}`,
    });
  }
  const chunks: Chunk[] = [];
  const problems: ChunkProblem[] = [];
  const seen = new Map<string, number>();
  let index = 0;
  for (const input of inputs) {
    const result = readChunk(input, index);
    if ('reason' in result) problems.push(result);
    else {
      const first = seen.get(result.id);
      if (first !== undefined) {
        problems.push({
          index,
          id: result.id,
          reason: `duplicate id, already used by chunk #${first} of this batch`,
        });
      } else {
        seen.set(result.id, index);
        chunks.push(result);
      }
    }
    index++;
  }
  if (problems.length > 0) throw new ChunkValidationError({ problems });
  // With no problems, every input is a chunk, so its index is its place.
  return { chunks, placeOf: seen };
}

function readChunk(input: unknown, index: number): Chunk | ChunkProblem {
  if (input === null || typeof input !== 'object') {
    return { index, reason: `expected an object, got ${describeType(input)}` };
  }
  const record = input as Record<string, unknown>;
  const rawId = record.id;
  const id = typeof rawId === 'number' && Number.isFinite(rawId) ? String(rawId) : rawId;
  if (typeof id !== 'string' || id.length === 0) {
    return { index, reason: `missing or empty 'id' (got ${describeType(rawId)})` };
  }
  const textField = 'text' in record ? 'text' : 'pageContent' in record ? 'pageContent' : 'content';
  const text = record[textField];
  if (typeof text !== 'string') {
    return { index, id, reason: `'${textField}' must be a string, got ${describeType(text)}` };
  }
  const rawDocId = record.docId;
  if (rawDocId !== undefined && typeof rawDocId !== 'string') {
    return { index, id, reason: `'docId' must be a string, got ${describeType(rawDocId)}` };
  }
  const chunk: Chunk = { id, text };
  if (rawDocId !== undefined) chunk.docId = rawDocId;
  if (record.metadata !== undefined && record.metadata !== null) {
    const metadata = readMetadata(record.metadata);
    if (typeof metadata === 'string') return { index, id, reason: metadata };
    chunk.metadata = metadata;
  }
  return chunk;
}

/** Returns the metadata, or a string saying what is wrong with it. */
function readMetadata(input: unknown): Metadata | string {
  if (typeof input !== 'object' || Array.isArray(input)) {
    return `'metadata' must be an object, got ${describeType(input)}`;
  }
  const metadata: Metadata = {};
  for (const [key, value] of Object.entries(input as object)) {
    if (value === undefined) continue;
    const checked = readMetadataValue(value);
    if (checked === undefined) {
      return `metadata field '${key}' must be a string, finite number, boolean or array of strings, got ${describeType(value)}`;
    }
    metadata[key] = checked;
  }
  return metadata;
}

/** The value as Zerda metadata (string, finite number, boolean, array of strings), or undefined. */
export function readMetadataValue(value: unknown): MetadataValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : undefined;
    default:
      if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return [...value];
      return undefined;
  }
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return typeof value;
}
