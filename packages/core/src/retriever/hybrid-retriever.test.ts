import { describe, expect, it } from 'vitest';
import { BackendError, RetrievalError } from '../errors/index.js';
import { reciprocalRankFusion, scoreFusion } from '../fusion/index.js';
import { KeywordRetriever } from '../keyword/index.js';
import type { Chunk, ScoredChunk } from '../model/index.js';
import { BaseRetriever, type RetrieveChunksOptions } from './base-retriever.js';
import { HybridRetriever } from './hybrid-retriever.js';
import { MetadataRetriever } from './metadata-retriever.js';

const chunk = (id: string, text = `text of ${id}`, metadata: Chunk['metadata'] = {}): Chunk => ({
  id,
  text,
  metadata,
});

/** A branch that returns a fixed ranking (scores given), or fails, or hangs. */
class FixedRetriever extends BaseRetriever {
  calls: RetrieveChunksOptions[] = [];
  constructor(
    readonly name: string,
    private readonly ranking: Array<[string, number]>,
    private readonly behaviour: 'answer' | 'fail' | 'hang' = 'answer',
  ) {
    super();
  }
  protected async retrieveChunks(_query: string, k: number, options: RetrieveChunksOptions) {
    this.calls.push(options);
    if (this.behaviour === 'fail')
      throw new BackendError({ backend: 'fake', operation: 'search', message: 'connection refused' });
    if (this.behaviour === 'hang') await new Promise((resolve) => setTimeout(resolve, 5_000));
    return this.ranking.slice(0, k).map(
      ([id, score], index): ScoredChunk => ({
        chunk: chunk(id),
        score,
        rank: index + 1,
        retriever: this.name,
        scores: { [this.name]: score },
        ranks: { [this.name]: index + 1 },
      }),
    );
  }
}

// Keyword strongly prefers a; vector mildly prefers b, which both branches found near the top.
const keywordRanking: Array<[string, number]> = [
  ['a', 1],
  ['b', 0.2],
  ['c', 0.19],
  ['d', 0.1],
];
const vectorRanking: Array<[string, number]> = [
  ['b', 0.8],
  ['e', 0.79],
  ['a', 0.3],
  ['c', 0.29],
];

describe('HybridRetriever', () => {
  it('fuses with RRF exactly as the fusion functions do on the same lists', async () => {
    const hybrid = new HybridRetriever({
      keyword: new FixedRetriever('keyword', keywordRanking),
      vector: new FixedRetriever('vector', vectorRanking),
      fusion: 'rrf',
    });
    const result = await hybrid.retrieve('q', { k: 5 });
    const expected = reciprocalRankFusion([
      { name: 'keyword', items: keywordRanking.map(([id, score]) => ({ id, score })) },
      { name: 'vector', items: vectorRanking.map(([id, score]) => ({ id, score })) },
    ]);
    expect(result.hits.map((h) => h.chunk.id)).toEqual(expected.map((item) => item.id));
    result.hits.forEach((hit, i) => {
      expect(hit.score).toBeCloseTo(expected[i]!.score, 12);
    });
    const b = result.hits.find((h) => h.chunk.id === 'b')!;
    expect(b.scores).toEqual({ keyword: 0.2, vector: 0.8 });
    expect(b.ranks).toEqual({ keyword: 2, vector: 1 });
    expect(b.explanation?.method).toBe('rrf');
    expect(b.explanation?.description).toContain('keyword rank 2');
  });

  it('really adds the RRF bonus in weighted+rrf: it changes the ranking of the weighted scores', async () => {
    // Weighted scores favour a (1 and 0.97); reciprocal ranks favour b (ranks 2 and 1 against 1 and 4).
    const keyword: Array<[string, number]> = [
      ['a', 1],
      ['b', 0.95],
      ['c', 0],
    ];
    const vector: Array<[string, number]> = [
      ['b', 1],
      ['e', 0.99],
      ['f', 0.98],
      ['a', 0.97],
      ['c', 0],
    ];
    const branches = () => ({
      keyword: new FixedRetriever('keyword', keyword),
      vector: new FixedRetriever('vector', vector),
    });
    const weighted = await new HybridRetriever({ ...branches(), fusion: 'weighted' }).retrieve('q', { k: 5 });
    const both = await new HybridRetriever({
      ...branches(),
      fusion: 'weighted+rrf',
      rrfBonusWeight: 2,
    }).retrieve('q', { k: 5 });
    expect(weighted.hits[0]?.chunk.id).toBe('a');
    expect(both.hits[0]?.chunk.id).toBe('b');
    const expectedWeighted = scoreFusion([
      { name: 'keyword', items: keyword.map(([id, score]) => ({ id, score })) },
      { name: 'vector', items: vector.map(([id, score]) => ({ id, score })) },
    ]);
    expect(weighted.hits.map((h) => h.chunk.id)).toEqual(expectedWeighted.map((item) => item.id).slice(0, 5));
    for (const hit of both.hits) {
      const components = hit.explanation?.components ?? {};
      expect(components.rrfBonus).toBeGreaterThan(0);
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
  });

  it('over-fetches 2k from each branch and passes the filter to every branch', async () => {
    const keyword = new FixedRetriever('keyword', keywordRanking);
    const vector = new FixedRetriever('vector', vectorRanking);
    await new HybridRetriever({ keyword, vector }).retrieve('q', { k: 2, filter: { lang: 'en' } });
    expect(keyword.calls[0]?.filter).toEqual({ lang: 'en' });
    expect(vector.calls[0]?.filter).toEqual({ lang: 'en' });
    const seen: number[] = [];
    class Counting extends FixedRetriever {
      protected override async retrieveChunks(query: string, k: number, options: RetrieveChunksOptions) {
        seen.push(k);
        return super.retrieveChunks(query, k, options);
      }
    }
    await new HybridRetriever({ keyword: new Counting('keyword', keywordRanking) }).retrieve('q', { k: 3 });
    expect(seen).toEqual([6]);
  });

  it('answers from the other branches with a warning when one fails or times out', async () => {
    const hybrid = new HybridRetriever({
      keyword: new FixedRetriever('keyword', keywordRanking),
      vector: new FixedRetriever('vector', vectorRanking, 'fail'),
      branches: [{ name: 'slow', retriever: new FixedRetriever('slow', vectorRanking, 'hang') }],
      branchTimeoutMs: 50,
    });
    const result = await hybrid.retrieve('q', { k: 3 });
    expect(result.hits.map((h) => h.chunk.id)).toEqual(['a', 'b', 'c']);
    expect(result.warnings.map((w) => [w.type, w.source])).toEqual([
      ['partial-failure', 'vector'],
      ['partial-failure', 'slow'],
    ]);
    expect(result.warnings[0]?.message).toContain('connection refused');
    expect(result.warnings[1]?.message).toContain('within 50 ms');
  });

  it('fails with every cause when every branch fails', async () => {
    const hybrid = new HybridRetriever({
      keyword: new FixedRetriever('keyword', [], 'fail'),
      vector: new FixedRetriever('vector', [], 'fail'),
    });
    const error = await hybrid.retrieve('q').catch((e: unknown) => e);
    expect(RetrievalError.isInstance(error)).toBe(true);
    expect((error as RetrievalError).failures.map((f) => f.branch)).toEqual(['keyword', 'vector']);
  });

  it('filters the keyword branch too, and adds metadata matches as their own signal', async () => {
    const keyword = new KeywordRetriever({
      analyzer: { name: 'ws', analyze: (t) => t.toLowerCase().split(/\W+/u).filter(Boolean) },
    });
    keyword.add([
      chunk('en-1', 'solar power plants', { lang: 'en' }),
      chunk('ar-1', 'solar power in arabic', { lang: 'ar' }),
      chunk('en-2', 'wind farms', { lang: 'en' }),
    ]);
    const hybrid = new HybridRetriever({ keyword, metadata: new MetadataRetriever({ source: keyword }) });
    const result = await hybrid.retrieve('solar', { k: 5, filter: { lang: 'en' } });
    expect(result.hits.map((h) => h.chunk.id)).toEqual(['en-1', 'en-2']);
    expect(result.hits[0]?.ranks).toEqual({ keyword: 1, metadata: 1 });
    expect(result.hits[1]?.scores).toEqual({ metadata: 1 });
    const unfiltered = await hybrid.retrieve('solar', { k: 5 });
    expect(unfiltered.hits.map((h) => h.chunk.id).sort()).toEqual(['ar-1', 'en-1']);
  });

  it('refuses bad configuration', () => {
    expect(() => new HybridRetriever({})).toThrow(/at least one branch/);
    expect(
      () => new HybridRetriever({ keyword: new FixedRetriever('k', []), weights: { keyword: -1 } }),
    ).toThrow(/weights.keyword/);
    expect(
      () => new HybridRetriever({ keyword: new FixedRetriever('k', []), fusion: 'max' as never }),
    ).toThrow(/fusion/);
  });
});
