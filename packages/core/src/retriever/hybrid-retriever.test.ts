import { describe, expect, it } from 'vitest';
import { BackendError, FusionConfigError, RetrievalError } from '../errors/index.js';
import { parseFusionConfig, reciprocalRankFusion, scoreFusion } from '../fusion/index.js';
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
  it("'rrf' is Σ w / (k + rank) exactly: no guard scales it, and naming one is an error", async () => {
    // Flat cosine-like scores, which the weighted methods' guard reads as weak evidence.
    const flat: Array<[string, number]> = [
      ['a', 0.81],
      ['b', 0.8],
      ['c', 0.79],
    ];
    const keyword = new FixedRetriever('keyword', flat);
    const vector = new FixedRetriever('vector', flat);
    for (const fusion of ['rrf' as const, { version: 1, method: 'rrf' } as const]) {
      const { hits } = await new HybridRetriever({ keyword, vector, fusion }).retrieve('q', { k: 3 });
      expect(hits[0]?.chunk.id).toBe('a');
      expect(hits[0]?.score).toBe(1 / 61 + 1 / 61);
      expect(hits[2]?.score).toBe(1 / 63 + 1 / 63);
      expect(hits[0]?.explanation?.components).toEqual({ keyword: 1 / 61, vector: 1 / 61 });
    }
    const refused = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return error;
      }
      throw new Error('not refused');
    };
    const named = refused(
      () => new HybridRetriever({ keyword, vector, fusion: { version: 1, method: 'rrf', guard: true } }),
    );
    expect(FusionConfigError.isInstance(named) && named.key).toBe('guard');
    const option = refused(
      () => new HybridRetriever({ keyword, vector, fusion: 'rrf', guard: { minSpread: 0.3 } }),
    );
    expect(FusionConfigError.isInstance(option) && option.key).toBe('guard');
    // Turning it off is allowed, and so is the guard on the weighted methods.
    expect(
      () => new HybridRetriever({ keyword, vector, fusion: { version: 1, method: 'rrf', guard: false } }),
    ).not.toThrow();
    // In 'weighted+rrf' the guard lowers the weighted part only; the RRF bonus keeps the given weights.
    const spread = new FixedRetriever('keyword', keywordRanking);
    const both = await new HybridRetriever({ keyword: spread, vector, fusion: 'weighted+rrf' }).retrieve(
      'q',
      {
        k: 3,
      },
    );
    const a = both.hits.find((hit) => hit.chunk.id === 'a');
    expect(a?.explanation?.components?.rrfBonus).toBeCloseTo(
      (0.5 * ((1 / 61 + 1 / 61) / (2 / 61))) / 1.5,
      12,
    );
    const b = both.hits.find((hit) => hit.chunk.id === 'b');
    expect(b?.explanation?.components?.rrfBonus).toBeCloseTo(
      (0.5 * ((1 / 62 + 1 / 62) / (2 / 61))) / 1.5,
      12,
    );
  });

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

  it('over-fetches 2k (at least 200) from each branch and passes the filter to every branch', async () => {
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
    const counting = new HybridRetriever({ keyword: new Counting('keyword', keywordRanking) });
    await counting.retrieve('q', { k: 3 });
    await counting.retrieve('q', { k: 100 });
    await counting.retrieve('q', { k: 150 });
    expect(seen).toEqual([200, 200, 300]);
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

  it("hands each branch the caller's signal, joined with its own timeout's where there is one", async () => {
    const keyword = new FixedRetriever('keyword', keywordRanking);
    const vector = new FixedRetriever('vector', vectorRanking);
    const caller = new AbortController();
    await new HybridRetriever({ keyword, vector }).retrieve('q', { signal: caller.signal });
    await new HybridRetriever({ keyword, vector }).retrieve('q');
    for (const branch of [keyword, vector]) {
      expect(branch.calls[0]?.signal).toBe(caller.signal);
      expect(branch.calls[1]?.signal).toBeUndefined();
    }

    const timed = new FixedRetriever('keyword', keywordRanking);
    const timedHybrid = new HybridRetriever({ keyword: timed, branchTimeoutMs: 1_000 });
    await timedHybrid.retrieve('q', { signal: caller.signal });
    await timedHybrid.retrieve('q');
    const [joined, own] = timed.calls.map((call) => call.signal);
    expect(joined).toBeInstanceOf(AbortSignal);
    expect(own).toBeInstanceOf(AbortSignal);
    expect(joined).not.toBe(caller.signal);
    expect(joined?.aborted).toBe(false);
    caller.abort(new Error('user gave up'));
    expect(joined?.aborted).toBe(true);
    expect(own?.aborted).toBe(false);
  });

  it('fails with a typed, retryable timeout per branch when every branch times out', async () => {
    const hybrid = new HybridRetriever({
      keyword: new FixedRetriever('keyword', keywordRanking, 'hang'),
      vector: new FixedRetriever('vector', vectorRanking, 'hang'),
      branchTimeoutMs: 30,
    });
    const error = await hybrid.retrieve('q').catch((e: unknown) => e);
    expect(RetrievalError.isInstance(error)).toBe(true);
    for (const { branch, error: cause } of (error as RetrievalError).failures) {
      expect(BackendError.isInstance(cause), branch).toBe(true);
      expect(cause).toMatchObject({ backend: branch, operation: 'retrieve', retryable: true });
    }
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
    const bad = () =>
      new HybridRetriever({
        keyword: new FixedRetriever('k', []),
        fusion: { version: 2, method: 'rrf' } as never,
      });
    expect(bad).toThrow(FusionConfigError);
    expect(bad).toThrow(/'version'/);
  });

  it("keeps each branch's own weight unless the setting or the options name it", () => {
    const keyword = new FixedRetriever('keyword', keywordRanking);
    const vector = new FixedRetriever('vector', vectorRanking);
    const own = new HybridRetriever({
      keyword,
      branches: [{ name: 'vector', retriever: vector, weight: 0.3 }],
    });
    expect(own.fusionSettings.weights).toEqual({ keyword: 1, vector: 0.3 });
    const set = new HybridRetriever({
      keyword,
      branches: [{ name: 'vector', retriever: vector, weight: 0.3 }],
      fusion: { version: 1, method: 'rrf', weights: { vector: 0.6 } },
      weights: { keyword: 2 },
    });
    expect(set.fusionSettings.weights).toEqual({ keyword: 2, vector: 0.6 });
  });

  it('reads a fusion setting: method, weights, RRF k, a fixed depth, the guard', async () => {
    const keyword = new FixedRetriever('keyword', keywordRanking);
    const vector = new FixedRetriever('vector', vectorRanking);
    const setting = parseFusionConfig(
      '{"version": 1, "method": "rrf", "weights": {"keyword": 3, "vector": 1}, "rrfK": 1, "depth": 3, "guard": false}',
    );
    const hybrid = new HybridRetriever({ keyword, vector, fusion: setting });
    expect(hybrid.fusion).toBe('rrf');
    expect(hybrid.fusionSettings).toMatchObject({
      rrfK: 1,
      depth: 3,
      guard: false,
      weights: { keyword: 3, vector: 1 },
    });
    const result = await hybrid.retrieve('q', { k: 2 });
    // A fixed depth: each branch fetched 3, whatever k is.
    expect(keyword.calls).toHaveLength(1);
    const expected = reciprocalRankFusion(
      [
        { name: 'keyword', items: keywordRanking.slice(0, 3).map(([id, score]) => ({ id, score })) },
        { name: 'vector', items: vectorRanking.slice(0, 3).map(([id, score]) => ({ id, score })) },
      ],
      { k: 1, weights: [3, 1] },
    );
    expect(result.hits.map((h) => h.chunk.id)).toEqual(expected.slice(0, 2).map((item) => item.id));
    expect(result.hits[0]?.score).toBeCloseTo(expected[0]?.score as number, 12);
  });

  it('lowers the weight of a branch whose top scores are flat (the weak-branch guard), unless turned off', async () => {
    // Keyword: a clear winner. Vector: ten candidates within 0.02 of each other on [-1, 0.5].
    const keyword = new FixedRetriever('keyword', [
      ['k1', 1],
      ['k2', 0.5],
      ['k3', 0.4],
      ['k4', 0.3],
    ]);
    const flat: Array<[string, number]> = Array.from({ length: 10 }, (_, i) => [`v${i}`, 0.5 - i * 0.002]);
    class Cosine extends FixedRetriever {
      override get scoreLowerBound(): number {
        return -1;
      }
    }
    const vector = new Cosine('vector', flat);
    const guarded = await new HybridRetriever({ keyword, vector }).retrieve('q', { k: 4 });
    const unguarded = await new HybridRetriever({ keyword, vector, guard: false }).retrieve('q', { k: 4 });
    // Without the guard, the flat vector list's best (normalised to 1) ties with keyword's best.
    expect(unguarded.hits.slice(0, 2).map((h) => h.chunk.id)).toEqual(['k1', 'v0']);
    // With it, keyword's ranking leads, and the explanation says why.
    expect(guarded.hits.slice(0, 2).map((h) => h.chunk.id)).toEqual(['k1', 'k2']);
    const v0 = (await new HybridRetriever({ keyword, vector }).retrieve('q', { k: 20 })).hits.find(
      (h) => h.chunk.id === 'v0',
    );
    expect(v0?.explanation?.description).toMatch(/weak evidence: spread 0\.01\d+/);
    // A branch can be exempt, as the metadata branch is.
    const exempt = await new HybridRetriever({
      keyword,
      branches: [{ name: 'vector', retriever: vector, guard: false }],
    }).retrieve('q', { k: 2 });
    expect(exempt.hits.map((h) => h.chunk.id)).toEqual(unguarded.hits.slice(0, 2).map((h) => h.chunk.id));
  });
});
