import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AbortedError, InvalidArgumentError } from '../errors/index.js';
import { KeywordRetriever } from '../keyword/index.js';
import type { ScoredChunk, SearchResult } from '../model/index.js';
import { FixedScoreLlm, hit } from '../rerank/__tests__/fake-llms.js';
import { Reranker } from '../rerank/index.js';
import { corpus, hybridOver } from './__tests__/corpus.js';
import { ContextEngine, type ContextRetriever, DEFAULT_RELATIVE_CUTOFF } from './context-engine.js';

const NOW = Date.parse('2025-06-01T00:00:00Z');

/** A retriever that returns fixed hits, whatever the question. */
function fixed(
  hits: ScoredChunk[],
  warnings: SearchResult['warnings'] = [],
): ContextRetriever & { queries: string[] } {
  const queries: string[] = [];
  return {
    queries,
    async retrieve(query) {
      queries.push(query);
      return { query, hits: hits.map((h) => ({ ...h })), total: hits.length, latencyMs: 0, warnings };
    },
  };
}

const markerPattern = /^\[(\d+)\] \(source: ([^)]*)\)$/gmu;

describe('ContextEngine', () => {
  it('answers over a hybrid retriever with source markers, counts, analysis and timings', async () => {
    // Every candidate kept (no score cutoffs), so the context has five sources to mark.
    const engine = new ContextEngine({
      retriever: await hybridOver(),
      k: 5,
      now: () => NOW,
      minRelativeScore: 0,
      relativeCutoff: false,
    });
    const result = await engine.buildContext('What does the Zerda reranker do?');
    expect(result.guardPassed).toBe(true);
    expect(result.guardWarnings).toEqual([]);
    expect(result.analysis).toMatchObject({
      language: 'en',
      intent: 'factual',
      complexity: 'low',
      budget: 2000,
    });
    expect(result.chunks[0]?.chunk.id).toBe('rerank-1');
    expect(result.context.startsWith('[1] (source: reranker-guide)\nThe Zerda reranker rescores')).toBe(true);
    const markers = [...result.context.matchAll(markerPattern)];
    expect(markers.map((m) => Number(m[1]))).toEqual(result.chunks.map((_, i) => i + 1));
    expect(markers.map((m) => m[2])).toEqual(result.chunks.map((c) => c.chunk.docId));
    for (const chunk of result.chunks) expect(result.context).toContain(chunk.chunk.text);
    expect(result.counts).toEqual({
      retrieved: 5,
      filtered: 5,
      relevant: 5,
      deduplicated: 5,
      ranked: 5,
      used: 5,
      partial: 0,
    });
    expect(result.size).toBe(result.context.length);
    expect(result.size).toBeLessThanOrEqual(result.budget);
    expect(result.latencyMs).toBeGreaterThan(0);
    expect(Object.keys(result.timings)).toEqual(['analysis', 'retrieval', 'rerank', 'ranking', 'assembly']);
    expect(result.chunks.map((c) => c.rank)).toEqual([1, 2, 3, 4, 5]);
    expect(result.chunks[0]?.explanation?.method).toBe('context-ranking');
    expect(result.chunks[0]?.scores.relevance).toBeDefined();
  });

  it('enriches a follow-up question from the recorded answer, so retrieval finds what the answer was about', async () => {
    const keyword = new KeywordRetriever();
    keyword.add(corpus);
    const run = async (recordAnswer: boolean) => {
      const engine = new ContextEngine({ retriever: keyword, k: 5 });
      await engine.buildContext('What does the Zerda reranker do?');
      if (recordAnswer)
        engine.recordAnswer('It rescores candidates and first removes near-duplicates with MinHash.');
      return { engine, result: await engine.buildContext('How quick is that?') };
    };
    const without = await run(false);
    expect(without.result.followUp).toBe(true);
    expect(without.result.retrievalQuery).not.toContain('MinHash');
    expect(without.result.chunks.map((c) => c.chunk.id)).not.toContain('rerank-2');

    const { engine, result } = await run(true);
    expect(result.followUp).toBe(true);
    expect(result.enrichment).toContain('MinHash');
    expect(result.retrievalQuery).toMatch(/^How quick is that\? .*MinHash/u);
    expect(result.analysis.query).toBe('How quick is that?');
    expect(result.chunks.map((c) => c.chunk.id)).toContain('rerank-2');
    expect(result.context).toContain('MinHash with locality-sensitive hashing');
    expect(engine.memory.turns.map((t) => [t.query, t.answer])).toEqual([
      [
        'What does the Zerda reranker do?',
        'It rescores candidates and first removes near-duplicates with MinHash.',
      ],
      ['How quick is that?', undefined],
    ]);
    expect(engine.getStats()).toMatchObject({
      queries: 2,
      followUps: 1,
      enrichedQueries: 1,
      answersRecorded: 1,
      turns: 2,
    });
  });

  it('answers an Arabic question over the same corpus', async () => {
    const engine = new ContextEngine({ retriever: await hybridOver(), k: 4 });
    const result = await engine.buildContext('ما هو التجذيع الخفيف للحروف العربية؟');
    expect(result.analysis.language).toBe('ar');
    expect(result.chunks[0]?.chunk.id).toBe('arabic-1');
    expect(result.context.startsWith('[1] (source: arabic-guide)')).toBe(true);
  });

  it('never exceeds the budget, whatever it is, in characters or tokens (property)', async () => {
    const retriever = await hybridOver();
    const byChars = new ContextEngine({ retriever, k: 8 });
    const byTokens = new ContextEngine({ retriever, k: 8, budgetUnit: 'tokens' });
    const words = (text: string) => text.match(/\S+/gu)?.length ?? 0;
    const byWords = new ContextEngine({ retriever, k: 8, budgetUnit: 'tokens', counter: words });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('What does the Zerda reranker do?', 'BM25 saturation', 'Chroma filters', 'العربية'),
        fc.nat(1500),
        async (question, budget) => {
          for (const [engine, counter] of [
            [byChars, (t: string) => t.length],
            [byTokens, (t: string) => Math.ceil(t.length / 4)],
            [byWords, words],
          ] as const) {
            const result = await engine.buildContext(question, { budget, remember: false });
            expect(counter(result.context)).toBeLessThanOrEqual(budget);
            expect(result.size).toBe(counter(result.context));
            const markers = [...result.context.matchAll(/^\[(\d+)\] \(source: [^)]*\)$/gmu)];
            expect(markers).toHaveLength(result.chunks.length);
            expect(result.guardWarnings.some((w) => w.startsWith('budget-overflow'))).toBe(false);
          }
        },
      ),
      { numRuns: 40 },
    );
    expect(byTokens.queryAnalyzer.budgets).toEqual({ low: 500, medium: 1000, high: 2000 });
  });

  it('fills the rest of the budget with a partial chunk cut after a word, marked as partial', async () => {
    const long = `${'alpha beta gamma delta '.repeat(40)}omega`;
    const engine = new ContextEngine({
      retriever: fixed([hit('short', 0.9, 'a short first chunk', 'd1'), hit('long', 0.8, long, 'd2')]),
      minPartialWords: 5,
    });
    const result = await engine.buildContext('alpha?', { budget: 200 });
    expect(result.partialChunkId).toBe('long');
    expect(result.counts.partial).toBe(1);
    expect(result.context).toMatch(/\n\n\[2\] \(source: d2, partial\)\nalpha beta gamma delta (\S+ )+…$/u);
    expect(result.context.length).toBeLessThanOrEqual(200);
    const cut = result.context.split('\n').at(-1)?.slice(0, -2) as string;
    expect(long.startsWith(cut)).toBe(true);
    expect(long[cut.length]).toBe(' ');
  });

  it('drops low scores and near-duplicates, keeping the better-scored copy', async () => {
    const text =
      'Reciprocal rank fusion adds one over sixty plus the rank for every list that found the chunk';
    const engine = new ContextEngine({
      retriever: fixed([
        hit('best', 0.9, text, 'a'),
        hit('copy', 0.7, `${text}.`, 'b'),
        hit('other', 0.5, 'Completely different content about vector stores and filters', 'c'),
        hit('weak', 0.05, 'Barely related text', 'd'),
      ]),
      minRelativeScore: 0.1,
    });
    const result = await engine.buildContext('What is reciprocal rank fusion?');
    expect(result.counts).toMatchObject({ retrieved: 4, filtered: 3, deduplicated: 2, used: 2 });
    expect(result.chunks.map((c) => c.chunk.id)).toEqual(['best', 'other']);
    const noDedup = new ContextEngine({
      retriever: fixed([hit('a', 1, text), hit('b', 1, text)]),
      deduplicate: false,
    });
    expect((await noDedup.buildContext('q')).chunks).toHaveLength(2);
  });

  it('ranks by relevance, source quality and recency', async () => {
    const text = (n: number) =>
      `Passage number ${n} about the same topic with distinct words ${'x'.repeat(n)}`;
    const oneHalfLifeAgo = new Date(NOW - 180 * 86_400_000).toISOString();
    const retriever = fixed([
      hit('old-low', 0.8, text(1), 'a', { quality: 'low', date: '2015-01-01' }),
      hit('new-high', 0.8, text(2), 'b', { sourceQuality: 3, date: '2025-05-31' }),
      hit('unknown', 0.8, text(3), 'c'),
      hit('half-life', 0.8, text(4), 'd', { updatedAt: oneHalfLifeAgo, quality: 'Medium' }),
    ]);
    const engine = new ContextEngine({ retriever, now: () => NOW, deduplicate: false });
    const result = await engine.buildContext('topic?');
    expect(result.chunks.map((c) => c.chunk.id)).toEqual(['new-high', 'half-life', 'unknown', 'old-low']);
    const byId = Object.fromEntries(result.chunks.map((c) => [c.chunk.id, c.explanation?.components]));
    expect(byId['half-life']?.recency).toBeCloseTo(0.15 * 0.5, 10);
    expect(byId['half-life']?.quality).toBeCloseTo(0.15 * (2 / 3), 10);
    expect(byId.unknown).toEqual({ relevance: 0.7, quality: 0.15 * 0.5, recency: 0.15 * 0.5 });
    // Relevance dominates by default; the weights are configurable.
    const relevanceOnly = new ContextEngine({
      retriever: fixed([
        hit('x', 0.9, text(5), 'a', { quality: 'low' }),
        hit('y', 0.5, text(6), 'b', { quality: 'high' }),
      ]),
      rankingWeights: { relevance: 0, quality: 1, recency: 0 },
    });
    expect((await relevanceOnly.buildContext('q')).chunks.map((c) => c.chunk.id)).toEqual(['y', 'x']);
  });

  it('reports guard failures: no chunks, a weak top score, an over-budget context', async () => {
    const empty = new ContextEngine({ retriever: new KeywordRetriever() });
    const none = await empty.buildContext('anything at all?');
    expect(none.guardPassed).toBe(false);
    expect(none.guardWarnings).toEqual(['no-chunks: retrieval found nothing for the question']);
    expect(none.context).toBe('');

    const weak = await new ContextEngine({
      retriever: fixed([hit('w', 0.05, 'weakly related text', 'd')]),
    }).buildContext('question?');
    expect(weak.guardPassed).toBe(false);
    expect(weak.guardWarnings).toEqual([
      expect.stringMatching(/^weak-top-score: the best chunk's relevance is 0.050/),
    ]);
    expect(weak.chunks).toHaveLength(1);

    const tiny = await new ContextEngine({
      retriever: fixed([hit('big', 0.9, 'x'.repeat(500), 'd')]),
    }).buildContext('question?', { budget: 20 });
    expect(tiny.guardWarnings).toEqual([
      expect.stringMatching(/^no-chunks: 1 chunk\(s\) qualified but none fits the budget of 20/),
    ]);

    // A counter that changes its answers cannot push a context over the budget: the guard says so.
    let calls = 0;
    const drifting = (t: string) => (++calls > 1 ? 10_000 : t.length);
    const overflow = await new ContextEngine({
      retriever: fixed([hit('a', 0.9, 'some text', 'd')]),
      counter: drifting,
    }).buildContext('question?');
    expect(overflow.guardWarnings.some((w) => w.startsWith('budget-overflow'))).toBe(true);
    expect(overflow.context).toBe('');
  });

  it('uses a reranker, passes warnings through, honours the filter and the signal', async () => {
    const retriever = fixed(
      [hit('a', 0.9, 'first passage doca', 'x'), hit('b', 0.8, 'second passage docb', 'y')],
      [{ type: 'partial-failure', message: 'the vector branch failed', source: 'vector' }],
    );
    const reranker = new Reranker({ mode: 'llm', llm: new FixedScoreLlm({ doca: 1, docb: 9 }) });
    // The cutoff off: the language model's 1 of 10 for 'a' would otherwise leave it out.
    const engine = new ContextEngine({ retriever, reranker, relativeCutoff: false });
    const result = await engine.buildContext('passage?');
    expect(result.counts.reranked).toBe(2);
    expect(result.chunks.map((c) => c.chunk.id)).toEqual(['b', 'a']);
    expect(result.warnings).toEqual([expect.objectContaining({ source: 'vector' })]);

    const keyword = new KeywordRetriever();
    keyword.add(corpus);
    const filtered = await new ContextEngine({ retriever: keyword }).buildContext('Zerda', {
      filter: { docId: 'backends' },
    });
    expect(filtered.chunks.map((c) => c.chunk.docId)).toEqual(['backends']);

    const controller = new AbortController();
    controller.abort();
    await expect(engine.buildContext('q', { signal: controller.signal })).rejects.toSatisfy((e) =>
      AbortedError.isInstance(e),
    );
  });

  it('rejects bad settings', () => {
    const retriever = fixed([]);
    expect(() => new ContextEngine({} as never)).toThrow(InvalidArgumentError);
    expect(() => new ContextEngine({ retriever, k: 0 })).toThrow(InvalidArgumentError);
    expect(() => new ContextEngine({ retriever, rankingWeights: { quality: -1 } })).toThrow(
      InvalidArgumentError,
    );
    expect(() => new ContextEngine({ retriever, deduplicate: { threshold: 2 } })).toThrow(
      InvalidArgumentError,
    );
    expect(() => new ContextEngine({ retriever, budgetUnit: 'pages' as never })).toThrow(
      InvalidArgumentError,
    );
    expect(() => new ContextEngine({ retriever, halfLifeDays: 0 })).toThrow(InvalidArgumentError);
  });
  it('leaves out chunks far below the best (the relative cutoff) and notes that the budget was not filled', async () => {
    // k = 4 candidates retrieved: the floor is the 4th score (0.2). 'c' is (0.3 - 0.2) / 0.7 = 0.14
    // of the way from the floor to the best: below the default 0.25, it stays out.
    const retriever = fixed([
      hit('a', 0.9, 'the best passage', 'x'),
      hit('b', 0.7, 'a good passage', 'y'),
      hit('c', 0.3, 'a filler passage', 'z'),
      hit('d', 0.2, 'another filler passage', 'w'),
    ]);
    const engine = new ContextEngine({ retriever, k: 4, minRelativeScore: 0 });
    const result = await engine.buildContext('passage?');
    expect(result.chunks.map((c) => c.chunk.id).sort()).toEqual(['a', 'b']);
    expect(result.counts).toMatchObject({ retrieved: 4, filtered: 4, relevant: 2, used: 2 });
    expect(result.guardPassed).toBe(true);
    expect(result.guardNotes).toEqual([
      expect.stringMatching(
        /^few-relevant: 2 of 4 retrieved chunk\(s\) are within the relative cutoff \(0\.25\)/,
      ),
    ]);
    expect(DEFAULT_RELATIVE_CUTOFF).toBe(0.25);

    // Off: the budget is filled with every candidate, and nothing is noted.
    const all = await new ContextEngine({
      retriever,
      k: 4,
      minRelativeScore: 0,
      relativeCutoff: false,
    }).buildContext('passage?');
    expect(all.chunks).toHaveLength(4);
    expect(all.guardNotes).toEqual([]);

    // Fewer candidates than k: the floor is 0, so 'c' (0.3 of the best) stays.
    const short = await new ContextEngine({ retriever, k: 10, minRelativeScore: 0 }).buildContext('passage?');
    expect(short.chunks.map((c) => c.chunk.id).sort()).toEqual(['a', 'b', 'c']);
    expect(() => new ContextEngine({ retriever, relativeCutoff: 1.5 })).toThrow(/relativeCutoff/);
  });
});
