import {
  type FilterConvention,
  FilterError,
  type FilterNode,
  type FilterRecord,
  readField,
} from '@zerda/core';
import { pushNegations } from '@zerda/core/backend';

/** The FAISS store's native filter: the allowed document ids. */
export interface FaissFilter {
  /**
   * A chunk passes when its document id (`docId`, else `metadata.docId`; for a string-array
   * docId, any element) is in the list. `[]` passes nothing.
   */
  readonly docIdFilter: readonly string[];
}

/**
 * FAISS stores vectors, not metadata, so its store keeps each chunk's document id beside the
 * vector and takes one native filter, `{ docIdFilter: string[] }` (see `FaissFilter`).
 *
 * Pushed down: `docId` equality and membership with string values, and OR of those (the union
 * of the lists). One such condition is pushed per search; everything else (another `docId`
 * condition ANDed with it included) is evaluated client-side.
 */
export const faissFilterConvention: FilterConvention<FaissFilter> = Object.freeze({
  name: 'faiss',
  canPushDown: (node: FilterNode) => allowList(pushNegations(node)) !== undefined,
  translate(node: FilterNode): FaissFilter {
    const allowed = allowList(pushNegations(node));
    if (allowed === undefined) {
      throw new FilterError({
        path: '',
        value: node,
        reason: 'unsupported',
        message:
          'the faiss convention pushes down only one docId equality or membership condition (or an OR of them)',
      });
    }
    return { docIdFilter: [...allowed].sort() };
  },
  checkNative(value: unknown): string | undefined {
    const list = (value as Partial<FaissFilter> | null)?.docIdFilter;
    return Array.isArray(list) && list.every((id) => typeof id === 'string')
      ? undefined
      : 'expected { docIdFilter: string[] } (the allowed document ids)';
  },
});

/** Whether a record passes a `docIdFilter` allow-list (the FAISS convention's native semantics). */
export function matchesDocIdFilter(
  allowed: ReadonlySet<string> | readonly string[],
  record: FilterRecord,
): boolean {
  const set = allowed instanceof Set ? allowed : new Set(allowed as readonly string[]);
  const docId = readField(record, 'docId');
  if (typeof docId === 'string') return set.has(docId);
  if (Array.isArray(docId)) return docId.some((element) => typeof element === 'string' && set.has(element));
  return false;
}

/** The set of allowed document ids that selects exactly what `node` selects, if there is one. */
function allowList(node: FilterNode): Set<string> | undefined {
  switch (node.kind) {
    case 'compare':
      return node.field === 'docId' && node.op === 'eq' && typeof node.value === 'string'
        ? new Set([node.value])
        : undefined;
    case 'in':
      return node.field === 'docId' &&
        !node.negated &&
        node.values.every((value) => typeof value === 'string')
        ? new Set(node.values as readonly string[])
        : undefined;
    case 'and':
      // Intersecting lists would be wrong for a string-array docId (['a', 'b'] matches
      // docId = 'a' AND docId = 'b', but not the empty intersection), so AND is pushed only
      // around a single child; resolveFilter then leaves further conjuncts client-side.
      return node.children.length === 1 ? allowList(node.children[0]!) : undefined;
    case 'or': {
      const result = new Set<string>();
      for (const child of node.children) {
        const set = allowList(child);
        if (set === undefined) return undefined;
        for (const id of set) result.add(id);
      }
      return result;
    }
    default:
      return undefined;
  }
}
