import { type Analyzer, HashEmbedder, InMemoryVectorStore, openCollection } from '@zerda/core';
import { createFileStorage } from '@zerda/core/node';

/* The collection bench's settings, shared with the script that opens a saved collection in a new process. */

export const DIMENSION = 384;
export const whitespaceAnalyzer: Analyzer = { name: 'whitespace', analyze: (text) => text.split(' ') };

export function benchEmbedder(): HashEmbedder {
  return new HashEmbedder({ dimension: DIMENSION, analyzer: whitespaceAnalyzer, charNGrams: false });
}

/** The saved collection in `directory`, over a new in-memory store (the bench's settings). */
export function openSaved(directory: string, embedder: HashEmbedder) {
  return openCollection({
    store: new InMemoryVectorStore({ dimension: DIMENSION, embedder }),
    analyzer: whitespaceAnalyzer,
    storage: createFileStorage(directory),
  });
}
