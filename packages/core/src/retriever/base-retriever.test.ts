import { describe, expect, it } from 'vitest';
import { AbortedError, InvalidArgumentError } from '../errors/index.js';
import type { ScoredChunk } from '../model/index.js';
import { BaseRetriever, type RerankHook, type RetrieveChunksOptions } from './base-retriever.js';

const hit = (id: string, score: number): ScoredChunk => ({
  chunk: { id, text: `text ${id}` },
  score,
  rank: 0,
  retriever: '',
  scores: {},
  ranks: {},
});

/** Returns `available` hits in a scrambled order and records what it was asked. */
class ListRetriever extends BaseRetriever {
  readonly name = 'list';
  readonly requests: Array<{ query: string; k: number; options: RetrieveChunksOptions }> = [];
  constructor(
    private readonly available: ScoredChunk[],
    options: ConstructorParameters<typeof BaseRetriever>[0] = {},
  ) {
    super(options);
  }
  protected async retrieveChunks(query: string, k: number, options: RetrieveChunksOptions) {
    this.requests.push({ query, k, options });
    await new Promise((resolve) => setTimeout(resolve, query.length % 3));
    // Its top k, handed back in no particular order (the base sorts).
    return this.available.slice(0, k).reverse();
  }
}

const pool = Array.from({ length: 30 }, (_, i) => hit(`c${String(i).padStart(2, '0')}`, 1 - i / 30));

describe('BaseRetriever', () => {
  it('sorts, truncates to k, numbers ranks, names the retriever and times the call', async () => {
    const retriever = new ListRetriever(pool);
    const result = await retriever.retrieve('q', { k: 5 });
    expect(result.hits.map((h) => h.chunk.id)).toEqual(['c00', 'c01', 'c02', 'c03', 'c04']);
    expect(result.hits.map((h) => h.rank)).toEqual([1, 2, 3, 4, 5]);
    expect(result.hits.every((h) => h.retriever === 'list')).toBe(true);
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(retriever.requests[0]?.k).toBe(5);
  });

  it('fetches 4k candidates for an attached reranker and lets it reorder before truncation', async () => {
    const reversed: RerankHook = {
      async rerank(_query, candidates) {
        return {
          hits: candidates.map((c) => ({ ...c, score: 1 - c.score })),
          warnings: [{ type: 'other', message: 'reranked' }],
        };
      },
    };
    const retriever = new ListRetriever(pool, { reranker: reversed, k: 3 });
    const result = await retriever.retrieve('q');
    expect(retriever.requests[0]?.k).toBe(12);
    expect(result.hits).toHaveLength(3);
    expect(result.hits[0]!.score).toBeGreaterThanOrEqual(result.hits[1]!.score);
    expect(result.warnings).toEqual([{ type: 'other', message: 'reranked' }]);
    const custom = new ListRetriever(pool, { reranker: reversed, fetchK: (k) => k + 1 });
    await custom.retrieve('q', { k: 2 });
    expect(custom.requests[0]?.k).toBe(3);
  });

  it('drops hits under the score threshold', async () => {
    const retriever = new ListRetriever(pool, { scoreThreshold: 0.92 });
    const result = await retriever.retrieve('q', { k: 10 });
    expect(result.hits.every((h) => h.score >= 0.92)).toBe(true);
    expect(result.hits).toHaveLength(3);
  });

  it('validates k and the query', async () => {
    const retriever = new ListRetriever(pool);
    for (const k of [0, -2, 1.5, Number.NaN]) {
      await expect(retriever.retrieve('q', { k })).rejects.toThrow(InvalidArgumentError);
    }
    await expect(retriever.retrieve(42 as never)).rejects.toThrow(/query/);
    expect(() => new ListRetriever(pool, { k: 0 })).toThrow(InvalidArgumentError);
  });

  it('runs batches with bounded concurrency and keeps input order', async () => {
    let running = 0;
    let peak = 0;
    class Slow extends ListRetriever {
      protected override async retrieveChunks(query: string, _k: number, _options: RetrieveChunksOptions) {
        running++;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 5 + (query.length % 4)));
        running--;
        return [hit(query, 1)];
      }
    }
    const queries = Array.from({ length: 20 }, (_, i) => `query-${'x'.repeat(i)}`);
    const results = await new Slow(pool).batchRetrieve(queries, { concurrency: 3 });
    expect(results.map((r) => r.query)).toEqual(queries);
    expect(results.map((r) => r.hits[0]?.chunk.id)).toEqual(queries);
    expect(peak).toBe(3);
  });

  it('stops on an aborted signal with AbortedError', async () => {
    const controller = new AbortController();
    controller.abort(new Error('user gave up'));
    const retriever = new ListRetriever(pool);
    await expect(retriever.retrieve('q', { signal: controller.signal })).rejects.toThrow(AbortedError);
    await expect(retriever.batchRetrieve(['a', 'b'], { signal: controller.signal })).rejects.toThrow(
      AbortedError,
    );
  });
});
