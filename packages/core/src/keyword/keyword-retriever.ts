import { IndexFormatError } from '../errors/index.js';
import { compileFilter, parseFilter } from '../filter/index.js';
import { type Chunk, normalizeChunks, RetrievalMethod, type ScoredChunk } from '../model/index.js';
import {
  BaseRetriever,
  type BaseRetrieverOptions,
  type RetrieveChunksOptions,
  type RetrievedChunks,
} from '../retriever/index.js';
import { BM25Index, type BM25Options, idList } from './bm25-index.js';

export interface KeywordRetrieverOptions extends BaseRetrieverOptions, BM25Options {
  /** Name reported on hits (default 'keyword'). */
  name?: string;
  /** An existing index to serve (its analyser, k1 and b then apply). */
  index?: BM25Index;
}

/**
 * BM25 keyword retrieval over chunks. Scores are normalised by the query's top score, so the best
 * hit scores 1; the raw BM25 score is kept in the explanation. Metadata filters are evaluated
 * on the chunks while scoring, never ignored.
 */
export class KeywordRetriever extends BaseRetriever {
  readonly name: string;
  readonly index: BM25Index;
  /** The chunks by id; undefined while `inSlots` serves instead. */
  private byId: Map<string, Chunk> | undefined = new Map();
  /**
   * After `fromParts` with chunks in the order of an index whose documents fill slots 0 .. n-1 (a
   * collection's saved state), until the first write: the chunk of slot i at i, found through the
   * index's own id map rather than a second map of every id built on open.
   */
  private inSlots: Chunk[] | undefined;

  /** BM25 scores are >= 0 (hits carry them divided by the query's best, in (0, 1]). */
  override get scoreLowerBound(): number {
    return 0;
  }

  constructor(options: KeywordRetrieverOptions = {}) {
    super(options);
    this.name = options.name ?? 'keyword';
    this.index = options.index ?? new BM25Index(options);
  }

  /** Number of chunks indexed. */
  get size(): number {
    return this.inSlots?.length ?? (this.byId as Map<string, Chunk>).size;
  }

  get(id: string): Chunk | undefined {
    const inSlots = this.inSlots;
    if (inSlots === undefined) return (this.byId as Map<string, Chunk>).get(id);
    const slot = this.index.slot(id);
    const chunk = slot === undefined ? undefined : inSlots[slot];
    // Checked, should the index have been changed behind this retriever's back.
    return chunk?.id === id ? chunk : undefined;
  }

  /** The map by id, built from the slots on the first write after `fromParts`. */
  private chunksById(): Map<string, Chunk> {
    if (this.byId === undefined) {
      const byId = new Map<string, Chunk>();
      for (const chunk of this.inSlots as Chunk[]) byId.set(chunk.id, chunk);
      this.byId = byId;
      this.inSlots = undefined;
    }
    return this.byId;
  }

  /**
   * Adds chunks (Zerda chunks, LangChain documents, `{ id, content }` objects), replacing any with
   * the same id. The whole batch is validated first: a bad one throws and changes nothing.
   */
  add(chunks: Iterable<unknown>): void {
    const batch = normalizeChunks(chunks);
    const byId = this.chunksById();
    this.index.add(batch);
    for (const chunk of batch) byId.set(chunk.id, chunk);
  }

  /** Every chunk, in insertion order (so a MetadataRetriever can use this as its source). */
  *chunks(): IterableIterator<Chunk> {
    for (const id of this.index.documentIds()) yield this.get(id) as Chunk;
  }

  /** Removes chunks by id; returns how many there were. */
  remove(ids: Iterable<string>): number {
    const list = idList(ids);
    const byId = this.chunksById();
    const removed = this.index.remove(list);
    for (const id of list) byId.delete(id);
    return removed;
  }

  protected async retrieveChunks(
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks> {
    const matches = options.filter === undefined ? undefined : compileFilter(parseFilter(options.filter));
    const { hits, matched } = this.index.searchWithCount(query, k, {
      accept: matches ? (id) => matches(this.get(id) as Chunk) : undefined,
    });
    const top = hits[0]?.score ?? 1;
    const scored = hits.map(({ id, score }, index): ScoredChunk => {
      const normalised = score / top;
      return {
        chunk: this.get(id) as Chunk,
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

  /**
   * A retriever over an index and its chunks (as `index.serialize()` and `chunks()` gave them, for
   * storage other than a folder), checked to agree: an IndexFormatError otherwise.
   */
  static fromParts(
    index: BM25Index,
    chunks: Chunk[],
    options: Omit<KeywordRetrieverOptions, 'k1' | 'b' | 'index'> = {},
    /** Where the chunks came from, for the error. */
    source = 'the chunks given',
  ): KeywordRetriever {
    return KeywordRetriever.assemble(index, chunks, source, options);
  }

  private static assemble(
    index: BM25Index,
    chunks: Chunk[],
    chunksPath: string,
    options: Omit<KeywordRetrieverOptions, 'k1' | 'b'>,
  ): KeywordRetriever {
    if (chunks.length !== index.size) {
      throw new IndexFormatError({
        message: 'The chunks file does not match the index file',
        path: chunksPath,
      });
    }
    // Chunks in the index's own order (as a collection saves them) match its ids one by one, which
    // proves them the same set with no lookup; otherwise each id is looked up.
    let position = 0;
    for (const id of index.documentIds()) {
      if ((chunks[position] as Chunk).id !== id) break;
      position++;
    }
    const inOrder = position === chunks.length;
    if (!inOrder && chunks.some((chunk) => !index.has(chunk.id))) {
      throw new IndexFormatError({
        message: 'The chunks file does not match the index file',
        path: chunksPath,
      });
    }
    const retriever = new KeywordRetriever({ ...options, index });
    const last = chunks[chunks.length - 1];
    // In increasing slot order, n documents whose last is in slot n-1 fill slots 0 .. n-1.
    if (inOrder && last !== undefined && index.slot(last.id) === chunks.length - 1) {
      retriever.byId = undefined;
      retriever.inSlots = chunks.slice();
      return retriever;
    }
    const byId = retriever.chunksById();
    for (const chunk of chunks) byId.set(chunk.id, chunk);
    // As many chunks as documents, each in the index, and none twice: the same ids.
    if (!inOrder && byId.size !== index.size) {
      throw new IndexFormatError({ message: 'The chunks file names a chunk twice', path: chunksPath });
    }
    return retriever;
  }
}
