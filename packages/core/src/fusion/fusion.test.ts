import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import {
  type FusedItem,
  type RankedList,
  reciprocalRankFusion,
  type ScoreFusionOptions,
  scoreFusion,
} from './index.js';

const scoresOf = (fused: FusedItem[]) => Object.fromEntries(fused.map((f) => [f.id, f.score]));
const idsOf = (fused: FusedItem[]) => fused.map((f) => f.id);

describe('reciprocalRankFusion', () => {
  it('matches a hand-computed example (k = 60)', () => {
    const fused = reciprocalRankFusion([
      { name: 'vector', items: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] },
      {
        name: 'keyword',
        items: [
          { id: 'b', score: 7 },
          { id: 'c', score: 3 },
          { id: 'd', score: 1 },
        ],
      },
    ]);
    expect(idsOf(fused)).toEqual(['b', 'c', 'a', 'd']);
    const scores = scoresOf(fused);
    expect(scores.a).toBeCloseTo(1 / 61, 15);
    expect(scores.b).toBeCloseTo(1 / 62 + 1 / 61, 15);
    expect(scores.c).toBeCloseTo(1 / 63 + 1 / 62, 15);
    expect(scores.d).toBeCloseTo(1 / 63, 15);
    expect(fused[0]?.contributions).toEqual([
      { list: 'vector', rank: 2, contribution: 1 / 62 },
      { list: 'keyword', rank: 1, score: 7, contribution: 1 / 61 },
    ]);
  });

  it('applies weights from the option or from each list, and k', () => {
    const lists: RankedList[] = [{ items: [{ id: 'a' }, { id: 'b' }] }, { weight: 3, items: [{ id: 'b' }] }];
    expect(scoresOf(reciprocalRankFusion(lists, { k: 0 }))).toEqual({ a: 1, b: 1 / 2 + 3 });
    expect(scoresOf(reciprocalRankFusion(lists, { k: 0, weights: [2, 1] }))).toEqual({ a: 2, b: 1 + 1 });
    // Unnamed lists are labelled by their index.
    expect(reciprocalRankFusion(lists)[0]?.contributions.map((c) => c.list)).toEqual([0, 1]);
  });

  it('breaks ties by id', () => {
    const fused = reciprocalRankFusion([
      { items: [{ id: 'z' }] },
      { items: [{ id: 'm' }] },
      { items: [{ id: 'a' }] },
    ]);
    expect(idsOf(fused)).toEqual(['a', 'm', 'z']);
  });

  it('counts a duplicate once, at its first position, without taking a rank', () => {
    const fused = reciprocalRankFusion([{ items: [{ id: 'a' }, { id: 'a' }, { id: 'b' }] }], { k: 0 });
    expect(scoresOf(fused)).toEqual({ a: 1, b: 1 / 2 });
  });

  it('rejects bad input, naming the list and the item', () => {
    expect(() => reciprocalRankFusion([{ items: [] }], { k: -1 })).toThrow(InvalidArgumentError);
    expect(() => reciprocalRankFusion([{ items: [] }], { k: Number.NaN })).toThrow(/'k'/);
    expect(() => reciprocalRankFusion([{ items: [] }, { items: [] }], { weights: [1] })).toThrow(
      /one weight per list \(2\)/,
    );
    expect(() => reciprocalRankFusion([{ items: [] }], { weights: [-1] })).toThrow(/lists\[0\]/);
    expect(() =>
      reciprocalRankFusion([{ items: [] }, { name: 'bm25', weight: Number.POSITIVE_INFINITY, items: [] }]),
    ).toThrow(/lists\[1\] \('bm25'\)/);
    expect(() =>
      reciprocalRankFusion([
        {
          name: 'bm25',
          items: [
            { id: 'a', score: 1 },
            { id: 'x', score: Number.NaN },
          ],
        },
      ]),
    ).toThrow(/lists\[0\] \('bm25'\) item #1 \(id 'x'\) has a non-finite score/);
    expect(() => reciprocalRankFusion([{ items: [{ id: 3 } as never] }])).toThrow(InvalidArgumentError);
    expect(() => reciprocalRankFusion('nope' as never)).toThrow(InvalidArgumentError);
  });

  it('returns nothing for no lists or only weight-0 lists', () => {
    expect(reciprocalRankFusion([])).toEqual([]);
    expect(reciprocalRankFusion([{ weight: 0, items: [{ id: 'a' }] }])).toEqual([]);
  });
});

describe('scoreFusion', () => {
  const lists: RankedList[] = [
    {
      name: 'keyword',
      items: [
        { id: 'a', score: 10 },
        { id: 'b', score: 6 },
        { id: 'c', score: 2 },
      ],
    },
    {
      name: 'vector',
      items: [
        { id: 'b', score: 0.9 },
        { id: 'd', score: 0.5 },
        { id: 'a', score: 0.1 },
      ],
    },
  ];
  // min-max: keyword a 1, b 0.5, c 0; vector b 1, d 0.5, a 0.

  it('min-max + arithmetic (default): missing counts as 0 over the weight of all lists', () => {
    const fused = scoreFusion(lists);
    expect(idsOf(fused)).toEqual(['b', 'a', 'd', 'c']);
    expect(scoresOf(fused)).toEqual({ a: 0.5, b: 0.75, c: 0, d: 0.25 });
    expect(fused[0]?.contributions).toEqual([
      { list: 'keyword', rank: 2, score: 6, normalized: 0.5, contribution: 0.25 },
      { list: 'vector', rank: 1, score: 0.9, normalized: 1, contribution: 0.5 },
    ]);
  });

  it('weights and missing: ignore', () => {
    const weighted = scoresOf(scoreFusion(lists, { weights: [3, 1] }));
    expect(weighted.a).toBeCloseTo(0.75, 15);
    expect(weighted.b).toBeCloseTo(0.625, 15);
    expect(weighted.d).toBeCloseTo(0.125, 15);
    expect(scoresOf(scoreFusion(lists, { missing: 'ignore' }))).toEqual({ a: 0.5, b: 0.75, c: 0, d: 0.5 });
  });

  it('geometric and harmonic means', () => {
    const geometric = scoresOf(scoreFusion(lists, { combination: 'geometric' }));
    expect(geometric.a).toBe(0); // normalised 0 in one list
    expect(geometric.b).toBeCloseTo(Math.SQRT1_2, 15);
    expect(geometric.d).toBeCloseTo(0.5, 15); // ignore is the default: only the list that found it
    expect(scoresOf(scoreFusion(lists, { combination: 'geometric', missing: 'zero' })).d).toBe(0);
    const harmonic = scoresOf(scoreFusion(lists, { combination: 'harmonic' }));
    expect(harmonic.b).toBeCloseTo(2 / 3, 15);
    expect(harmonic.a).toBe(0);
  });

  it('z-score maps through the logistic, dbsf spans μ ± 3σ', () => {
    const one: RankedList[] = [
      {
        items: [
          { id: 'a', score: 10 },
          { id: 'b', score: 6 },
          { id: 'c', score: 2 },
        ],
      },
    ];
    const sigma = Math.sqrt(32 / 3);
    const z = scoresOf(scoreFusion(one, { normalization: 'zscore' }));
    expect(z.a).toBeCloseTo(1 / (1 + Math.exp(-4 / sigma)), 12);
    expect(z.b).toBeCloseTo(0.5, 12);
    expect(z.c).toBeCloseTo(1 / (1 + Math.exp(4 / sigma)), 12);
    const d = scoresOf(scoreFusion(one, { normalization: 'dbsf' }));
    expect(d.a).toBeCloseTo((10 - (6 - 3 * sigma)) / (6 * sigma), 12);
    expect(d.b).toBeCloseTo(0.5, 12);
    // An outlier beyond 3σ is clipped.
    const outlier = [
      {
        items: [
          ...Array.from({ length: 20 }, (_, i) => ({ id: `x${i}`, score: 0 })),
          { id: 'o', score: 100 },
        ],
      },
    ];
    expect(scoresOf(scoreFusion(outlier, { normalization: 'dbsf' })).o).toBe(1);
  });

  it('a list of equal scores normalises to 1', () => {
    const equal: RankedList[] = [
      {
        items: [
          { id: 'a', score: 0.3 },
          { id: 'b', score: 0.3 },
        ],
      },
    ];
    for (const normalization of ['minmax', 'zscore', 'dbsf'] as const) {
      expect(scoresOf(scoreFusion(equal, { normalization }))).toEqual({ a: 1, b: 1 });
    }
    expect(scoresOf(scoreFusion(equal, { normalization: 'none' }))).toEqual({ a: 0.3, b: 0.3 });
  });

  it('rejects missing scores, negative raw scores for geometric means, and unknown options', () => {
    expect(() => scoreFusion([{ name: 'v', items: [{ id: 'a', score: 1 }, { id: 'b' }] }])).toThrow(
      /lists\[0\] \('v'\) item #1 \(id 'b'\) has no score/,
    );
    expect(() =>
      scoreFusion([{ items: [{ id: 'a', score: -1 }] }], { normalization: 'none', combination: 'harmonic' }),
    ).toThrow(/lists\[0\] item #0 \(id 'a'\)/);
    expect(() => scoreFusion([], { normalization: 'l2' as never })).toThrow(/'normalization'/);
    expect(() => scoreFusion([], { missing: 'skip' as never })).toThrow(InvalidArgumentError);
  });

  it('stays finite on extreme scores and weights', () => {
    const extreme: RankedList[] = [
      {
        weight: 1e308,
        items: [
          { id: 'a', score: Number.MAX_VALUE },
          { id: 'b', score: -Number.MAX_VALUE },
        ],
      },
      {
        weight: 1e308,
        items: [
          { id: 'a', score: Number.MAX_VALUE },
          { id: 'b', score: Number.MIN_VALUE },
        ],
      },
    ];
    for (const normalization of ['minmax', 'zscore', 'dbsf', 'none'] as const) {
      for (const f of scoreFusion(extreme, { normalization })) expect(Number.isFinite(f.score)).toBe(true);
    }
    expect(scoresOf(scoreFusion(extreme, { normalization: 'none' })).a).toBe(Number.MAX_VALUE);
  });
});

// --- properties ---------------------------------------------------------------------------

const idArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
const scoreArb = fc.oneof(
  fc.double({ min: -1000, max: 1000, noNaN: true }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, 1, 0.5),
);
const itemsArb = fc.array(fc.record({ id: idArb, score: scoreArb }), { maxLength: 12 });
const listArb: fc.Arbitrary<RankedList> = fc.record(
  { items: itemsArb, weight: fc.double({ min: 0, max: 10, noNaN: true }) },
  { requiredKeys: ['items'] },
);
const listsArb = fc.array(listArb, { maxLength: 5 });
const optionsArb: fc.Arbitrary<ScoreFusionOptions> = fc.record(
  {
    normalization: fc.constantFrom('minmax', 'zscore', 'dbsf', 'none'),
    combination: fc.constantFrom('arithmetic', 'geometric', 'harmonic'),
    missing: fc.constantFrom('zero', 'ignore'),
  },
  { requiredKeys: [] },
);
const kArb = fc.oneof(fc.constant(60), fc.double({ min: 0, max: 1000, noNaN: true }));

/** Raw scores must be >= 0 for geometric and harmonic means without normalisation. */
function usable(lists: RankedList[], options: ScoreFusionOptions): RankedList[] {
  if (options.normalization !== 'none' || (options.combination ?? 'arithmetic') === 'arithmetic')
    return lists;
  return lists.map((l) => ({ ...l, items: l.items.map((i) => ({ ...i, score: Math.abs(i.score ?? 0) })) }));
}

type Fuse = (lists: RankedList[]) => FusedItem[];
const fusers: fc.Arbitrary<[string, Fuse]> = fc.oneof(
  kArb.map((k): [string, Fuse] => [`rrf k=${k}`, (lists) => reciprocalRankFusion(lists, { k })]),
  optionsArb.map((options): [string, Fuse] => [
    `score ${JSON.stringify(options)}`,
    (lists) => scoreFusion(usable(lists, options), options),
  ]),
);

describe('fusion properties', () => {
  it('does not depend on the order of the input lists', () => {
    fc.assert(
      fc.property(
        listsArb.chain((lists) =>
          fc.tuple(fc.constant(lists), fc.shuffledSubarray(lists, { minLength: lists.length })),
        ),
        fusers,
        ([lists, shuffled], [, fuse]) => {
          const a = fuse(lists);
          const b = fuse(shuffled);
          expect(idsOf(b)).toEqual(idsOf(a));
          expect(scoresOf(b)).toEqual(scoresOf(a));
        },
      ),
    );
  });

  it('counts a duplicate inside one list once (its first occurrence)', () => {
    const dedupe = (list: RankedList): RankedList => {
      const seen = new Set<string>();
      return { ...list, items: list.items.filter((i) => !seen.has(i.id) && seen.add(i.id) !== undefined) };
    };
    fc.assert(
      fc.property(listsArb, fusers, (lists, [, fuse]) => {
        expect(fuse(lists)).toEqual(fuse(lists.map(dedupe)));
      }),
    );
  });

  it('RRF over one list keeps its order', () => {
    fc.assert(
      fc.property(itemsArb, kArb, fc.double({ min: 0.001, max: 10, noNaN: true }), (items, k, weight) => {
        const distinct = [...new Set(items.map((i) => i.id))];
        expect(idsOf(reciprocalRankFusion([{ items, weight }], { k }))).toEqual(distinct);
      }),
    );
  });

  it('adding a list of weight 0 changes nothing', () => {
    fc.assert(
      fc.property(listsArb, itemsArb, fc.nat(), fusers, (lists, extraItems, at, [, fuse]) => {
        const named = lists.map((l, i) => ({ ...l, name: `l${i}` }));
        const withExtra = [...named];
        withExtra.splice(at % (named.length + 1), 0, { name: 'zero', weight: 0, items: extraItems });
        expect(fuse(withExtra)).toEqual(fuse(named));
      }),
    );
  });

  it('gives finite scores (in [0, 1] when normalised), best first, every id once', () => {
    fc.assert(
      fc.property(listsArb, optionsArb, (lists, options) => {
        const fused = scoreFusion(usable(lists, options), options);
        const ids = new Set(lists.filter((l) => l.weight !== 0).flatMap((l) => l.items.map((i) => i.id)));
        expect(new Set(idsOf(fused))).toEqual(ids);
        for (const [i, f] of fused.entries()) {
          expect(Number.isFinite(f.score)).toBe(true);
          for (const c of f.contributions) expect(Number.isFinite(c.contribution)).toBe(true);
          if (options.normalization !== 'none') {
            expect(f.score).toBeGreaterThanOrEqual(0);
            expect(f.score).toBeLessThanOrEqual(1);
          }
          if (i > 0) expect(f.score).toBeLessThanOrEqual(fused[i - 1]?.score as number);
        }
        for (const f of reciprocalRankFusion(lists)) expect(Number.isFinite(f.score)).toBe(true);
      }),
    );
  });

  it('arithmetic contributions add up to the score; RRF contributions too', () => {
    fc.assert(
      fc.property(listsArb, (lists) => {
        for (const f of [...scoreFusion(lists), ...reciprocalRankFusion(lists)]) {
          const sum = f.contributions.reduce((s, c) => s + c.contribution, 0);
          expect(sum).toBeCloseTo(f.score, 9);
        }
      }),
    );
  });
});
