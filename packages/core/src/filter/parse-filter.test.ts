import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FilterError, ZerdaError } from '../errors/index.js';
import { type FilterInput, filterFields, isFilterNode, parseFilter, serializeFilter } from './index.js';
import { filterNodeArbitrary } from './testing/arbitraries.js';

const eq = (field: string, value: unknown) => ({ kind: 'compare', field, op: 'eq', value });

describe('parseFilter', () => {
  it('parses equality, membership and every operator', () => {
    expect(parseFilter({ color: 'red' })).toEqual(eq('color', 'red'));
    expect(parseFilter({ n: 3 })).toEqual(eq('n', 3));
    expect(parseFilter({ ok: false })).toEqual(eq('ok', false));
    expect(parseFilter({ tag: ['a', 1, true] })).toEqual({
      kind: 'in',
      field: 'tag',
      values: ['a', 1, true],
      negated: false,
    });
    expect(parseFilter({ tag: [] })).toEqual({ kind: 'in', field: 'tag', values: [], negated: false });
    for (const op of ['eq', 'ne'] as const) {
      expect(parseFilter({ f: { [`$${op}`]: 'v' } })).toEqual({
        kind: 'compare',
        field: 'f',
        op,
        value: 'v',
      });
    }
    for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
      expect(parseFilter({ f: { [`$${op}`]: 1.5 } })).toEqual({
        kind: 'compare',
        field: 'f',
        op,
        value: 1.5,
      });
    }
    expect(parseFilter({ f: { $in: ['a'] } })).toEqual({
      kind: 'in',
      field: 'f',
      values: ['a'],
      negated: false,
    });
    expect(parseFilter({ f: { $nin: [] } })).toEqual({ kind: 'in', field: 'f', values: [], negated: true });
    expect(parseFilter({ f: { $exists: false } })).toEqual({ kind: 'exists', field: 'f', exists: false });
  });

  it('reads several keys, and several operators on one field, as AND', () => {
    expect(parseFilter({ a: 1, b: 'x' })).toEqual({ kind: 'and', children: [eq('a', 1), eq('b', 'x')] });
    expect(parseFilter({ price: { $gte: 1, $lt: 5 } })).toEqual({
      kind: 'and',
      children: [
        { kind: 'compare', field: 'price', op: 'gte', value: 1 },
        { kind: 'compare', field: 'price', op: 'lt', value: 5 },
      ],
    });
  });

  it('parses nested logical operators, beside fields too', () => {
    expect(
      parseFilter({ a: 1, $or: [{ b: 2 }, { $not: { c: { $exists: true } } }], $and: [{ d: 4 }] }),
    ).toEqual({
      kind: 'and',
      children: [
        eq('a', 1),
        {
          kind: 'or',
          children: [eq('b', 2), { kind: 'not', child: { kind: 'exists', field: 'c', exists: true } }],
        },
        { kind: 'and', children: [eq('d', 4)] },
      ],
    });
  });

  it('reads {} as "no filter": an AND of nothing', () => {
    expect(parseFilter({})).toEqual({ kind: 'and', children: [] });
    expect(parseFilter({ $or: [{}, { a: 1 }] })).toEqual({
      kind: 'or',
      children: [{ kind: 'and', children: [] }, eq('a', 1)],
    });
  });

  it('returns a parsed tree as it is, and marks parsed trees', () => {
    const node = parseFilter({ a: 1 });
    expect(parseFilter(node)).toBe(node);
    expect(isFilterNode(node)).toBe(true);
    expect(Object.isFrozen(node)).toBe(true);
    // A user filter shaped like a node is still a user filter (fields 'kind', 'field', ...).
    const lookalike = { kind: 'compare', field: 'x', op: 'eq', value: 1 };
    expect(isFilterNode(lookalike)).toBe(false);
    expect(parseFilter(lookalike)).toMatchObject({ kind: 'and' });
  });

  it('keeps a field named __proto__ or constructor as a field', () => {
    expect(parseFilter(JSON.parse('{"__proto__": 1}'))).toEqual(eq('__proto__', 1));
    expect(parseFilter({ constructor: 'x' })).toEqual(eq('constructor', 'x'));
  });

  const bad: Array<[string, unknown, string, RegExp]> = [
    ['null filter', null, '', /must be an object, got null/],
    ['array filter', [{ a: 1 }], '', /must be an object/],
    ['string filter', 'a = 1', '', /must be an object/],
    ['class instance', new Date(0), '', /must be an object, got an instance of Date/],
    ['unknown logical operator', { $nor: [{ a: 1 }] }, '$nor', /unknown operator '\$nor'/],
    ['field operator at the top', { $eq: 1 }, '$eq', /applies to a field/],
    ['unknown field operator', { price: { $regex: 'x' } }, 'price.$regex', /unknown operator '\$regex'/],
    ['nested object as a value', { meta: { color: 'red' } }, 'meta.color', /nested object/],
    ['empty operator object', { price: {} }, 'price', /at least one operator/],
    ['null value', { a: null }, 'a', /got null.*\$exists: false/],
    ['undefined value', { a: undefined }, 'a', /got undefined/],
    ['NaN', { a: Number.NaN }, 'a', /finite number, got NaN/],
    ['Infinity in $eq', { a: { $eq: Number.POSITIVE_INFINITY } }, 'a.$eq', /finite number/],
    ['$gt with a string', { price: { $gt: '5' } }, 'price.$gt', /\$gt takes a finite number.*got string "5"/],
    ['$lte with NaN', { price: { $lte: Number.NaN } }, 'price.$lte', /finite number/],
    ['$in with a non-array', { tag: { $in: 'a' } }, 'tag.$in', /\$in takes a list/],
    [
      '$nin with an object element',
      { tag: { $nin: ['a', { b: 1 }] } },
      'tag.$nin[1]',
      /list element value must be/,
    ],
    ['list with null', { tag: ['a', null] }, 'tag[1]', /got null/],
    ['$exists with a string', { a: { $exists: 'yes' } }, 'a.$exists', /\$exists takes true or false/],
    ['$eq with an array', { a: { $eq: ['x'] } }, 'a.$eq', /got an array/],
    ['empty $and', { $and: [] }, '$and', /non-empty list/],
    ['empty $or', { $or: [] }, '$or', /non-empty list/],
    ['$or with an object', { $or: { a: 1 } }, '$or', /takes a list of filters/],
    ['$not with a list', { $not: [{ a: 1 }] }, '$not', /must be an object/],
    [
      'bad child deep inside',
      { $and: [{ a: 1 }, { $or: [{ b: 1 }, { price: { $gt: 'x' } }] }] },
      '$and[1].$or[1].price.$gt',
      /finite number/,
    ],
    [
      'bad child in $and',
      { $and: [{ a: 1 }, { price: { $gt: '1' } }] },
      '$and[1].price.$gt',
      /finite number/,
    ],
    ['empty field name', { '': 1 }, '', /field name must not be empty/],
    ['bigint', { a: 1n }, 'a', /got bigint/],
    ['odd field names are quoted in the path', { 'a.b': { $gt: 'x' } }, '"a.b".$gt', /finite number/],
  ];

  it.each(bad)('refuses %s with a FilterError naming the path', (_name, input, path, message) => {
    let caught: unknown;
    try {
      parseFilter(input);
    } catch (error) {
      caught = error;
    }
    expect(FilterError.isInstance(caught)).toBe(true);
    expect(ZerdaError.isInstance(caught)).toBe(true);
    const error = caught as FilterError;
    expect(error.path).toBe(path);
    expect(error.reason).toBe('invalid');
    expect(error.message).toMatch(message);
    expect(error.message).toContain(path === '' ? 'filter root' : `'${path}'`);
    expect(error.name).toBe('FilterError');
  });

  it('keeps the offending value on the error', () => {
    try {
      parseFilter({ $and: [{ a: 1 }, { price: { $gt: '5' } }] });
      expect.unreachable();
    } catch (error) {
      expect((error as FilterError).value).toBe('5');
    }
  });
});

describe('FilterInput', () => {
  it('types user filters precisely (checked by tsc)', () => {
    const good: FilterInput[] = [
      { color: 'red', n: { $gte: 1, $lt: 5 }, tags: ['a', 'b'], ok: { $exists: true } },
      { $or: [{ a: 1 }, { $not: { b: { $nin: ['x', 2, false] } } }] },
      { a: 1, $and: [{ b: 2 }] },
      {},
    ];
    // @ts-expect-error range operators take numbers
    const stringRange: FilterInput = { price: { $gt: '5' } };
    // @ts-expect-error null is not a filter value
    const nullValue: FilterInput = { a: null };
    // @ts-expect-error unknown operator
    const unknownOperator: FilterInput = { a: { $regex: 'x' } };
    // @ts-expect-error $exists takes a boolean
    const existsString: FilterInput = { a: { $exists: 'yes' } };
    for (const filter of good) expect(() => parseFilter(filter)).not.toThrow();
    for (const filter of [stringRange, nullValue, unknownOperator, existsString]) {
      expect(() => parseFilter(filter)).toThrow(FilterError);
    }
  });
});

describe('serializeFilter and filterFields', () => {
  it('writes the canonical form: one key per object, explicit operators', () => {
    const node = parseFilter({ a: 1, tags: ['x'], $not: { b: { $gte: 2, $exists: true } } });
    expect(serializeFilter(node)).toEqual({
      $and: [
        { a: { $eq: 1 } },
        { tags: { $in: ['x'] } },
        { $not: { $and: [{ b: { $gte: 2 } }, { b: { $exists: true } }] } },
      ],
    });
    expect(serializeFilter(parseFilter({}))).toEqual({});
    expect(filterFields(node)).toEqual(['a', 'b', 'tags']);
  });

  it('round-trips: parseFilter(serializeFilter(node)) equals node', () => {
    fc.assert(
      fc.property(filterNodeArbitrary, (node) => {
        const json = JSON.parse(JSON.stringify(serializeFilter(node)));
        expect(parseFilter(json)).toEqual(node);
      }),
      { numRuns: 500 },
    );
  });
});
