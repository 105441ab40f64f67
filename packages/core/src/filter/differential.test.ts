import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  evaluateFilter,
  type FilterConvention,
  type FilterNode,
  type FilterRecord,
  parseFilter,
  resolveFilter,
  zerdaFilterConvention,
} from './index.js';
import {
  filterNodeArbitrary,
  filterNodeArbitraryWith,
  filterRecordArbitrary,
  type RecordArbitraryOptions,
} from './testing/arbitraries.js';

/*
 * The invariant behind every convention: what the backend selects natively, intersected with
 * what the residual selects client-side, is exactly what Zerda's reference evaluator selects.
 * Each backend's native semantics come from the test evaluators, under every variant of the
 * behaviour we are unsure of or that changed across versions.
 */

type NativeEvaluator = (native: unknown, record: FilterRecord) => boolean;

interface Case {
  name: string;
  convention: FilterConvention;
  records: RecordArbitraryOptions;
  evaluate: NativeEvaluator;
}

const cases: Case[] = [
  {
    name: 'zerda (in-memory)',
    convention: zerdaFilterConvention,
    records: {},
    evaluate: (native, record) => evaluateFilter(parseFilter(native), record),
  },
];

const runs = { numRuns: 300 };

// Filters over every field, and over few fields so that conditions on one field meet often (an
// AND of two docId conditions on a record whose docId is a list, say).
const filterKinds: Array<[string, fc.Arbitrary<FilterNode>]> = [
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

describe.each(cases)('$name convention', ({ convention, records, evaluate }) => {
  const recordList = fc.array(filterRecordArbitrary(records), { minLength: 1, maxLength: 10 });

  it.each(filterKinds)(
    'translates each pushable subtree into a native filter selecting what Zerda selects (%s)',
    (_kind, filters) => {
      fc.assert(
        fc.property(filters, recordList, (node, subjects) => {
          if (!convention.canPushDown(node)) return;
          const native = convention.translate(node);
          for (const record of subjects) expect(evaluate(native, record)).toBe(evaluateFilter(node, record));
        }),
        runs,
      );
    },
  );

  it.each(filterKinds)(
    'native AND residual selects exactly what the whole filter selects (%s)',
    (_kind, filters) => {
      fc.assert(
        fc.property(filters, recordList, (node, subjects) => {
          const resolved = resolveFilter({ filterConvention: convention }, node);
          const native = resolved.native?.filter;
          expect(native === undefined).toBe(resolved.pushed === undefined);
          if (resolved.native !== undefined) expect(resolved.native.convention).toBe(convention.name);
          expect(resolved.warnings.length).toBe(resolved.residual === undefined ? 0 : 1);
          for (const record of subjects) {
            const backend = native === undefined || evaluate(native, record);
            const client = resolved.residual === undefined || evaluateFilter(resolved.residual, record);
            expect(backend && client).toBe(evaluateFilter(node, record));
          }
        }),
        runs,
      );
    },
  );
});

describe('differential coverage', () => {
  // Guards against a vacuous pass: the generators must produce pushable filters for each backend.
  it.each(cases)('$name pushes down a good share of random filters', ({ convention }) => {
    const sample = fc.sample(filterNodeArbitrary, { numRuns: 2000, seed: 42 });
    const pushedSome = sample.filter(
      (node: FilterNode) => resolveFilter({ filterConvention: convention }, node).pushed !== undefined,
    );
    expect(pushedSome.length).toBeGreaterThan(400);
  });

  it('a backend without a convention evaluates everything client-side, exactly', () => {
    fc.assert(
      fc.property(
        filterNodeArbitrary,
        fc.array(filterRecordArbitrary(), { maxLength: 10 }),
        (node, subjects) => {
          const resolved = resolveFilter({}, node);
          expect(resolved.native).toBeUndefined();
          for (const record of subjects) {
            const client = resolved.residual === undefined || evaluateFilter(resolved.residual, record);
            expect(client).toBe(evaluateFilter(node, record));
          }
        },
      ),
    );
  });
});
