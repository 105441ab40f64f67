import type { DocumentInterface } from '@langchain/core/documents';
import {
  compileFilter,
  type FilterConvention,
  type FilterNode,
  InvalidArgumentError,
  type NativeFilter,
  nativeFilter,
} from '@zerda/core';
import { type StoredMetadataKeys, storedDocumentToChunk } from './documents.js';

const name = 'langchain';

/**
 * A LangChain-backed store's convention: a native filter is the wrapped store's own `filter`
 * (`FilterType`), passed through as given. By default no Zerda filter is pushed down (a store's
 * filter means what that store says), so Zerda filters are evaluated client-side; with
 * `filterConvention` (see `LangChainStoreSettings`), what it allows goes down.
 */
export function langChainConvention<Filter>(
  input: FilterConvention | 'document-predicate' | undefined,
  keys: StoredMetadataKeys,
): FilterConvention<Filter> {
  const valid =
    input === undefined || input === 'document-predicate' || typeof input?.translate === 'function';
  if (!valid || (typeof input === 'object' && typeof input.canPushDown !== 'function')) {
    const message = "expected a FilterConvention or 'document-predicate'";
    throw new InvalidArgumentError({ argument: 'filterConvention', value: input, message });
  }
  const predicate = (node: FilterNode) => {
    const matches = compileFilter(node);
    return (document: DocumentInterface) => matches(storedDocumentToChunk(document, keys));
  };
  return Object.freeze({
    name,
    canPushDown: (node: FilterNode) =>
      typeof input === 'object' ? input.canPushDown(node) : input !== undefined,
    translate: (node: FilterNode) =>
      (typeof input === 'object' ? input.translate(node) : predicate(node)) as Filter,
  });
}

/** Labels the wrapped store's own filter: `store.search(v, { topK, nativeFilter: langChainFilter(f) })`. */
export function langChainFilter<Filter>(filter: Filter): NativeFilter<Filter> {
  return nativeFilter<Filter>(name, filter);
}
