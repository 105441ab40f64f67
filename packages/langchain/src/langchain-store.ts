import type { VectorStoreInterface } from '@langchain/core/vectorstores';
import { type Embedder, InvalidArgumentError, type VectorDatabase } from '@zerda/core';
import { createVectorStore } from '@zerda/core/backend';
import { LangChainDriver } from './langchain-driver.js';
import { LangChainEmbedder } from './langchain-embedder.js';
import type { LangChainStoreSettings } from './langchain-settings.js';

export type { LangChainStoreSettings, UpsertMode } from './langchain-settings.js';

/** A LangChain store as a Zerda store (contract v2); `driver.scoreKind` tells the score direction. */
export type LangChainStore<Filter = unknown> = VectorDatabase<Filter> & {
  readonly driver: LangChainDriver<Filter>;
};

/**
 * Any LangChain `VectorStore` as a Zerda store, so Zerda's retrievers run over anything LangChain
 * connects to. Scores are Zerda's similarities; `delete` exists where the store can delete; its
 * errors become BackendErrors with the original as `cause`. The chunk id is written as `Document.id`
 * and `metadata._zerda_id` (some stores drop Document ids); documents Zerda did not write get
 * `Document.id`, else `sha256:<hash of the text>`.
 */
export function fromLangChainVectorStore<Store extends VectorStoreInterface>(
  store: Store,
  settings: LangChainStoreSettings = {},
): LangChainStore<Store['FilterType']> {
  if (
    typeof store?.similaritySearchVectorWithScore !== 'function' ||
    typeof store.addVectors !== 'function'
  ) {
    const message = 'expected a LangChain VectorStore (with addVectors and similaritySearchVectorWithScore)';
    throw new InvalidArgumentError({ argument: 'store', message });
  }
  const { dimension, embedder = store.embeddings ? 'store' : 'none' } = settings;
  if (embedder !== 'store' && embedder !== 'none' && typeof embedder?.embed !== 'function') {
    throw new InvalidArgumentError({
      argument: 'embedder',
      value: embedder,
      message: "expected an Embedder, 'store' or 'none'",
    });
  }
  const driver = new LangChainDriver<Store['FilterType']>(store, settings);
  const name = `${driver.name}:embeddings`;
  const chosen =
    embedder === 'store' ? new LangChainEmbedder(store.embeddings, { name, dimension }) : embedder;
  // The store's own embeddings never fixed its dimension, nor do LangChain embeddings whose dimension is not
  // known yet: core learns it from the first vectors.
  const lazy =
    embedder === 'store' || (chosen instanceof LangChainEmbedder && chosen.dimensionIfKnown === undefined);
  const zerdaEmbedder =
    chosen === 'none' || !lazy
      ? (chosen as Embedder | 'none')
      : {
          dimension: dimension as number,
          embed: chosen.embed.bind(chosen),
          embedQuery: chosen.embedQuery?.bind(chosen),
        };
  return createVectorStore(driver, {
    embedder: zerdaEmbedder === 'none' ? undefined : zerdaEmbedder,
    dimension,
    strictFilters: settings.strictFilters,
  }) as LangChainStore<Store['FilterType']>;
}
