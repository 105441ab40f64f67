import { FilterError, type FilterRecord, parseFilter } from '@zerda/core';
import { toStoredMetadata } from '@zerda/core/testing';
import { testFilterConvention } from '@zerda/testing';
import { describe, expect, it } from 'vitest';
import { type ChromaWhere, chromaFilterConvention, createChromaFilterConvention } from './chroma-filter.js';
import { evaluateChromaWhere } from './test-utils/chroma-where-semantics.js';

const chroma = chromaFilterConvention;
const translate = (filter: object, convention = chroma) => convention.translate(parseFilter(filter));
const pushable = (filter: object) => chroma.canPushDown(parseFilter(filter));

describe('chromaFilterConvention', () => {
  it('writes one key per object, explicit $eq, and $and for several fields', () => {
    expect(chroma.name).toBe('chroma');
    expect(translate({ color: 'red' })).toEqual({ color: { $eq: 'red' } });
    expect(translate({ color: 'red', n: { $gte: 2, $lt: 5 } })).toEqual({
      $and: [{ color: { $eq: 'red' } }, { n: { $gte: 2 } }, { n: { $lt: 5 } }],
    });
    expect(translate({ $or: [{ a: true }, { b: { $ne: 'x' } }] })).toEqual({
      $or: [{ a: { $eq: true } }, { b: { $ne: 'x' } }],
    });
  });

  it('unwraps $and / $or of one child (Chroma wants two or more)', () => {
    expect(translate({ $and: [{ a: 1 }] })).toEqual({ a: { $eq: 1 } });
    expect(translate({ $or: [{ $and: [{ a: 1 }] }] })).toEqual({ a: { $eq: 1 } });
  });

  it('splits $in / $nin lists by type (Chroma wants one type per list)', () => {
    expect(translate({ a: ['x', 1, true, 'y', 2] })).toEqual({
      $or: [{ a: { $in: ['x', 'y'] } }, { a: { $in: [true] } }, { a: { $in: [1, 2] } }],
    });
    expect(translate({ a: { $nin: ['x', 1] } })).toEqual({
      $and: [{ a: { $nin: ['x'] } }, { a: { $nin: [1] } }],
    });
  });

  it('guards non-integral bounds against the int/float truncation of local Chroma', () => {
    expect(translate({ n: 2.5 })).toEqual({ $and: [{ n: { $eq: 2.5 } }, { n: { $ne: 2 } }] });
    expect(translate({ n: { $ne: -2.5 } })).toEqual({ $or: [{ n: { $ne: -2.5 } }, { n: { $eq: -2 } }] });
    expect(translate({ n: { $gt: 2.5 } })).toEqual({ $or: [{ n: { $gt: 2.5 } }, { n: { $gte: 3 } }] });
    expect(translate({ n: { $gte: 2.5 } })).toEqual({ $and: [{ n: { $gte: 2.5 } }, { n: { $ne: 2 } }] });
    expect(translate({ n: { $lt: -0.5 } })).toEqual({ $or: [{ n: { $lt: -0.5 } }, { n: { $lte: -1 } }] });
    expect(translate({ n: { $lte: -2.5 } })).toEqual({ $and: [{ n: { $lte: -2.5 } }, { n: { $ne: -2 } }] });
    expect(translate({ n: [1.5, 3] })).toEqual({
      $or: [{ n: { $in: [3] } }, { $and: [{ n: { $in: [1.5] } }, { n: { $nin: [1] } }] }],
    });
    expect(translate({ n: { $nin: [1.5] } })).toEqual({ $or: [{ n: { $nin: [1.5] } }, { n: { $in: [1] } }] });
    // Integral bounds are exact and stay as written.
    expect(translate({ n: { $gt: 2 } })).toEqual({ n: { $gt: 2 } });
  });

  it('pushes negations down (De Morgan), as Chroma has no $not', () => {
    expect(translate({ $not: { $or: [{ a: 1 }, { b: ['x'] }] } })).toEqual({
      $and: [{ a: { $ne: 1 } }, { b: { $nin: ['x'] } }],
    });
    expect(translate({ $not: { a: 'x', b: { $ne: 'y' } } })).toEqual({
      $or: [{ a: { $ne: 'x' } }, { b: { $eq: 'y' } }],
    });
  });

  it('leaves client-side what Chroma cannot say with Zerda semantics', () => {
    expect(pushable({ a: { $exists: true } })).toBe(false);
    expect(pushable({ $not: { a: { $gt: 1 } } })).toBe(false);
    expect(pushable({ id: 'r1' })).toBe(false);
    expect(pushable({ a: { $in: [] } })).toBe(false);
    expect(pushable({ a: { $nin: [] } })).toBe(false);
    expect(pushable({ a: 2 ** 60 })).toBe(false);
    expect(pushable({ $or: [{ a: 1 }, { b: { $exists: false } }] })).toBe(false);
    expect(() => translate({ a: { $exists: true } })).toThrow(FilterError);
  });

  it('maps docId to the configured metadata key', () => {
    expect(translate({ docId: ['d1', 'd2'] })).toEqual({ docId: { $in: ['d1', 'd2'] } });
    const custom = createChromaFilterConvention({ docIdKey: '_docId' });
    expect(translate({ docId: 'd1' }, custom)).toEqual({ _docId: { $eq: 'd1' } });
  });

  it('with arrayMetadata, string equality also tests $contains', () => {
    const arrays = createChromaFilterConvention({ arrayMetadata: true });
    expect(translate({ tags: 'a' }, arrays)).toEqual({
      $or: [{ tags: { $eq: 'a' } }, { tags: { $contains: 'a' } }],
    });
    expect(translate({ tags: { $ne: 'a' } }, arrays)).toEqual({
      $and: [{ tags: { $ne: 'a' } }, { tags: { $not_contains: 'a' } }],
    });
    expect(translate({ tags: ['a', 'b'] }, arrays)).toEqual({
      $or: [{ tags: { $in: ['a', 'b'] } }, { tags: { $contains: 'a' } }, { tags: { $contains: 'b' } }],
    });
    expect(translate({ tags: { $nin: ['a'] } }, arrays)).toEqual({
      $and: [{ tags: { $nin: ['a'] } }, { tags: { $not_contains: 'a' } }],
    });
    expect(translate({ n: 1 }, arrays)).toEqual({ n: { $eq: 1 } });
  });

  it('refuses a hand-written native filter that is not a where object', () => {
    for (const value of [null, undefined, 'year', 5, [], [{ a: 1 }]]) {
      expect(chroma.checkNative?.(value), JSON.stringify(value)).toMatch(/expected a Chroma where object/);
    }
    expect(chroma.checkNative?.({ year: { $gte: 2020 } })).toBeUndefined();
    expect(chroma.checkNative?.({})).toBeUndefined();
  });
});

/*
 * The invariant behind the convention: what Chroma selects natively, intersected with what the
 * residual selects client-side, is exactly what Zerda's reference evaluator selects. Chroma's
 * semantics come from the test evaluator, with and without the int/float truncation bug.
 */
for (const arrayMetadata of [false, true]) {
  const semantics =
    (truncateFractionalBoundsForInts: boolean) => (where: ChromaWhere, record: FilterRecord) =>
      evaluateChromaWhere(where, toStoredMetadata(record), { truncateFractionalBoundsForInts });
  testFilterConvention({
    convention: createChromaFilterConvention({ arrayMetadata }),
    title: arrayMetadata ? 'chroma convention with array metadata' : 'chroma convention',
    semantics: { exact: semantics(false), 'truncating fractional bounds for ints': semantics(true) },
    // Without arrayMetadata the store keeps no string arrays; Chroma refuses empty ones.
    records: arrayMetadata ? { arrays: true, minArrayLength: 1 } : { arrays: false },
    minPushed: 400,
  });
}
