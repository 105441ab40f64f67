import { compileFilter, parseFilter } from '../filter/index.js';
import { type Chunk, RetrievalMethod, type ScoredChunk } from '../model/index.js';
import {
  BaseRetriever,
  type BaseRetrieverOptions,
  type RetrieveChunksOptions,
  type RetrievedChunks,
} from './base-retriever.js';

/** Anything that can list its chunks: a KeywordRetriever, the in-memory store, an array. */
export interface ChunkSource {
  chunks(): Iterable<Chunk>;
}

export interface MetadataRetrieverOptions extends BaseRetrieverOptions {
  /** Where the chunks come from; read at query time, so it follows later additions. */
  source: ChunkSource | readonly Chunk[];
  /** Name reported on hits (default 'metadata'). */
  name?: string;
}

/**
 * The structured signal: every chunk whose metadata satisfies the filter, each with score 1 (ties
 * ordered by id). Without a filter it has nothing to say and returns no hits.
 */
export class MetadataRetriever extends BaseRetriever {
  /** Every hit scores 1 (a filter matches or not); 0 is the floor. */
  override get scoreLowerBound(): number {
    return 0;
  }

  readonly name: string;
  private readonly source: ChunkSource;

  constructor(options: MetadataRetrieverOptions) {
    super(options);
    const { source } = options;
    this.source = Array.isArray(source)
      ? { chunks: () => source as readonly Chunk[] }
      : (source as ChunkSource);
    this.name = options.name ?? 'metadata';
  }

  protected async retrieveChunks(
    _query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks> {
    if (options.filter === undefined) return [];
    const node = parseFilter(options.filter);
    // `{}` is no filter at all, not a filter that everything satisfies.
    if (node.kind === 'and' && node.children.length === 0) return [];
    const matches = compileFilter(node);
    const found: Chunk[] = [];
    for (const chunk of this.source.chunks()) if (matches(chunk)) found.push(chunk);
    found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const hits = found.slice(0, k).map(
      (chunk, index): ScoredChunk => ({
        chunk,
        score: 1,
        rank: index + 1,
        retriever: this.name,
        scores: { [RetrievalMethod.Metadata]: 1 },
        ranks: { [RetrievalMethod.Metadata]: index + 1 },
        explanation: { method: 'metadata', description: 'matches the metadata filter' },
      }),
    );
    return { hits, total: found.length };
  }
}
