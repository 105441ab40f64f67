import { FilterError, type FilterRecord, parseFilter } from '@zerda/core';
import { toStoredMetadata } from '@zerda/core/testing';
import { testFilterConvention } from '@zerda/testing';
import { describe, expect, it } from 'vitest';
import {
  createPineconeFilterConvention,
  type PineconeFilter,
  pineconeFilterConvention,
} from './pinecone-filter.js';
import { evaluatePineconeFilter } from './test-utils/pinecone-filter-evaluator.js';

const pinecone = pineconeFilterConvention;
const translate = (filter: object, convention = pinecone) => convention.translate(parseFilter(filter));
const pushable = (filter: object) => pinecone.canPushDown(parseFilter(filter));

describe('pineconeFilterConvention', () => {
  it('translates comparisons, ranges and $exists directly', () => {
    expect(pinecone.name).toBe('pinecone');
    expect(translate({ genre: 'drama', year: { $gte: 2020, $lt: 2024.5 } })).toEqual({
      $and: [{ genre: { $eq: 'drama' } }, { year: { $gte: 2020 } }, { year: { $lt: 2024.5 } }],
    });
    expect(translate({ a: { $exists: false } })).toEqual({ a: { $exists: false } });
    expect(translate({ a: ['x', 'y'] })).toEqual({ a: { $in: ['x', 'y'] } });
  });

  it('makes $ne and $nin match a missing field, as Zerda does', () => {
    expect(translate({ a: { $ne: 'x' } })).toEqual({
      $or: [{ a: { $ne: 'x' } }, { a: { $exists: false } }],
    });
    expect(translate({ a: { $nin: ['x', 2] } })).toEqual({
      $or: [{ $and: [{ a: { $nin: ['x'] } }, { a: { $nin: [2] } }] }, { a: { $exists: false } }],
    });
  });

  it('writes boolean membership as $eq / $ne ($in takes strings and numbers)', () => {
    expect(translate({ a: [true, 'x'] })).toEqual({
      $or: [{ a: { $in: ['x'] } }, { a: { $eq: true } }],
    });
    expect(translate({ a: { $nin: [false] } })).toEqual({
      $or: [{ a: { $ne: false } }, { a: { $exists: false } }],
    });
  });

  it('pushes negations down; $not of a range, id and empty lists stay client-side', () => {
    expect(translate({ $not: { a: 'x', b: { $exists: true } } })).toEqual({
      $or: [{ a: { $ne: 'x' } }, { a: { $exists: false } }, { b: { $exists: false } }],
    });
    expect(pushable({ $not: { a: { $lt: 1 } } })).toBe(false);
    expect(pushable({ id: 'r1' })).toBe(false);
    expect(pushable({ a: { $in: [] } })).toBe(false);
    expect(pushable({ a: { $in: Array.from({ length: 10_001 }, (_, i) => i) } })).toBe(false);
    expect(() => translate({ id: 'r1' })).toThrow(FilterError);
  });

  it('maps docId to the configured metadata key', () => {
    expect(translate({ docId: 'd1' }, createPineconeFilterConvention({ docIdKey: 'doc' }))).toEqual({
      doc: { $eq: 'd1' },
    });
  });

  it('checks the shape of a hand-written native filter', () => {
    const check = (value: unknown) => pinecone.checkNative?.(value);
    expect(
      check({ genre: 'drama', year: { $gte: 2020 }, $or: [{ a: 1 }, { b: { $in: ['x'] } }] }),
    ).toBeUndefined();
    expect(check([{ a: 1 }])).toMatch(/must be an object/);
    expect(check({ $not: { a: 1 } })).toMatch(/no logical operator \$not/);
    expect(check({ a: { $regex: 'x' } })).toMatch(/a: Pinecone has no operator \$regex/);
    expect(check({ $and: [] })).toMatch(/\$and takes a non-empty list/);
    expect(check({ $or: [{ a: 1 }, 'b'] })).toMatch(/\$or\[1\] must be an object/);
  });
});

/*
 * The invariant behind the convention: what Pinecone selects natively (per the native-semantics
 * evaluator, under both of Pinecone's `$ne` behaviours), intersected with what the residual
 * selects client-side, is exactly what Zerda's reference evaluator selects.
 */
const semantics = (negationsMatchMissing: boolean) => (native: PineconeFilter, record: FilterRecord) =>
  evaluatePineconeFilter(native, toStoredMetadata(record), { negationsMatchMissing });
testFilterConvention({
  convention: pinecone,
  semantics: {
    '$ne/$nin not matching missing fields': semantics(false),
    '$ne/$nin matching missing fields': semantics(true),
  },
  records: { arrays: true },
  minPushed: 400,
});
