import type { Metadata } from '../model/index.js';

/** A value a filter compares with: what every backend can store and compare. */
export type FilterScalar = string | number | boolean;

// ---------------------------------------------------------------------------------------------
// The language as the user writes it
// ---------------------------------------------------------------------------------------------

/** The operators a field condition may use; several in one object mean AND. */
export interface FieldOperators {
  $eq?: FilterScalar;
  $ne?: FilterScalar;
  /** Range operators compare numbers only (as Chroma and Pinecone do). */
  $gt?: number;
  $gte?: number;
  $lt?: number;
  $lte?: number;
  /** `[]` matches nothing. */
  $in?: readonly FilterScalar[];
  /** `[]` matches everything. */
  $nin?: readonly FilterScalar[];
  $exists?: boolean;
}

/** `value` is equality, `[a, b]` is membership (`$in`), an object holds operators. */
export type FieldCondition = FilterScalar | readonly FilterScalar[] | FieldOperators;

/** Conditions on fields, ANDed. Field names may not start with `$`. */
export type FieldFilter = { readonly [field: string]: FieldCondition };

/** `$and` / `$or` (non-empty lists) and `$not`; they may sit beside field conditions (AND). */
export type LogicalFilter =
  | { readonly $and: readonly FilterInput[] }
  | { readonly $or: readonly FilterInput[] }
  | { readonly $not: FilterInput };

/**
 * A filter in Zerda's Mongo-style language, as the user writes it (see `parseFilter`).
 * `{}` means "no filter". Untyped input (parsed JSON) is accepted by `parseFilter(unknown)`.
 */
export type FilterInput = FieldFilter | LogicalFilter;

// ---------------------------------------------------------------------------------------------
// The parsed tree
// ---------------------------------------------------------------------------------------------

export type EqualityOp = 'eq' | 'ne';
export type RangeOp = 'gt' | 'gte' | 'lt' | 'lte';
export type CompareOp = EqualityOp | RangeOp;

/** All children match; `children: []` matches every record (the parse of `{}`). */
export interface AndNode {
  readonly kind: 'and';
  readonly children: readonly FilterNode[];
}

/** Some child matches; `children: []` would match nothing (the parser never produces it). */
export interface OrNode {
  readonly kind: 'or';
  readonly children: readonly FilterNode[];
}

export interface NotNode {
  readonly kind: 'not';
  readonly child: FilterNode;
}

export interface EqualityNode {
  readonly kind: 'compare';
  readonly field: string;
  readonly op: EqualityOp;
  readonly value: FilterScalar;
}

export interface RangeNode {
  readonly kind: 'compare';
  readonly field: string;
  readonly op: RangeOp;
  readonly value: number;
}

export type CompareNode = EqualityNode | RangeNode;

/** `$in` (negated: false) or `$nin` (negated: true). */
export interface InNode {
  readonly kind: 'in';
  readonly field: string;
  readonly values: readonly FilterScalar[];
  readonly negated: boolean;
}

export interface ExistsNode {
  readonly kind: 'exists';
  readonly field: string;
  readonly exists: boolean;
}

/** A validated filter: what `parseFilter` returns and every evaluator and convention reads. */
export type FilterNode = AndNode | OrNode | NotNode | CompareNode | InNode | ExistsNode;

/** A node that tests one field. */
export type FieldNode = CompareNode | InNode | ExistsNode;

// ---------------------------------------------------------------------------------------------
// What a filter is evaluated on
// ---------------------------------------------------------------------------------------------

/**
 * What a filter reads: a `Chunk` satisfies it. The pseudo-field `id` is the record's id;
 * `docId` is its `docId`, or `metadata.docId` when it has none; every other field is read
 * from `metadata` (own properties only).
 */
export interface FilterRecord {
  readonly id: string;
  readonly docId?: string | undefined;
  readonly metadata?: Readonly<Metadata> | undefined;
}
