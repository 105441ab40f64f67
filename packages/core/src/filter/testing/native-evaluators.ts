import { readField } from '../evaluate-filter.js';
import type { FilterRecord } from '../types.js';

/*
 * Small evaluators of each backend's NATIVE filter semantics, written from the backends' own
 * documentation, for testing that a convention's translation selects what Zerda's reference
 * evaluator selects. They are strict about form: a filter the real backend would refuse (two
 * keys in a Chroma object, a boolean in a Pinecone `$in`, ...) throws, so a malformed
 * translation fails the test instead of passing by accident.
 *
 * Where a backend's behaviour is uncertain or has changed across versions, an option selects
 * it, and the tests run the translations under every variant.
 */

/** Metadata as a backend stores it: the record's metadata plus its document id under `docIdKey`. */
export function toStoredMetadata(record: FilterRecord, docIdKey = 'docId'): Record<string, unknown> {
  const stored: Record<string, unknown> = { ...record.metadata };
  const docId = readField(record, 'docId');
  if (docId != null) stored[docIdKey] = docId;
  return stored;
}
