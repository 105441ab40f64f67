import type { FilterNode } from './types.js';

/**
 * How a backend takes metadata filters natively. A driver declares one (its own, from its
 * package, or core's `zerdaFilterConvention`) and `resolveFilter` uses it to split a filter into
 * the part the backend evaluates and the part evaluated client-side.
 */
export interface FilterConvention<Native = unknown> {
  /** Names the convention in native filters, warnings and errors, for example 'chroma'. */
  readonly name: string;
  /**
   * True when the backend evaluates this whole subtree natively with exactly Zerda's semantics
   * (see `evaluateFilter`); false sends it to the client-side residual.
   */
  canPushDown(node: FilterNode): boolean;
  /** The native form of a subtree for which `canPushDown` is true; throws otherwise. */
  translate(node: FilterNode): Native;
  /**
   * Checks a native filter written by hand (`nativeFilter(convention, value)`): a description of
   * what is wrong, or undefined when the backend can take it. Optional.
   */
  checkNative?(value: unknown): string | undefined;
}

const brand = Symbol.for('zerda.nativeFilter');

/**
 * A filter in one backend's own convention, labelled with that convention's name so a store can
 * refuse one written for another backend (or a Zerda filter passed where a native one belongs).
 * Made by `resolveFilter`, or by hand with `nativeFilter`.
 */
export interface NativeFilter<Native = unknown> {
  readonly [brand]: true;
  /** The convention's name, for example 'chroma'. */
  readonly convention: string;
  /** The filter in that convention's form. */
  readonly filter: Native;
}

/** Labels a filter written in a backend's own form: `nativeFilter(chromaFilterConvention, { year: { $gte: 2020 } })`. */
export function nativeFilter<Native>(
  convention: FilterConvention<Native> | string,
  filter: Native,
): NativeFilter<Native> {
  const name = typeof convention === 'string' ? convention : convention.name;
  return Object.freeze({ [brand]: true as const, convention: name, filter });
}

/** True for a value made by `nativeFilter` (or `resolveFilter`), whichever copy of core made it. */
export function isNativeFilter(value: unknown): value is NativeFilter {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}
