import { describe, expect, it } from 'vitest';
import { FilterError } from '../errors/index.js';
import {
  chromaFilterConvention,
  faissFilterConvention,
  parseFilter,
  pineconeFilterConvention,
  resolveFilter,
  serializeFilter,
  zerdaFilterConvention,
} from './index.js';

describe('resolveFilter', () => {
  it('means no filter for undefined and {}', () => {
    const none = { native: {}, pushed: undefined, residual: undefined, warnings: [] };
    expect(resolveFilter({ filterConvention: chromaFilterConvention }, undefined)).toEqual(none);
    expect(resolveFilter({ filterConvention: chromaFilterConvention }, {})).toEqual(none);
    expect(resolveFilter({}, { $and: [{}] })).toEqual(none);
    expect(resolveFilter({}, {}, { strict: true })).toEqual(none);
  });

  it('validates before anything else', () => {
    expect(() =>
      resolveFilter({ filterConvention: chromaFilterConvention }, { price: { $gt: 'x' } } as never),
    ).toThrow(/'price.\$gt'/);
  });

  it('pushes the whole filter when the convention takes it', () => {
    const filter = { color: 'red', n: { $gt: 1 } };
    const resolved = resolveFilter({ name: 'chroma', filterConvention: chromaFilterConvention }, filter);
    expect(resolved.native).toEqual({ where: { $and: [{ color: { $eq: 'red' } }, { n: { $gt: 1 } }] } });
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
      { name: 'chroma-store', filterConvention: chromaFilterConvention },
      { color: 'red', a: { $exists: true }, $or: [{ b: 1 }, { c: { $exists: false } }], n: { $lt: 3 } },
    );
    expect(resolved.native).toEqual({ where: { $and: [{ color: { $eq: 'red' } }, { n: { $lt: 3 } }] } });
    expect(serializeFilter(resolved.pushed!)).toEqual({
      $and: [{ color: { $eq: 'red' } }, { n: { $lt: 3 } }],
    });
    expect(serializeFilter(resolved.residual!)).toEqual({
      $and: [{ a: { $exists: true } }, { $or: [{ b: { $eq: 1 } }, { c: { $exists: false } }] }],
    });
    expect(resolved.warnings).toHaveLength(1);
    expect(resolved.warnings[0]).toMatchObject({ type: 'unsupported', source: 'chroma-store' });
    expect(resolved.warnings[0]!.message).toContain("filter convention 'chroma'");
    expect(resolved.warnings[0]!.message).toContain('{"a":{"$exists":true}}');
    expect(resolved.warnings[0]!.message).toContain('client-side');
  });

  it('splits a negated OR into conjuncts (De Morgan) before splitting', () => {
    const resolved = resolveFilter(
      { filterConvention: chromaFilterConvention },
      { $not: { $or: [{ a: 1 }, { b: { $gt: 2 } }] } },
    );
    expect(resolved.native).toEqual({ where: { a: { $ne: 1 } } });
    expect(serializeFilter(resolved.residual!)).toEqual({ $not: { b: { $gt: 2 } } });
  });

  it('gives FAISS one docId condition and leaves the rest client-side', () => {
    const resolved = resolveFilter(
      { name: 'faiss', filterConvention: faissFilterConvention },
      { docId: ['d1', 'd2'], color: 'red', $and: [{ docId: { $ne: 'd2' } }] },
    );
    expect(resolved.native).toEqual({ docIdFilter: ['d1', 'd2'] });
    expect(serializeFilter(resolved.residual!)).toEqual({
      $and: [{ color: { $eq: 'red' } }, { docId: { $ne: 'd2' } }],
    });
    const two = resolveFilter(
      { filterConvention: faissFilterConvention },
      { docId: ['d1', 'd2'], $and: [{ docId: 'd1' }] },
    );
    expect(two.native).toEqual({ docIdFilter: ['d1', 'd2'] });
    expect(serializeFilter(two.residual!)).toEqual({ docId: { $eq: 'd1' } });
  });

  it('puts everything in the residual for a backend without a convention, never dropping it', () => {
    const filter = { color: 'red' };
    const resolved = resolveFilter({ name: 'custom' }, filter);
    expect(resolved.native).toEqual({});
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
      resolveFilter({ filterConvention: pineconeFilterConvention }, { id: 'r1', a: 1 }, { strict: true }),
    ).toThrow(/filter convention 'pinecone'.*\{"id":\{"\$eq":"r1"\}\}/);
    // Fully pushable: strict is satisfied.
    expect(
      resolveFilter({ filterConvention: pineconeFilterConvention }, { a: 1 }, { strict: true }).native,
    ).toEqual({
      filter: { a: { $eq: 1 } },
    });
  });
});
