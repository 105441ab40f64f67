import { FilterError } from '../errors/index.js';
import type { Warning } from '../model/index.js';
import { type FilterConvention, type NativeFilter, nativeFilter } from './filter-convention.js';
import { conjunction } from './nodes.js';
import { conjunctsOf, isMatchAll, pushNegations, simplifyFilter } from './normalize-filter.js';
import { parseFilter } from './parse-filter.js';
import { serializeFilter } from './serialize-filter.js';
import type { FilterInput, FilterNode } from './types.js';

/** What a backend search needs to honour a filter. */
export interface ResolvedFilter<Native = unknown> {
  /** The native filter to give the store's search as `nativeFilter`, if any part can go native. */
  native: NativeFilter<Native> | undefined;
  /** The part the backend evaluates (what `native` says), if any. */
  pushed: FilterNode | undefined;
  /**
   * The part the backend cannot evaluate: the caller evaluates it on the candidates
   * (`compileFilter(residual)`), over-fetching as needed. A record matches the whole filter
   * exactly when the backend returns it and it matches the residual.
   */
  residual: FilterNode | undefined;
  /** One 'unsupported' warning when there is a residual. */
  warnings: Warning[];
}

export interface ResolveFilterOptions {
  /** Refuse (FilterError, reason 'unsupported') any filter the backend cannot evaluate whole. */
  strict?: boolean;
}

/** The part of a vector database that filter resolution reads. */
export interface FilterTarget<Native = unknown> {
  readonly name?: string;
  readonly filterConvention?: FilterConvention<Native> | undefined;
}

const empty = <Native>(): ResolvedFilter<Native> => ({
  native: undefined,
  pushed: undefined,
  residual: undefined,
  warnings: [],
});

/**
 * Splits a filter between a backend and the client. The filter is parsed (and validated) first,
 * so an invalid filter throws a FilterError before any backend is called.
 *
 * When the convention takes the whole filter, it all goes native. Otherwise the filter is
 * normalised (negations pushed down, nested ANDs flattened) and the root AND's conjuncts are
 * split: those the convention can evaluate are ANDed and translated, the others ANDed into the
 * residual (a non-pushable OR or NOT goes there whole). A backend without a convention gets
 * everything in the residual. Nothing is dropped: the residual comes with a warning, and
 * `strict` turns it into an error. `{}` and `undefined` mean no filter.
 */
export function resolveFilter<Native = unknown>(
  db: FilterTarget<Native>,
  filter: FilterInput | FilterNode | undefined,
  options: ResolveFilterOptions = {},
): ResolvedFilter<Native> {
  if (filter === undefined) return empty();
  const node = parseFilter(filter);
  if (isMatchAll(simplifyFilter(node))) return empty();
  const convention = db.filterConvention;
  if (convention === undefined) return withResidual(db, undefined, undefined, node, options);
  if (convention.canPushDown(node)) {
    return {
      native: nativeFilter(convention, convention.translate(node)),
      pushed: node,
      residual: undefined,
      warnings: [],
    };
  }

  const pushable: FilterNode[] = [];
  const residual: FilterNode[] = [];
  for (const conjunct of conjunctsOf(simplifyFilter(pushNegations(node)))) {
    // Each pushable conjunct must also combine with those already taken (FAISS takes only one).
    if (
      convention.canPushDown(conjunct) &&
      (pushable.length === 0 || convention.canPushDown(conjunction([...pushable, conjunct])))
    ) {
      pushable.push(conjunct);
    } else residual.push(conjunct);
  }
  const pushed = pushable.length === 0 ? undefined : conjunction(pushable);
  return withResidual(db, convention, pushed, conjunction(residual), options);
}

function withResidual<Native>(
  db: FilterTarget<Native>,
  convention: FilterConvention<Native> | undefined,
  pushed: FilterNode | undefined,
  residual: FilterNode,
  options: ResolveFilterOptions,
): ResolvedFilter<Native> {
  const backend = db.name === undefined ? 'the backend' : `the backend '${db.name}'`;
  const shown = show(residual);
  const cannot =
    convention === undefined
      ? `${backend} declares no filter convention, so it cannot evaluate ${shown}`
      : `${backend} (filter convention '${convention.name}') cannot evaluate ${shown}`;
  if (options.strict) {
    throw new FilterError({
      path: '',
      value: serializeFilter(residual),
      reason: 'unsupported',
      message: `${cannot}, and strict mode forbids evaluating it client-side`,
    });
  }
  const message = `${cannot}; it is evaluated client-side on the candidates`;
  const native =
    pushed === undefined || convention === undefined
      ? undefined
      : nativeFilter(convention, convention.translate(pushed));
  return {
    native,
    pushed,
    residual,
    warnings: [{ type: 'unsupported', message, source: db.name ?? convention?.name ?? 'filter' }],
  };
}

function show(node: FilterNode): string {
  const json = JSON.stringify(serializeFilter(node));
  return json.length > 200 ? `${json.slice(0, 197)}...` : json;
}
