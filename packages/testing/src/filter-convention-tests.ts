import {
  evaluateFilter,
  type FilterConvention,
  type FilterNode,
  type FilterRecord,
  resolveFilter,
} from '@zerda/core';
import {
  filterNodeArbitrary,
  filterNodeArbitraryWith,
  filterRecordArbitrary,
  type RecordArbitraryOptions,
} from '@zerda/core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** A named family of random Zerda filters. */
export type FilterKind = readonly [name: string, filters: fc.Arbitrary<FilterNode>];

/**
 * Filters over every field, and over few fields so that conditions on one field meet often (an
 * AND of two docId conditions on a record whose docId is a list, say).
 */
export const randomFilterKinds: readonly FilterKind[] = [
  ['any field', filterNodeArbitrary],
  ['two fields', filterNodeArbitraryWith({ fields: ['a', 'docId'], strings: ['x', 'd1', 'd2'] })],
  ['docId only', filterNodeArbitraryWith({ fields: ['docId'], strings: ['d1', 'd2', 'd3'] })],
  [
    'docId equality and membership',
    filterNodeArbitraryWith({ fields: ['docId'], strings: ['d1', 'd2', 'd3'], leaves: ['eq', 'in'] }),
  ],
  [
    'numbers on one field',
    filterNodeArbitraryWith({ fields: ['a'], leaves: ['eq', 'ne', 'range', 'in', 'nin'] }),
  ],
];

export interface FilterConventionTestOptions<Native> {
  convention: FilterConvention<Native>;
  /** Names the convention in the tests' titles (default its `name`). */
  title?: string;
  /**
   * The database's own semantics for a native filter, one entry per variant the database may have
   * (Chroma's int/float truncation, Pinecone's two `$ne` behaviours): name to evaluator. Each
   * should throw on a native filter the database would refuse, so a malformed translation fails.
   */
  semantics: Readonly<Record<string, (native: Native, record: FilterRecord) => boolean>>;
  /** The records the database can hold (default: any, string arrays included). */
  records?: RecordArbitraryOptions;
  /** The random filter families (default `randomFilterKinds`). */
  kinds?: readonly FilterKind[];
  /** Random filters per family and property (default 300). */
  numRuns?: number;
  /**
   * Of 2,000 random filters (seed 42), more than this many must be pushed down at least in part:
   * guards against a vacuous pass where the generators never reach the convention.
   */
  minPushed: number;
}

/**
 * Registers the differential property tests of a filter convention: for random Zerda filters and
 * records, (1) every pushable filter translates to a native filter selecting what core's reference
 * evaluator selects, and (2) what the native part selects, intersected with what the residual
 * selects client-side, is exactly what the whole filter selects, with one warning for a residual.
 */
export function testFilterConvention<Native>(options: FilterConventionTestOptions<Native>): void {
  const {
    convention,
    semantics,
    records = {},
    kinds = randomFilterKinds,
    numRuns = 300,
    minPushed,
  } = options;
  const title = options.title ?? `${convention.name} convention`;
  const runs = { numRuns };
  const recordList = fc.array(filterRecordArbitrary(records), { minLength: 1, maxLength: 10 });

  describe.each(Object.entries(semantics))(`${title}, native semantics: %s`, (_, evaluate) => {
    it.each(kinds)(
      'translates each pushable filter into one selecting what Zerda selects (%s)',
      (_kind, filters) => {
        fc.assert(
          fc.property(filters, recordList, (node, subjects) => {
            if (!convention.canPushDown(node)) return;
            const native = convention.translate(node);
            for (const record of subjects)
              expect(evaluate(native, record)).toBe(evaluateFilter(node, record));
          }),
          runs,
        );
      },
    );

    it.each(kinds)(
      'native AND residual selects exactly what the whole filter selects (%s)',
      (_kind, filters) => {
        fc.assert(
          fc.property(filters, recordList, (node, subjects) => {
            const resolved = resolveFilter({ filterConvention: convention }, node);
            expect(resolved.native === undefined).toBe(resolved.pushed === undefined);
            expect(resolved.native?.convention ?? convention.name).toBe(convention.name);
            expect(resolved.warnings.length).toBe(resolved.residual === undefined ? 0 : 1);
            for (const record of subjects) {
              const backend =
                resolved.native === undefined || evaluate(resolved.native.filter as Native, record);
              const client = resolved.residual === undefined || evaluateFilter(resolved.residual, record);
              expect(backend && client).toBe(evaluateFilter(node, record));
            }
          }),
          runs,
        );
      },
    );
  });

  it(`${title} pushes down a share of random filters (the generators reach it)`, () => {
    const sample = fc.sample(filterNodeArbitrary, { numRuns: 2000, seed: 42 });
    const pushed = sample.filter(
      (node) => resolveFilter({ filterConvention: convention }, node).pushed !== undefined,
    );
    expect(pushed.length).toBeGreaterThan(minPushed);
  });
}
