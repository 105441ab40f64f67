import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileFilter, evaluateFilter, type FilterRecord, parseFilter, readField } from './index.js';
import { filterNodeArbitrary, filterRecordArbitrary } from './testing/arbitraries.js';

const record: FilterRecord = {
  id: 'r1',
  docId: 'd1',
  metadata: { color: 'red', n: 5, x: 2.5, ok: true, tags: ['a', 'b'], none: [], five: '5' },
};

// [filter, expected on `record`]
const table: Array<[string, object, boolean]> = [
  // equality and missing fields
  ['eq string', { color: 'red' }, true],
  ['eq other', { color: 'blue' }, false],
  ['eq on a missing field', { missing: 'x' }, false],
  ['ne on a missing field', { missing: { $ne: 'x' } }, true],
  ['ne same', { color: { $ne: 'red' } }, false],
  ['ne other', { color: { $ne: 'blue' } }, true],
  // types are strict
  ['eq number vs string field', { five: 5 }, false],
  ['ne number vs string field', { five: { $ne: 5 } }, true],
  ['eq string vs number field', { n: '5' }, false],
  ['eq boolean', { ok: true }, true],
  ['eq 1 vs boolean true', { ok: 1 }, false],
  // ranges: numbers only
  ['gt', { n: { $gt: 4 } }, true],
  ['gt equal', { n: { $gt: 5 } }, false],
  ['gte equal', { n: { $gte: 5 } }, true],
  ['lt fraction', { x: { $lt: 3 } }, true],
  ['lte', { x: { $lte: 2.5 } }, true],
  ['range on a string field', { five: { $gt: 1 } }, false],
  ['range on a boolean field', { ok: { $gte: 0 } }, false],
  ['range on an array field', { tags: { $gt: 0 } }, false],
  ['range on a missing field', { missing: { $lt: 100 } }, false],
  ['several operators: AND', { n: { $gt: 1, $lt: 5 } }, false],
  ['several operators: AND (true)', { n: { $gt: 1, $lte: 5 } }, true],
  // membership
  ['in', { color: ['red', 'green'] }, true],
  ['in miss', { color: { $in: ['green'] } }, false],
  ['in: types strict', { n: { $in: ['5'] } }, false],
  ['in on a missing field', { missing: { $in: ['x'] } }, false],
  ['nin on a missing field', { missing: { $nin: ['x'] } }, true],
  ['nin', { color: { $nin: ['red'] } }, false],
  ['empty in matches nothing', { color: { $in: [] } }, false],
  ['empty in on a missing field', { missing: { $in: [] } }, false],
  ['empty nin matches everything', { color: { $nin: [] } }, true],
  ['empty nin on a missing field', { missing: { $nin: [] } }, true],
  // string arrays: any element
  ['eq on an array: contains', { tags: 'a' }, true],
  ['eq on an array: does not contain', { tags: 'c' }, false],
  ['ne on an array: contains', { tags: { $ne: 'a' } }, false],
  ['ne on an array: does not contain', { tags: { $ne: 'c' } }, true],
  ['in on an array: some element', { tags: { $in: ['c', 'b'] } }, true],
  ['in on an array: none', { tags: { $in: ['c'] } }, false],
  ['nin on an array: some element', { tags: { $nin: ['b'] } }, false],
  ['nin on an array: none', { tags: { $nin: ['c'] } }, true],
  ['AND of two elements of one array', { $and: [{ tags: 'a' }, { tags: 'b' }] }, true],
  ['empty array: eq', { none: 'a' }, false],
  ['empty array: ne', { none: { $ne: 'a' } }, true],
  ['empty array exists', { none: { $exists: true } }, true],
  // exists
  ['exists true', { color: { $exists: true } }, true],
  ['exists false', { color: { $exists: false } }, false],
  ['exists on a missing field', { missing: { $exists: false } }, true],
  // pseudo-fields
  ['id', { id: 'r1' }, true],
  ['id in', { id: ['r2', 'r3'] }, false],
  ['id exists', { id: { $exists: true } }, true],
  ['docId', { docId: 'd1' }, true],
  ['docId other', { docId: { $ne: 'd1' } }, false],
  // logic
  ['not', { $not: { color: 'red' } }, false],
  ['not of a range: also matches non-numbers', { $not: { color: { $gt: 1 } } }, true],
  ['not not', { $not: { $not: { color: 'red' } } }, true],
  ['or', { $or: [{ color: 'blue' }, { n: 5 }] }, true],
  ['or none', { $or: [{ color: 'blue' }, { n: 6 }] }, false],
  ['and', { $and: [{ color: 'red' }, { n: 6 }] }, false],
  ['implicit and', { color: 'red', n: 5 }, true],
  ['{} matches everything', {}, true],
  ['not {} matches nothing', { $not: {} }, false],
  ['or with {}', { $or: [{}, { color: 'blue' }] }, true],
];

describe('evaluateFilter and compileFilter', () => {
  it.each(table)('%s', (_name, filter, expected) => {
    const node = parseFilter(filter);
    expect(evaluateFilter(node, record)).toBe(expected);
    expect(compileFilter(node)(record)).toBe(expected);
  });

  it('$ne is exactly not $eq and $nin exactly not $in', () => {
    fc.assert(
      fc.property(
        filterRecordArbitrary(),
        fc.constantFrom('a', 'b', 'c', 'docId', 'id'),
        fc.array(fc.oneof(fc.constantFrom('x', 'y', 'd1'), fc.integer({ min: -2, max: 2 }), fc.boolean()), {
          maxLength: 3,
        }),
        (subject, field, values) => {
          for (const value of values) {
            expect(evaluateFilter(parseFilter({ [field]: { $ne: value } }), subject)).toBe(
              !evaluateFilter(parseFilter({ [field]: { $eq: value } }), subject),
            );
          }
          expect(evaluateFilter(parseFilter({ [field]: { $nin: values } }), subject)).toBe(
            !evaluateFilter(parseFilter({ [field]: { $in: values } }), subject),
          );
        },
      ),
    );
  });

  it('compileFilter agrees with evaluateFilter on random filters and records', () => {
    fc.assert(
      fc.property(
        filterNodeArbitrary,
        fc.array(filterRecordArbitrary(), { minLength: 1, maxLength: 8 }),
        (node, records) => {
          const predicate = compileFilter(node);
          for (const subject of records) expect(predicate(subject)).toBe(evaluateFilter(node, subject));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('reads docId from the record, then from metadata.docId', () => {
    expect(readField({ id: 'r', docId: 'd', metadata: { docId: 'm' } }, 'docId')).toBe('d');
    expect(readField({ id: 'r', metadata: { docId: 'm' } }, 'docId')).toBe('m');
    expect(readField({ id: 'r' }, 'docId')).toBeUndefined();
    expect(evaluateFilter(parseFilter({ docId: 'm' }), { id: 'r', metadata: { docId: 'm' } })).toBe(true);
    expect(evaluateFilter(parseFilter({ docId: { $exists: false } }), { id: 'r' })).toBe(true);
  });

  it('reads only own metadata properties, and treats null as missing', () => {
    const bare: FilterRecord = { id: 'r', metadata: {} };
    expect(evaluateFilter(parseFilter({ constructor: { $exists: true } }), bare)).toBe(false);
    expect(evaluateFilter(parseFilter({ toString: { $exists: false } }), bare)).toBe(true);
    const withNull = { id: 'r', metadata: { a: null } } as unknown as FilterRecord;
    expect(evaluateFilter(parseFilter({ a: { $exists: false } }), withNull)).toBe(true);
    expect(evaluateFilter(parseFilter({ a: { $ne: 1 } }), withNull)).toBe(true);
    expect(evaluateFilter(parseFilter({ a: { $in: [1] } }), { id: 'r' })).toBe(false);
  });

  it('scans 100,000 records with a compiled filter', () => {
    const records: FilterRecord[] = Array.from({ length: 100_000 }, (_, i) => ({
      id: `r${i}`,
      docId: `d${i % 100}`,
      metadata: { n: i % 1000, tags: [`t${i % 7}`, `t${i % 11}`], color: i % 2 === 0 ? 'red' : 'blue' },
    }));
    const predicate = compileFilter(
      parseFilter({
        color: 'red',
        n: { $gte: 100, $lt: 200 },
        tags: { $in: ['t3', 't5'] },
        docId: { $nin: ['d0'] },
      }),
    );
    const matched = records.filter(predicate).length;
    const expected = records.filter((r) => {
      const m = r.metadata as { n: number; tags: string[]; color: string };
      return (
        m.color === 'red' &&
        m.n >= 100 &&
        m.n < 200 &&
        m.tags.some((t) => t === 't3' || t === 't5') &&
        r.docId !== 'd0'
      );
    }).length;
    expect(matched).toBe(expected);
    expect(matched).toBeGreaterThan(0);
  });
});
