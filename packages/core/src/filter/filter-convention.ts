import type { FilterNode } from './types.js';

/**
 * How a backend takes metadata filters natively. A backend declares one (usually one of the
 * conventions core provides) and `resolveFilter` uses it to split a filter into the part the
 * backend evaluates and the part evaluated client-side.
 */
export interface FilterConvention {
  /** Names the convention in warnings and errors, for example 'chroma'. */
  readonly name: string;
  /** The search option the backend reads, for example 'where', 'filter' or 'docIdFilter'. */
  readonly option: string;
  /**
   * True when the backend evaluates this whole subtree natively with exactly Zerda's semantics
   * (see `evaluateFilter`); false sends it to the client-side residual.
   */
  canPushDown(node: FilterNode): boolean;
  /** The native form of a subtree for which `canPushDown` is true; throws otherwise. */
  translate(node: FilterNode): unknown;
}
