import { describe, expect, it } from 'vitest';
import { type FilterConvention, parseFilter, zerdaFilterConvention } from './index.js';

const translate = (convention: FilterConvention, filter: object) => convention.translate(parseFilter(filter));
const pushable = (convention: FilterConvention, filter: object) =>
  convention.canPushDown(parseFilter(filter));

describe('zerdaFilterConvention', () => {
  it('takes the whole language as canonical filter JSON', () => {
    expect(zerdaFilterConvention.name).toBe('zerda');
    expect(zerdaFilterConvention.checkNative?.({ a: { $gt: 1 } })).toBeUndefined();
    expect(zerdaFilterConvention.checkNative?.({ a: { $regex: 'x' } })).toMatch(/\$regex/);
    const filter = { a: 1, $not: { id: { $exists: true } }, tags: [] };
    expect(pushable(zerdaFilterConvention, filter)).toBe(true);
    expect(translate(zerdaFilterConvention, filter)).toEqual({
      $and: [{ a: { $eq: 1 } }, { $not: { id: { $exists: true } } }, { tags: { $in: [] } }],
    });
  });
});
