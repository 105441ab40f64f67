import { Document, type DocumentInterface } from '@langchain/core/documents';
import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import { FakeVectorStore } from '@langchain/core/utils/testing';
import { VectorStore } from '@langchain/core/vectorstores';

interface Entry {
  id: string;
  content: string;
  metadata: Record<string, unknown>;
  embedding: number[];
}

/**
 * A minimal but complete LangChain vector store, built on LangChain's real `VectorStore` base
 * class, as current LangChain stores behave: documents keyed by id (`options.ids`, else
 * `Document.id`, else a UUID), replaced when added again, `delete({ ids })`, Documents returned
 * with their id, a function filter. (`FakeVectorStore` in @langchain/core 1.4.0 keeps no ids
 * and cannot delete.) It ranks by `metric` and returns similarities (cosine, inner product,
 * `1 / (1 + d)` for l2) or, with `scores: 'distance'`, distances (cosine distance `1 - cos`,
 * negative inner product, Euclidean distance), best first, as Chroma or PGVector do.
 */
export class KeyedMemoryVectorStore extends VectorStore {
  declare FilterType: (document: Document) => boolean;

  readonly entries = new Map<string, Entry>();
  readonly metric: 'cosine' | 'dot' | 'l2';
  readonly scores: 'similarity' | 'distance';
  /** Calls to similaritySearchVectorWithScore, with their k. */
  readonly searches: number[] = [];

  _vectorstoreType(): string {
    return 'keyed-memory';
  }

  constructor(
    embeddings: EmbeddingsInterface,
    options: { metric?: 'cosine' | 'dot' | 'l2'; scores?: 'similarity' | 'distance' } = {},
  ) {
    super(embeddings, {});
    this.metric = options.metric ?? 'cosine';
    this.scores = options.scores ?? 'similarity';
  }

  async addDocuments(documents: DocumentInterface[], options: { ids?: string[] } = {}): Promise<string[]> {
    const vectors = await this.embeddings.embedDocuments(documents.map((document) => document.pageContent));
    return this.addVectors(vectors, documents, options);
  }

  async addVectors(
    vectors: number[][],
    documents: DocumentInterface[],
    options: { ids?: string[] } = {},
  ): Promise<string[]> {
    return documents.map((document, index) => {
      const id = options.ids?.[index] ?? document.id ?? crypto.randomUUID();
      this.entries.set(id, {
        id,
        content: document.pageContent,
        metadata: structuredClone(document.metadata),
        embedding: [...(vectors[index] ?? [])],
      });
      return id;
    });
  }

  override async delete(params: { ids?: string[] } = {}): Promise<void> {
    for (const id of params.ids ?? []) this.entries.delete(id);
  }

  async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: this['FilterType'],
  ): Promise<[Document, number][]> {
    this.searches.push(k);
    const scored: Array<[Document, number]> = [];
    for (const entry of this.entries.values()) {
      const document = new Document({
        id: entry.id,
        pageContent: entry.content,
        metadata: structuredClone(entry.metadata),
      });
      if (filter && !filter(document)) continue;
      scored.push([document, this.score(query, entry.embedding)]);
    }
    scored.sort((a, b) => (this.scores === 'similarity' ? b[1] - a[1] : a[1] - b[1]));
    return scored.slice(0, k);
  }

  private score(a: number[], b: number[]): number {
    const similarity = this.scores === 'similarity';
    switch (this.metric) {
      case 'cosine': {
        const value = cosine(a, b);
        return similarity ? value : 1 - value;
      }
      case 'dot': {
        const value = dot(a, b);
        return similarity ? value : -value;
      }
      case 'l2': {
        let squared = 0;
        for (let index = 0; index < a.length; index++) squared += ((a[index] ?? 0) - (b[index] ?? 0)) ** 2;
        const distance = Math.sqrt(squared);
        return similarity ? 1 / (1 + distance) : distance;
      }
    }
  }
}

function dot(a: number[], b: number[]): number {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += (a[index] ?? 0) * (b[index] ?? 0);
  return sum;
}

function cosine(a: number[], b: number[]): number {
  const norms = Math.sqrt(dot(a, a)) * Math.sqrt(dot(b, b));
  return norms === 0 ? 0 : dot(a, b) / norms;
}

/** LangChain's own FakeVectorStore whose searches and writes throw, as a broken connection would. */
export class FailingVectorStore extends FakeVectorStore {
  readonly failure: Error;

  constructor(embeddings: EmbeddingsInterface, failure = new Error('connection reset by peer')) {
    super(embeddings);
    this.failure = failure;
  }

  override async similaritySearchVectorWithScore(): Promise<[Document, number][]> {
    throw this.failure;
  }

  override async addVectors(): Promise<void> {
    throw this.failure;
  }
}

/** LangChain's own FakeVectorStore that answers only after `delayMs`. */
export class SlowVectorStore extends FakeVectorStore {
  constructor(
    embeddings: EmbeddingsInterface,
    readonly delayMs: number,
  ) {
    super(embeddings);
  }

  override async similaritySearchVectorWithScore(
    query: number[],
    k: number,
    filter?: this['FilterType'],
  ): Promise<[Document, number][]> {
    await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    return super.similaritySearchVectorWithScore(query, k, filter);
  }
}

/**
 * A LangChain vector store that talks JSON over HTTP to `url`, as remote stores' clients do.
 * Pointed at a port where nothing listens, each call fails as a real client would (fetch's
 * TypeError, with the connection error as its cause).
 */
export class HttpVectorStore extends VectorStore {
  constructor(
    embeddings: EmbeddingsInterface,
    readonly url: string,
  ) {
    super(embeddings, {});
  }

  _vectorstoreType(): string {
    return 'http';
  }

  private async post<T>(path: string, body: unknown): Promise<T> {
    const response = await fetch(`${this.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status} from ${path}`);
    return (await response.json()) as T;
  }

  async addDocuments(documents: DocumentInterface[], options: { ids?: string[] } = {}): Promise<string[]> {
    const vectors = await this.embeddings.embedDocuments(documents.map((document) => document.pageContent));
    return this.addVectors(vectors, documents, options);
  }

  async addVectors(vectors: number[][], documents: DocumentInterface[], options: { ids?: string[] } = {}) {
    return this.post<string[]>('/upsert', { vectors, documents, ids: options.ids });
  }

  override async delete(params: { ids?: string[] } = {}): Promise<void> {
    await this.post('/delete', params);
  }

  async similaritySearchVectorWithScore(query: number[], k: number): Promise<[Document, number][]> {
    const rows = await this.post<Array<[DocumentInterface, number]>>('/query', { query, k });
    return rows.map(([document, score]) => [new Document(document), score]);
  }
}
