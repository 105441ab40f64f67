import { nativeFilter, type VectorDatabase } from '@zerda/core';
import { createVectorStore, type VectorDriver } from '@zerda/core/backend';

/**
 * A v2 driver over a store under test, made into a store again: the suite uses it to see the
 * store through core's filter resolution with its convention hidden (everything client-side) and
 * to count the calls that reach the store. Scores pass through as similarities.
 */
export function viewOf(
  store: VectorDatabase,
  { keepConvention, onCall }: { keepConvention: boolean; onCall?: (operation: string) => void },
): VectorDatabase {
  const convention = store.filterConvention;
  const driver: VectorDriver = {
    specificationVersion: 'v2',
    name: keepConvention ? store.name : `${store.name} (no filter convention)`,
    capabilities: { ...store.capabilities, scoreConversion: 'similarity' },
    ...(keepConvention && convention !== undefined ? { filterConvention: convention } : {}),
    async upsert(records, options) {
      onCall?.('upsert');
      await store.add([...records], {
        embeddings: records.map((record) => record.vector),
        ...signalOf(options),
      });
    },
    async query(vector, { topK, filter, signal }) {
      onCall?.('query');
      const { hits } = await store.search(vector, {
        topK,
        ...(filter === undefined || convention === undefined
          ? {}
          : { nativeFilter: nativeFilter(convention, filter) }),
        ...(signal === undefined ? {} : { signal }),
      });
      return hits.map((hit) => ({ id: hit.chunk.id, score: hit.score, chunk: hit.chunk }));
    },
    async get(ids, options) {
      onCall?.('get');
      return store.get(ids, signalOf(options));
    },
    async count(options) {
      onCall?.('count');
      return store.count(signalOf(options));
    },
  };
  return createVectorStore(driver, store.dimension === undefined ? {} : { dimension: store.dimension });
}

function signalOf(options: { signal?: AbortSignal | undefined }): { signal?: AbortSignal } {
  return options.signal === undefined ? {} : { signal: options.signal };
}
