import {
  type Analyzer,
  type BeirDataset,
  beirDocumentText,
  type Chunk,
  DatasetError,
  type Embedder,
  type EmbeddingsFile,
  type FormatTrecRunOptions,
  HashEmbedder,
  InMemoryVectorStore,
  InvalidArgumentError,
  KeywordRetriever,
  type Run,
  VectorRetriever,
  ZerdaError,
} from '@zerda/core';
import { readEmbeddings, writeTrecRun } from '@zerda/core/node';

/**
 * An Embedder over precomputed query vectors: `embedQuery(text)` returns the vector given for the
 * query with that text. This is how a VectorRetriever, which embeds the query text it is given,
 * searches with a user's own query embeddings.
 */
export class PrecomputedQueryEmbedder implements Embedder {
  readonly dimension: number;
  private readonly byText = new Map<string, Float32Array>();

  constructor(dimension: number, entries: Iterable<readonly [text: string, vector: Float32Array]> = []) {
    this.dimension = dimension;
    for (const [text, vector] of entries) this.set(text, vector);
  }

  /** Registers the vector of a query text; returns false when the text had another vector already. */
  set(text: string, vector: Float32Array): boolean {
    const previous = this.byText.get(text);
    if (previous !== undefined) return sameVector(previous, vector);
    this.byText.set(text, vector);
    return true;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => this.lookup(text));
  }

  async embedQuery(text: string): Promise<Float32Array> {
    return this.lookup(text);
  }

  private lookup(text: string): Float32Array {
    const vector = this.byText.get(text);
    if (vector === undefined) {
      throw new InvalidArgumentError({
        argument: 'query',
        value: text,
        message: 'no precomputed vector for this query text',
      });
    }
    return vector;
  }
}

function sameVector(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Every document of a BEIR collection as a chunk: title and text as one field. */
export function collectionChunks(dataset: BeirDataset): Chunk[] {
  return dataset.corpus.map((document) => ({ id: document.id, text: beirDocumentText(document) }));
}

/** A BM25 keyword retriever over the collection (title and text as one field). */
export function buildKeywordRetriever(
  chunks: readonly Chunk[],
  options: { analyzer: Analyzer; k1: number; b: number },
): KeywordRetriever {
  const retriever = new KeywordRetriever({ analyzer: options.analyzer, k1: options.k1, b: options.b });
  retriever.add(chunks);
  return retriever;
}

/** Where the vectors of a vector evaluation come from. */
export type VectorSource =
  | { kind: 'hash'; dimension: number; analyzer: Analyzer }
  | { kind: 'file'; documents: string; queries?: string };

/** What describes the vectors in a report. */
export interface VectorSettings {
  /** 'hash' (Zerda's HashEmbedder, no model) or 'file' (precomputed embeddings). */
  embedder: 'hash' | 'file';
  dimension: number;
  metric: 'cosine';
  /** The embeddings file(s), for 'file'. */
  documentVectors?: string;
  queryVectors?: string;
}

export interface BuiltVectorRetriever {
  retriever: VectorRetriever;
  settings: VectorSettings;
  warnings: string[];
}

/**
 * A vector retriever over the collection: an in-memory store (cosine) holding one vector per
 * document, and a VectorRetriever that searches it with the query's vector. The vectors come from
 * Zerda's HashEmbedder (no model needed) or from the user's embeddings files, which must hold a
 * vector for every document and for every query in `queries`.
 */
export async function buildVectorRetriever(
  dataset: BeirDataset,
  chunks: readonly Chunk[],
  source: VectorSource,
  queries: ReadonlyArray<{ id: string; text: string }>,
): Promise<BuiltVectorRetriever> {
  if (source.kind === 'hash') {
    const embedder = new HashEmbedder({ dimension: source.dimension, analyzer: source.analyzer });
    const store = new InMemoryVectorStore({ embedder, metric: 'cosine' });
    const embeddings = await embedder.embed(chunks.map((chunk) => chunk.text));
    await store.add(chunks, { embeddings });
    return {
      retriever: new VectorRetriever({ store, embedder }),
      settings: { embedder: 'hash', dimension: source.dimension, metric: 'cosine' },
      warnings: [],
    };
  }

  const vectors = await readEmbeddings(source.documents, source.queries === undefined ? {} : { kind: 'doc' });
  if (source.queries !== undefined) await readEmbeddings(source.queries, { kind: 'query', into: vectors });
  const queryFile = source.queries ?? source.documents;
  const dimension = checkCoverage(dataset, vectors, queries, source.documents, queryFile);
  const warnings: string[] = [];
  const corpusIds = new Set(chunks.map((chunk) => chunk.id));
  const unknownDocuments = [...vectors.documents.keys()].filter((id) => !corpusIds.has(id));
  if (unknownDocuments.length > 0) {
    warnings.push(
      `${unknownDocuments.length} document vector(s) name ids that are not in corpus.jsonl and were ignored: ${preview(unknownDocuments)}`,
    );
  }

  const store = new InMemoryVectorStore({ dimension, metric: 'cosine' });
  await store.add(chunks, {
    embeddings: chunks.map((chunk) => vectors.documents.get(chunk.id) as Float32Array),
  });
  const embedder = new PrecomputedQueryEmbedder(dimension);
  const conflicts: string[] = [];
  for (const query of queries) {
    if (!embedder.set(query.text, vectors.queries.get(query.id) as Float32Array)) conflicts.push(query.id);
  }
  if (conflicts.length > 0) {
    warnings.push(
      `${conflicts.length} query(ies) have the same text as an earlier query but another vector; the earlier query's vector was used: ${preview(conflicts)}`,
    );
  }
  return {
    retriever: new VectorRetriever({ store, embedder }),
    settings: {
      embedder: 'file',
      dimension,
      metric: 'cosine',
      documentVectors: source.documents,
      ...(source.queries === undefined ? {} : { queryVectors: source.queries }),
    },
    warnings,
  };
}

/** Every document and every query to run must have a vector; returns the dimension. */
function checkCoverage(
  dataset: BeirDataset,
  vectors: EmbeddingsFile,
  queries: ReadonlyArray<{ id: string }>,
  documentFile: string,
  queryFile: string,
): number {
  const missingDocuments = dataset.corpus.filter((d) => !vectors.documents.has(d.id)).map((d) => d.id);
  if (missingDocuments.length > 0) {
    throw new DatasetError({
      path: documentFile,
      message: `no vector for document ${preview(missingDocuments.map((id) => `'${id}'`))} of ${dataset.files.corpus} (${missingDocuments.length} of ${dataset.corpus.length} documents have none)`,
    });
  }
  const missingQueries = queries.filter((q) => !vectors.queries.has(q.id)).map((q) => q.id);
  if (missingQueries.length > 0) {
    throw new DatasetError({
      path: queryFile,
      message: `no vector for query ${preview(missingQueries.map((id) => `'${id}'`))} of ${dataset.files.queries} (${missingQueries.length} of the ${queries.length} judged queries have none${queryFile === documentFile ? '; query lines need "type": "query"' : ''})`,
    });
  }
  if (vectors.dimension === undefined) {
    throw new DatasetError({ path: documentFile, message: 'holds no vectors' });
  }
  return vectors.dimension;
}

export function preview(ids: readonly string[], count = 5): string {
  return ids.length <= count
    ? ids.join(', ')
    : `${ids.slice(0, count).join(', ')} and ${ids.length - count} more`;
}

/** Writes a TREC run file; a file that cannot be written is a DatasetError naming it. */
export async function writeRunFile(path: string, run: Run, options: FormatTrecRunOptions): Promise<void> {
  try {
    await writeTrecRun(path, run, options);
  } catch (error) {
    if (ZerdaError.isInstance(error)) throw error;
    const reason =
      error instanceof Error && 'code' in error && typeof error.code === 'string'
        ? error.code
        : String(error);
    throw new DatasetError({ path, message: `the run file cannot be written (${reason})`, cause: error });
  }
}
