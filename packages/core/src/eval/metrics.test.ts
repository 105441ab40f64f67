import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import {
  compareCodePoints,
  evaluateRun,
  judgedQueryIds,
  ndcgAt,
  parseMetric,
  precisionAt,
  rankRunEntries,
  recallAt,
  reciprocalRankAt,
} from './metrics.js';
import type { Qrels, Run } from './types.js';

// Graded judgments: a=3, b=2, c=1, d judged not relevant.
const judgments = new Map([
  ['a', 3],
  ['b', 2],
  ['c', 1],
  ['d', 0],
]);
// Ranking: d (0), a (3), x (unjudged), c (1).
const ranking = ['d', 'a', 'x', 'c'];

describe('ndcgAt', () => {
  it('uses linear gain, log2(rank + 1) discount and the ideal from every relevant judgment', () => {
    // DCG  = 0/log2(2) + 3/log2(3) + 0/log2(4) + 1/log2(5) = 1.892789 + 0.430677 = 2.323466
    // IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4)             = 3 + 1.261860 + 0.5  = 4.761860
    expect(ndcgAt(ranking, judgments, 10)).toBeCloseTo(0.487932459, 8);
  });

  it('cuts both the ranking and the ideal at k', () => {
    // DCG@2 = 3/log2(3) = 1.892789; IDCG@2 = 3 + 2/log2(3) = 4.261860
    expect(ndcgAt(ranking, judgments, 2)).toBeCloseTo(0.444122866, 8);
  });

  it('is 1 for the ideal ranking and 0 without relevant documents', () => {
    expect(ndcgAt(['a', 'b', 'c'], judgments, 10)).toBe(1);
    expect(ndcgAt(['d', 'x'], judgments, 10)).toBe(0);
    expect(ndcgAt(['a'], new Map([['a', 0]]), 10)).toBe(0);
    expect(ndcgAt([], judgments, 10)).toBe(0);
  });

  it('refuses a cutoff that is not a positive integer', () => {
    expect(() => ndcgAt(ranking, judgments, 0)).toThrow(InvalidArgumentError);
    expect(() => ndcgAt(ranking, judgments, 2.5)).toThrow(/positive integer/);
  });
});

describe('recallAt, precisionAt and reciprocalRankAt', () => {
  it('count documents with a grade above 0 as relevant', () => {
    expect(recallAt(ranking, judgments, 3)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(ranking, judgments, 4)).toBeCloseTo(2 / 3, 12);
    expect(recallAt(ranking, judgments, 100)).toBeCloseTo(2 / 3, 12);
    expect(precisionAt(ranking, judgments, 4)).toBe(0.5);
    expect(precisionAt(ranking, judgments, 10)).toBe(0.2);
    expect(reciprocalRankAt(ranking, judgments, 10)).toBe(0.5);
    expect(reciprocalRankAt(ranking, judgments, 1)).toBe(0);
    expect(reciprocalRankAt(['x', 'y', 'c'], judgments, 10)).toBeCloseTo(1 / 3, 12);
  });
});

describe('rankRunEntries', () => {
  it('sorts by score descending, then by document id descending as trec_eval does', () => {
    const entries = [
      { docId: 'd1', score: 1 },
      { docId: 'd3', score: 2 },
      { docId: 'd2', score: 1 },
      { docId: 'd10', score: 1 },
    ];
    expect(rankRunEntries(entries)).toEqual(['d3', 'd2', 'd10', 'd1']);
    expect(entries[0]?.docId).toBe('d1');
  });

  it('keeps the best-placed occurrence of a repeated document', () => {
    expect(
      rankRunEntries([
        { docId: 'a', score: 1 },
        { docId: 'b', score: 2 },
        { docId: 'a', score: 3 },
      ]),
    ).toEqual(['a', 'b']);
  });

  it('compares ids by code point (UTF-8 byte order)', () => {
    expect(compareCodePoints('a', 'b')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
    // U+1F600 (a surrogate pair in UTF-16) sorts after U+FF5E in UTF-8 byte order.
    expect(compareCodePoints('\u{1F600}', '\uFF5E')).toBeGreaterThan(0);
    expect(compareCodePoints('same', 'same')).toBe(0);
  });
});

describe('evaluateRun', () => {
  const qrels: Qrels = new Map([
    ['q1', new Map([['d1', 1]])],
    [
      'q2',
      new Map([
        ['d2', 2],
        ['d5', 1],
      ]),
    ],
    ['q3', new Map([['d9', 0]])], // no relevant document: not evaluated
  ]);

  it('averages over every judged query, a query missing from the run scoring 0', () => {
    // q1: ties at score 1 are ordered d3, d2, d1 (id descending) so d1 is third.
    const run: Run = new Map([
      [
        'q1',
        [
          { docId: 'd1', score: 1 },
          { docId: 'd2', score: 1 },
          { docId: 'd3', score: 1 },
        ],
      ],
      ['q3', [{ docId: 'd9', score: 5 }]],
    ]);
    const result = evaluateRun(run, qrels);
    expect(result.queryCount).toBe(2);
    expect(result.missingFromRun).toEqual(['q2']);
    // q1: nDCG@10 = (1/log2(4)) / 1 = 0.5; MRR = 1/3; recall = 1. q2: all 0.
    expect(result.perQuery.get('q1')).toEqual({ 'ndcg@10': 0.5, 'recall@100': 1, 'mrr@10': 1 / 3 });
    expect(result.metrics['ndcg@10']).toBe(0.25);
    expect(result.metrics['recall@100']).toBe(0.5);
    expect(result.metrics['mrr@10']).toBeCloseTo(1 / 6, 12);
  });

  it('computes the metrics asked for, over the queries asked for', () => {
    const run: Run = new Map([
      [
        'q2',
        [
          { docId: 'd5', score: 3 },
          { docId: 'd7', score: 2 },
          { docId: 'd2', score: 1 },
        ],
      ],
    ]);
    const result = evaluateRun(run, qrels, {
      metrics: ['ndcg@3', 'precision@2', 'recall@2'],
      queries: ['q2'],
    });
    // DCG = 1/1 + 2/log2(4) = 2; IDCG = 2/1 + 1/log2(3) = 2.630930
    expect(result.metrics['ndcg@3']).toBeCloseTo(2 / (2 + 1 / Math.log2(3)), 12);
    expect(result.metrics['precision@2']).toBe(0.5);
    expect(result.metrics['recall@2']).toBe(0.5);
  });

  it('returns zeros for no queries and lists judged queries', () => {
    expect(evaluateRun(new Map(), new Map()).metrics['ndcg@10']).toBe(0);
    expect(judgedQueryIds(qrels)).toEqual(['q1', 'q2']);
  });

  it('refuses an unknown metric', () => {
    expect(() => parseMetric('map@10')).toThrow(InvalidArgumentError);
    expect(() => parseMetric('ndcg@0')).toThrow(/unknown metric/);
    expect(parseMetric('NDCG@10')).toEqual({ metric: 'ndcg', k: 10 });
  });
});
