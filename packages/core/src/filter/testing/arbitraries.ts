import fc from 'fast-check';
import type { Metadata, MetadataValue } from '../../model/index.js';
import { andNode, equalityNode, existsNode, inNode, notNode, orNode, rangeNode } from '../nodes.js';
import type { FilterNode, FilterRecord, FilterScalar, RangeOp } from '../types.js';

/*
 * fast-check generators of filters and records over small value pools, so that random filters
 * often hit random records: missing fields, string arrays, ints and fractions (around the
 * values where int/float handling goes wrong), booleans, and the pseudo-fields `id` and `docId`.
 */

export const filterFieldPool = ['a', 'b', 'c', 'docId', 'id'] as const;
export const stringPool = ['x', 'y', 'd1', 'd2', 'd3', 'r1'] as const;
export const numberPool = [-2.5, -2, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3] as const;

const stringValue = fc.constantFrom(...stringPool);
const numberValue = fc.constantFrom(...numberPool);
function scalarArbitraries(strings: readonly string[]) {
  const string = fc.constantFrom(...strings);
  const scalar: fc.Arbitrary<FilterScalar> = fc.oneof(
    { arbitrary: string, weight: 3 },
    { arbitrary: numberValue, weight: 2 },
    { arbitrary: fc.boolean(), weight: 1 },
  );
  // Lists of one type are the common case; mixed lists exercise the per-type splitting.
  const list: fc.Arbitrary<FilterScalar[]> = fc.oneof(
    fc.array(string, { maxLength: 4 }),
    fc.array(numberValue, { maxLength: 4 }),
    fc.array(scalar, { maxLength: 4 }),
  );
  return { scalar, list };
}

export interface RecordArbitraryOptions {
  /** Give some fields string-array values (default true). */
  arrays?: boolean;
  /** Shortest generated array (Chroma refuses empty arrays); default 0. */
  minArrayLength?: number;
}

export function metadataValueArbitrary(options: RecordArbitraryOptions = {}): fc.Arbitrary<MetadataValue> {
  const scalars: fc.Arbitrary<MetadataValue>[] = [stringValue, numberValue, fc.boolean()];
  if (options.arrays ?? true) {
    scalars.push(
      fc.uniqueArray(stringValue, { minLength: options.minArrayLength ?? 0, maxLength: 3 }) as fc.Arbitrary<
        string[]
      >,
    );
  }
  return fc.oneof(...scalars);
}

/**
 * Records with ids r1..r3, an optional docId, and metadata over a, b, c and sometimes docId
 * (often a list of document ids, so that several docId conditions meet on one record).
 */
export function filterRecordArbitrary(options: RecordArbitraryOptions = {}): fc.Arbitrary<FilterRecord> {
  const value = metadataValueArbitrary(options);
  const docIds = fc.constantFrom('d1', 'd2', 'd3');
  const metadataDocId: fc.Arbitrary<MetadataValue> =
    (options.arrays ?? true)
      ? fc.oneof(
          docIds,
          fc.uniqueArray(docIds, { minLength: Math.max(1, options.minArrayLength ?? 0), maxLength: 3 }),
          value,
        )
      : fc.oneof(docIds, value);
  return fc
    .record({
      id: fc.constantFrom('r1', 'r2', 'r3'),
      // Mostly absent, so that metadata.docId (often a list) is what `docId` reads.
      docId: fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: docIds, weight: 1 }),
      fields: fc.record({ a: value, b: value, c: value }, { requiredKeys: [] }),
      metadataDocId: fc.option(metadataDocId, { freq: 4 }),
      bare: fc.boolean(),
    })
    .map(({ id, docId, fields, metadataDocId: inMetadata, bare }): FilterRecord => {
      const metadata: Metadata = { ...(fields as Metadata) };
      if (inMetadata !== null) metadata.docId = inMetadata;
      const record: { id: string; docId?: string; metadata?: Metadata } = { id };
      if (docId !== undefined) record.docId = docId;
      // Some records have no metadata object at all.
      if (!bare || Object.keys(metadata).length > 0) record.metadata = metadata;
      return record;
    });
}

const rangeOp = fc.constantFrom<RangeOp>('gt', 'gte', 'lt', 'lte');

export type LeafKind = 'eq' | 'ne' | 'range' | 'in' | 'nin' | 'exists';

export interface FilterArbitraryOptions {
  /** The fields conditions test (default `filterFieldPool`). */
  fields?: readonly string[];
  /** The strings they compare with (default `stringPool`). */
  strings?: readonly string[];
  /** The kinds of condition (default all), to aim at one convention's pushable fragment. */
  leaves?: readonly LeafKind[];
}

/** One condition on one field. */
export function leafNodeArbitrary(options: FilterArbitraryOptions = {}): fc.Arbitrary<FilterNode> {
  const field = fc.constantFrom(...(options.fields ?? filterFieldPool));
  const { scalar, list } = scalarArbitraries(options.strings ?? stringPool);
  const leaves: Record<LeafKind, fc.Arbitrary<FilterNode>> = {
    eq: fc.tuple(field, scalar).map(([f, v]) => equalityNode(f, 'eq', v)),
    ne: fc.tuple(field, scalar).map(([f, v]) => equalityNode(f, 'ne', v)),
    range: fc.tuple(field, rangeOp, numberValue).map(([f, op, v]) => rangeNode(f, op, v)),
    in: fc.tuple(field, list).map(([f, vs]) => inNode(f, vs, false)),
    nin: fc.tuple(field, list).map(([f, vs]) => inNode(f, vs, true)),
    exists: fc.tuple(field, fc.boolean()).map(([f, exists]) => existsNode(f, exists)),
  };
  const kinds = options.leaves ?? (Object.keys(leaves) as LeafKind[]);
  return fc.oneof(...kinds.map((kind) => leaves[kind]));
}

/** Filter trees of AND (sometimes empty: `{}`), OR, NOT and leaves, a few levels deep. */
export function filterNodeArbitraryWith(options: FilterArbitraryOptions = {}): fc.Arbitrary<FilterNode> {
  const leaf = leafNodeArbitrary(options);
  return fc.letrec<{ node: FilterNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('node'), { maxLength: 3 }).map(andNode),
      fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map(orNode),
      tie('node').map(notNode),
    ),
  })).node;
}

/** Filter trees over every field of the pool. */
export const filterNodeArbitrary: fc.Arbitrary<FilterNode> = filterNodeArbitraryWith();
