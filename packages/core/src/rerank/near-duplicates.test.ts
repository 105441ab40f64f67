import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { duplicateCorpus } from './__tests__/duplicate-corpus.js';
import { countWords, lengthBonus, termOverlap } from './heuristic.js';
import {
  buildTermSets,
  type DuplicatePair,
  findDuplicatePairsExact,
  findDuplicatePairsMinHash,
  findNearDuplicates,
  jaccard,
  removeNearDuplicates,
} from './near-duplicates.js';

/** Every pair, compared the obvious way (no pruning): the reference for both methods. */
function naivePairs(sets: Int32Array[], threshold: number): DuplicatePair[] {
  const pairs: DuplicatePair[] = [];
  for (let a = 0; a < sets.length; a++) {
    for (let b = a + 1; b < sets.length; b++) {
      const similarity = jaccard(sets[a] as Int32Array, sets[b] as Int32Array);
      if (similarity >= threshold) pairs.push({ a, b, similarity });
    }
  }
  return pairs;
}

const key = (pair: DuplicatePair) => `${pair.a}:${pair.b}`;

describe('Jaccard near-duplicates', () => {
  it('computes Jaccard over analysed word sets', () => {
    const [a, b, c, empty] = buildTermSets(['the cats are running', 'a cat runs', 'dogs bark', '']);
    expect(jaccard(a as Int32Array, b as Int32Array)).toBe(1); // cat, run after stop words and stemming
    expect(jaccard(a as Int32Array, c as Int32Array)).toBe(0);
    expect(jaccard(empty as Int32Array, empty as Int32Array)).toBe(0);
  });

  it('finds exactly the pairs that a naive comparison finds (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 25 }), { maxLength: 14 }), { maxLength: 25 }),
        fc.constantFrom(0.5, 0.7, 0.85, 1),
        (lists, threshold) => {
          const sets = lists.map((list) => Int32Array.from(list).sort());
          const expected = naivePairs(sets, threshold);
          const exact = findDuplicatePairsExact(sets, threshold);
          expect(exact.map(key)).toEqual(expected.map(key));
          exact.forEach((pair, i) => {
            expect(pair.similarity).toBeCloseTo((expected[i] as DuplicatePair).similarity, 12);
          });
          // MinHash never reports a pair that is not one.
          const exactKeys = new Set(exact.map(key));
          for (const pair of findDuplicatePairsMinHash(sets, threshold))
            expect(exactKeys.has(key(pair))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('MinHash + LSH finds the same pairs as exact Jaccard on 2,000 candidates (recall >= 99%, no false pairs)', () => {
    const texts = duplicateCorpus(2000);
    const sets = buildTermSets(texts);
    // The exact method equals the naive comparison (property above); at 0.75 it also shows the near misses.
    const close = findDuplicatePairsExact(sets, 0.75);
    const exact = findDuplicatePairsExact(sets, 0.85);
    expect(exact.map(key)).toEqual(close.filter((pair) => pair.similarity >= 0.85).map(key));
    // The planted variants straddle the threshold, so the comparison is not trivial.
    expect(exact.length).toBeGreaterThan(150);
    expect(exact.some((pair) => pair.similarity < 0.9)).toBe(true);
    expect(close.length - exact.length).toBeGreaterThan(50);

    const exactKeys = new Set(exact.map(key));
    for (const scheme of ['one-permutation', 'k-permutation'] as const) {
      const minhash = findDuplicatePairsMinHash(sets, 0.85, { scheme });
      const found = minhash.filter((pair) => exactKeys.has(key(pair)));
      // Stated tolerance: precision exactly 1 (candidates are verified), recall at least 0.99.
      expect(found.length).toBe(minhash.length);
      expect(found.length / exact.length).toBeGreaterThanOrEqual(0.99);
    }
    // With the default seed it is in fact every pair.
    expect(findDuplicatePairsMinHash(sets, 0.85).map(key)).toEqual(exact.map(key));
    // Other seeds: still within the tolerance.
    for (const seed of [1, 2, 3]) {
      const found = findDuplicatePairsMinHash(sets, 0.85, { seed }).length;
      expect(found / exact.length).toBeGreaterThanOrEqual(0.99);
    }

    // 'auto' switches to MinHash at 200 candidates.
    expect(findNearDuplicates(texts.slice(0, 199)).method).toBe('exact');
    expect(findNearDuplicates(texts.slice(0, 200)).method).toBe('minhash');
  });

  it('keeps the first (best) copy of each group and says what each removed item duplicates', () => {
    const base = 'alpha beta gamma delta epsilon zeta eta theta iota kappa';
    const items = [
      { id: 'best', text: base },
      { id: 'unrelated', text: 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do' },
      { id: 'copy', text: `${base} lambda` },
      { id: 'copy2', text: base.toUpperCase() },
    ];
    const result = removeNearDuplicates(items, (item) => item.text);
    expect(result.kept.map((item) => item.id)).toEqual(['best', 'unrelated']);
    expect(result.removed.map((r) => [r.item.id, r.duplicateOf.id])).toEqual([
      ['copy', 'best'],
      ['copy2', 'best'],
    ]);
    expect(result.removed[0]?.similarity).toBeCloseTo(10 / 11, 12);
    // A chain a~b, b~c (but not a~c): b goes with a, and c stays since its only partner was removed.
    const sets = [
      'w1 w2 w3 w4 w5 w6 w7 w8 w9 w10',
      'w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11',
      'w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13',
    ];
    const chain = removeNearDuplicates(sets, (text) => text, { threshold: 0.84 });
    expect(chain.pairs.map(key)).toEqual(['0:1', '1:2']);
    expect(chain.kept).toEqual([sets[0], sets[2]]);
  });

  it('rejects a threshold outside (0, 1]', () => {
    expect(() => findNearDuplicates(['a'], { threshold: 0 })).toThrow(InvalidArgumentError);
    expect(() => findNearDuplicates(['a'], { threshold: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => findNearDuplicates(['a'], { method: 'fuzzy' as never })).toThrow(InvalidArgumentError);
  });
});

describe('heuristic parts', () => {
  it('length bonus is 1 inside the ideal range and falls off linearly outside', () => {
    expect(lengthBonus(0, 30, 300)).toBe(0);
    expect(lengthBonus(15, 30, 300)).toBe(0.5);
    expect(lengthBonus(30, 30, 300)).toBe(1);
    expect(lengthBonus(300, 30, 300)).toBe(1);
    expect(lengthBonus(450, 30, 300)).toBe(0.5);
    expect(lengthBonus(600, 30, 300)).toBe(0);
    expect(lengthBonus(900, 30, 300)).toBe(0);
    fc.assert(
      fc.property(fc.nat(2000), fc.nat(2000), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const inside = lengthBonus(lo, 30, 300);
        expect(inside).toBeGreaterThanOrEqual(0);
        expect(inside).toBeLessThanOrEqual(1);
        // Monotone up to the range, then down.
        if (hi <= 30) expect(lengthBonus(hi, 30, 300)).toBeGreaterThanOrEqual(inside);
        if (lo >= 300) expect(lengthBonus(hi, 30, 300)).toBeLessThanOrEqual(inside);
      }),
    );
  });

  it('counts words and term overlap', () => {
    expect(countWords('  one two\tthree\nfour  ')).toBe(4);
    expect(countWords('')).toBe(0);
    expect(termOverlap(new Set(['a', 'b', 'c', 'd']), new Set(['b', 'd', 'x']))).toBe(0.5);
    expect(termOverlap(new Set(), new Set(['x']))).toBe(0);
  });
});
