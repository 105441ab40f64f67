import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { IndexFormatError } from '../errors/index.js';
import { compileFilter, parseFilter } from '../filter/index.js';
import { type Chunk, normalizeChunks, RetrievalMethod, type ScoredChunk } from '../model/index.js';
import {
  BaseRetriever,
  type BaseRetrieverOptions,
  type RetrieveChunksOptions,
  type RetrievedChunks,
} from '../retriever/index.js';
import type { Analyzer } from '../text/index.js';
import { BM25Index, type BM25Options } from './bm25-index.js';

export interface KeywordRetrieverOptions extends BaseRetrieverOptions, BM25Options {
  /** Name reported on hits (default 'keyword'). */
  name?: string;
  /** An existing index to serve (its analyser, k1 and b then apply). */
  index?: BM25Index;
}

const INDEX_FILE = 'keyword-index.bin';
const CHUNKS_FILE = 'chunks.jsonl';

/**
 * BM25 keyword retrieval over chunks. Scores are normalised by the query's top score, so the best
 * hit scores 1; the raw BM25 score is kept in the explanation. Metadata filters are evaluated
 * on the chunks while scoring, never ignored.
 */
export class KeywordRetriever extends BaseRetriever {
  readonly name: string;
  readonly index: BM25Index;
  private readonly byId = new Map<string, Chunk>();

  constructor(options: KeywordRetrieverOptions = {}) {
    super(options);
    this.name = options.name ?? 'keyword';
    this.index = options.index ?? new BM25Index(options);
  }

  /** Number of chunks indexed. */
  get size(): number {
    return this.byId.size;
  }

  get(id: string): Chunk | undefined {
    return this.byId.get(id);
  }

  /**
   * Adds chunks (Zerda chunks, LangChain documents, `{ id, content }` objects), replacing any with
   * the same id. The whole batch is validated first: a bad one throws and changes nothing.
   */
  add(chunks: Iterable<unknown>): void {
    const batch = normalizeChunks(chunks);
    this.index.add(batch);
    for (const chunk of batch) this.byId.set(chunk.id, chunk);
  }

  /** Every chunk, in insertion order (so a MetadataRetriever can use this as its source). */
  *chunks(): IterableIterator<Chunk> {
    for (const id of this.index.documentIds()) yield this.byId.get(id) as Chunk;
  }

  /** Removes chunks by id; returns how many there were. */
  remove(ids: Iterable<string>): number {
    const list = [...ids];
    const removed = this.index.remove(list);
    for (const id of list) this.byId.delete(id);
    return removed;
  }

  protected async retrieveChunks(
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks> {
    const matches = options.filter === undefined ? undefined : compileFilter(parseFilter(options.filter));
    const chunks = this.byId;
    const { hits, matched } = this.index.searchWithCount(query, k, {
      accept: matches ? (id) => matches(chunks.get(id) as Chunk) : undefined,
    });
    const top = hits[0]?.score ?? 1;
    const scored = hits.map(({ id, score }, index): ScoredChunk => {
      const normalised = score / top;
      return {
        chunk: chunks.get(id) as Chunk,
        score: normalised,
        rank: index + 1,
        retriever: this.name,
        scores: { [RetrievalMethod.Keyword]: normalised },
        ranks: { [RetrievalMethod.Keyword]: index + 1 },
        explanation: {
          method: 'bm25',
          description: `BM25 ${score.toFixed(4)} divided by the query's top score ${top.toFixed(4)}`,
          components: { bm25: score },
        },
      };
    });
    return { hits: scored, total: matched };
  }

  /** Saves the index and the chunks into a directory (each file written atomically). */
  async save(directory: string): Promise<void> {
    await mkdir(directory, { recursive: true });
    const lines = [...this.index.documentIds()].map((id) => JSON.stringify(this.byId.get(id)));
    const stamp = `${process.pid}.${Date.now()}.tmp`;
    const files: Array<[string, string | Uint8Array]> = [
      [CHUNKS_FILE, lines.join('\n')],
      [INDEX_FILE, this.index.serialize()],
    ];
    try {
      for (const [name, content] of files) await writeFile(join(directory, `${name}.${stamp}`), content);
      for (const [name] of files) await rename(join(directory, `${name}.${stamp}`), join(directory, name));
    } finally {
      for (const [name] of files) await rm(join(directory, `${name}.${stamp}`), { force: true });
    }
  }

  /** Loads a directory written by `save`; the analyser must match the one used to build it. */
  static async load(
    directory: string,
    options: Omit<KeywordRetrieverOptions, 'k1' | 'b'> & { analyzer?: Analyzer } = {},
  ): Promise<KeywordRetriever> {
    const indexPath = join(directory, INDEX_FILE);
    const index = await BM25Index.load(indexPath, options);
    const chunksPath = join(directory, CHUNKS_FILE);
    let text: string;
    try {
      text = await readFile(chunksPath, 'utf8');
    } catch (error) {
      throw new IndexFormatError({ message: 'Cannot read the chunks file', path: chunksPath, cause: error });
    }
    let chunks: Chunk[];
    try {
      chunks = normalizeChunks(text.length === 0 ? [] : text.split('\n').map((line) => JSON.parse(line)));
    } catch (error) {
      throw new IndexFormatError({ message: 'The chunks file is corrupt', path: chunksPath, cause: error });
    }
    if (chunks.length !== index.size || chunks.some((chunk) => !index.has(chunk.id))) {
      throw new IndexFormatError({
        message: 'The chunks file does not match the index file',
        path: chunksPath,
      });
    }
    const retriever = new KeywordRetriever({ ...options, index });
    for (const chunk of chunks) retriever.byId.set(chunk.id, chunk);
    return retriever;
  }
}
