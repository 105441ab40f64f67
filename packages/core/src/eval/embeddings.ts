import { DatasetError } from './dataset-error.js';
import { readLines } from './lines.js';

/** Which side of a collection a vector belongs to. */
export type EmbeddingKind = 'doc' | 'query';

/** Precomputed vectors for a BEIR collection, keyed by the ids of corpus.jsonl and queries.jsonl. */
export interface EmbeddingsFile {
  /** Document id -> vector. */
  documents: Map<string, Float32Array>;
  /** Query id -> vector. */
  queries: Map<string, Float32Array>;
  /** The length of every vector (undefined when the file held none). */
  dimension: number | undefined;
  /** Where each vector came from (`file:line`), for messages. */
  sources: { documents: Map<string, string>; queries: Map<string, string> };
}

export interface ReadEmbeddingsOptions {
  /**
   * Every line of the file is of this kind (a file of document vectors or of query vectors); a
   * line's `type` field, where present, must agree. Without it, each line must say its kind with
   * `"type": "doc"` or `"type": "query"` (documents and queries may share ids).
   */
  kind?: EmbeddingKind;
  /** The length every vector must have (default: the length of the first vector). */
  dimension?: number;
  /** Adds to these vectors (for example those of another file) instead of starting empty. */
  into?: EmbeddingsFile;
}

/**
 * Reads precomputed embeddings from a JSON-lines file: one `{"_id", "vector"}` object a line,
 * with `"type": "doc" | "query"` unless `kind` says what the whole file holds. The file is read
 * line by line; a line without an id, an unknown type, a vector of the wrong length or with a
 * value that is not a finite (float32) number, or an id given twice is a DatasetError naming the
 * file, the line and the id.
 */
export async function readEmbeddings(
  path: string,
  options: ReadEmbeddingsOptions = {},
): Promise<EmbeddingsFile> {
  const target: EmbeddingsFile = options.into ?? {
    documents: new Map(),
    queries: new Map(),
    dimension: undefined,
    sources: { documents: new Map(), queries: new Map() },
  };
  let dimension = options.dimension ?? target.dimension;
  let dimensionSource =
    options.dimension !== undefined
      ? 'expected'
      : dimension === undefined
        ? ''
        : `the vectors of ${earlierFile(target)}`;
  for await (const { line, text } of readLines(path)) {
    const fail = (message: string): never => {
      throw new DatasetError({ message, path, line });
    };
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch (error) {
      fail(`not valid JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      fail(`expected a JSON object {"_id", "vector"}, got ${typeName(record)}`);
    }
    const fields = record as Record<string, unknown>;
    const rawId = fields._id;
    const id = typeof rawId === 'number' && Number.isFinite(rawId) ? String(rawId) : rawId;
    if (typeof id !== 'string' || id.length === 0) fail(`missing or empty '_id' (got ${typeName(rawId)})`);
    const name = id as string;

    const type = fields.type;
    let kind: EmbeddingKind;
    if (type === undefined) {
      if (options.kind === undefined) {
        fail(
          `'${name}' has no "type": in a file of both document and query vectors, every line needs "type": "doc" or "type": "query"`,
        );
      }
      kind = options.kind as EmbeddingKind;
    } else if (type === 'doc' || type === 'query') {
      if (options.kind !== undefined && type !== options.kind) {
        fail(
          `'${name}' has "type": "${type}" in a file of ${options.kind === 'doc' ? 'document' : 'query'} vectors`,
        );
      }
      kind = type;
    } else {
      kind = fail(`'${name}' has "type" ${JSON.stringify(type)}; expected "doc" or "query"`);
    }
    const what = `${kind === 'doc' ? 'document' : 'query'} '${name}'`;

    const values = fields.vector;
    if (!Array.isArray(values))
      fail(`the vector of ${what} is missing or not an array (got ${typeName(values)})`);
    const array = values as unknown[];
    if (array.length === 0) fail(`the vector of ${what} is empty`);
    if (dimension === undefined) {
      dimension = array.length;
      dimensionSource = `the first vector, line ${line}`;
    } else if (array.length !== dimension) {
      fail(
        `the vector of ${what} has ${array.length} numbers, expected ${dimension} (${dimensionSource === 'expected' ? 'the expected dimension' : `as ${dimensionSource}`})`,
      );
    }
    const vector = new Float32Array(array.length);
    for (let i = 0; i < array.length; i++) {
      const value = array[i];
      const stored = typeof value === 'number' ? Math.fround(value) : Number.NaN;
      if (!Number.isFinite(stored)) {
        fail(
          `the vector of ${what} holds ${typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? typeName(value))} at position ${i}; every value must be a finite number${typeof value === 'number' && Number.isFinite(value) ? ' within float32 range' : ''}`,
        );
      }
      vector[i] = stored;
    }

    const vectors = kind === 'doc' ? target.documents : target.queries;
    const sources = kind === 'doc' ? target.sources.documents : target.sources.queries;
    const previous = sources.get(name);
    if (previous !== undefined) fail(`${what} has a vector already (${previous})`);
    vectors.set(name, vector);
    sources.set(name, `${path}:${line}`);
  }
  target.dimension = dimension;
  return target;
}

/** The file the vectors already in `target` came from. */
function earlierFile(target: EmbeddingsFile): string {
  const [first] = [...target.sources.documents.values(), ...target.sources.queries.values()];
  return first === undefined ? 'the earlier file' : first.replace(/:\d+$/u, '');
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : typeof value;
}
