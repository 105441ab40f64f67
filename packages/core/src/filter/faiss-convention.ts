import { FilterError } from '../errors/index.js';
import { readField } from './evaluate-filter.js';
import type { FilterConvention } from './filter-convention.js';
import { pushNegations } from './normalize-filter.js';
import type { FilterNode, FilterRecord } from './types.js';

/**
 * FAISS stores vectors, not metadata, so its store keeps each chunk's document id beside the
 * vector and takes one native option, `docIdFilter: string[]`: the allowed document ids. A
 * record passes when its document id (the `docId` pseudo-field: the chunk's `docId`, else
 * `metadata.docId`) is in the list, or, for a string-array `docId`, when any element is; `[]`
 * passes nothing. `matchesDocIdFilter` is that rule, for the store to apply.
 *
 * Pushed down: `docId` equality and membership with string values, and OR of those (the union
 * of the lists). One such condition is pushed per search; everything else (another `docId`
 * condition ANDed with it included) is evaluated client-side.
 */
export const faissFilterConvention: FilterConvention = Object.freeze({
  name: 'faiss',
  option: 'docIdFilter',
  canPushDown: (node: FilterNode) => allowList(pushNegations(node)) !== undefined,
  translate(node: FilterNode): string[] {
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
    return [...allowed].sort();
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
