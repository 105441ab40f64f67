import { describe, expect, it } from 'vitest';
import { FilterError } from '../errors/index.js';
import {
  type FilterConvention,
  filterFields,
  parseFilter,
  resolveFilter,
  serializeFilter,
  zerdaFilterConvention,
} from './index.js';

/** A convention with a residual: it takes any condition but those on `id`, as canonical JSON. */
const allButIds: FilterConvention = {
  name: 'all-but-ids',
  canPushDown: (node) => !filterFields(node).includes('id'),
  translate: serializeFilter,
};

/** A convention that takes one `docId` equality or membership at most (as FAISS's): an AND of two is not pushable. */
const oneDocIdCondition: FilterConvention = {
  name: 'one-docid',
  canPushDown(node) {
    const single = node.kind === 'and' && node.children.length === 1 ? node.children[0]! : node;
    return (
      single.kind !== 'and' &&
      'field' in single &&
      single.field === 'docId' &&
      ((single.kind === 'in' && !single.negated) || (single.kind === 'compare' && single.op === 'eq'))
    );
  },
  translate: serializeFilter,
};

/** A convention with a residual, as most databases': no `$exists`, and no `$not` it cannot push down. */
const noExistsNoNot: FilterConvention = {
  name: 'no-exists-no-not',
  canPushDown: (node) => !/"\$(exists|not)"/.test(JSON.stringify(serializeFilter(node))),
  translate: serializeFilter,
};

describe('resolveFilter', () => {
  it('means no filter for undefined and {}', () => {
    const none = { native: undefined, pushed: undefined, residual: undefined, warnings: [] };
    expect(resolveFilter({ filterConvention: noExistsNoNot }, undefined)).toEqual(none);
    expect(resolveFilter({ filterConvention: noExistsNoNot }, {})).toEqual(none);
    expect(resolveFilter({}, { $and: [{}] })).toEqual(none);
    expect(resolveFilter({}, {}, { strict: true })).toEqual(none);
  });

  it('validates before anything else', () => {
    expect(() =>
      resolveFilter({ filterConvention: noExistsNoNot }, { price: { $gt: 'x' } } as never),
    ).toThrow(/'price.\$gt'/);
  });

  it('pushes the whole filter when the convention takes it', () => {
    const filter = { color: 'red', n: { $gt: 1 } };
    const resolved = resolveFilter({ name: 'store', filterConvention: noExistsNoNot }, filter);
    expect(resolved.native?.convention).toBe('no-exists-no-not');
    expect(resolved.native?.filter).toEqual({ $and: [{ color: { $eq: 'red' } }, { n: { $gt: 1 } }] });
    expect(resolved.residual).toBeUndefined();
    expect(resolved.warnings).toEqual([]);
    expect(resolved.pushed).toEqual(parseFilter(filter));
  });

  it('accepts a parsed tree', () => {
    const node = parseFilter({ a: 1 });
    expect(resolveFilter({ filterConvention: zerdaFilterConvention }, node).pushed).toBe(node);
  });

  it('splits the root AND: pushable conjuncts native, the rest residual with a warning', () => {
    const resolved = resolveFilter(
      { name: 'my-store', filterConvention: noExistsNoNot },
      { color: 'red', a: { $exists: true }, $or: [{ b: 1 }, { c: { $exists: false } }], n: { $lt: 3 } },
    );
    expect(resolved.native?.filter).toEqual({ $and: [{ color: { $eq: 'red' } }, { n: { $lt: 3 } }] });
    expect(serializeFilter(resolved.pushed!)).toEqual({
      $and: [{ color: { $eq: 'red' } }, { n: { $lt: 3 } }],
    });
    expect(serializeFilter(resolved.residual!)).toEqual({
      $and: [{ a: { $exists: true } }, { $or: [{ b: { $eq: 1 } }, { c: { $exists: false } }] }],
    });
    expect(resolved.warnings).toHaveLength(1);
    expect(resolved.warnings[0]).toMatchObject({ type: 'unsupported', source: 'my-store' });
    expect(resolved.warnings[0]!.message).toContain("filter convention 'no-exists-no-not'");
    expect(resolved.warnings[0]!.message).toContain('{"a":{"$exists":true}}');
    expect(resolved.warnings[0]!.message).toContain('client-side');
  });

  it('splits a negated OR into conjuncts (De Morgan) before splitting', () => {
    const resolved = resolveFilter(
      { filterConvention: noExistsNoNot },
      { $not: { $or: [{ a: 1 }, { b: { $gt: 2 } }] } },
    );
    expect(resolved.native?.filter).toEqual({ a: { $ne: 1 } });
    expect(serializeFilter(resolved.residual!)).toEqual({ $not: { b: { $gt: 2 } } });
  });

  it('gives a convention that takes one condition that one, and leaves the rest client-side', () => {
    const resolved = resolveFilter(
      { name: 'one-docid', filterConvention: oneDocIdCondition },
      { docId: ['d1', 'd2'], color: 'red', $and: [{ docId: { $ne: 'd2' } }] },
    );
    expect(resolved.native?.filter).toEqual({ docId: { $in: ['d1', 'd2'] } });
    expect(serializeFilter(resolved.residual!)).toEqual({
      $and: [{ color: { $eq: 'red' } }, { docId: { $ne: 'd2' } }],
    });
    const two = resolveFilter(
      { filterConvention: oneDocIdCondition },
      { docId: ['d1', 'd2'], $and: [{ docId: 'd1' }] },
    );
    expect(two.native?.filter).toEqual({ docId: { $in: ['d1', 'd2'] } });
    expect(serializeFilter(two.residual!)).toEqual({ docId: { $eq: 'd1' } });
  });

  it('puts everything in the residual for a backend without a convention, never dropping it', () => {
    const filter = { color: 'red' };
    const resolved = resolveFilter({ name: 'custom' }, filter);
    expect(resolved.native).toBeUndefined();
    expect(resolved.pushed).toBeUndefined();
    expect(resolved.residual).toEqual(parseFilter(filter));
    expect(resolved.warnings).toEqual([
      {
        type: 'unsupported',
        source: 'custom',
        message:
          'the backend \'custom\' declares no filter convention, so it cannot evaluate {"color":{"$eq":"red"}}; it is evaluated client-side on the candidates',
      },
    ]);
  });

  it('throws in strict mode whenever something would be evaluated client-side', () => {
    let caught: unknown;
    try {
      resolveFilter({ name: 'custom' }, { color: 'red' }, { strict: true });
    } catch (error) {
      caught = error;
    }
    expect(FilterError.isInstance(caught)).toBe(true);
    expect((caught as FilterError).reason).toBe('unsupported');
    expect((caught as FilterError).value).toEqual({ color: { $eq: 'red' } });
    expect((caught as FilterError).message).toMatch(/strict mode/);

    expect(() =>
      resolveFilter({ filterConvention: allButIds }, { id: 'r1', a: 1 }, { strict: true }),
    ).toThrow(/filter convention 'all-but-ids'.*\{"id":\{"\$eq":"r1"\}\}/);
    // Fully pushable: strict is satisfied.
    const native = resolveFilter({ filterConvention: allButIds }, { a: 1 }, { strict: true }).native;
    expect(native?.convention).toBe('all-but-ids');
    expect(native?.filter).toEqual({ a: { $eq: 1 } });
  });
});
