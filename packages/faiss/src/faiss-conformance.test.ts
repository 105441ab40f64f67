import { testVectorDatabase } from '@zerda/testing';
import { describe, it } from 'vitest';
import { createFaissStore, type FaissIndexType } from './faiss-store.js';
import { faissSkipped } from './test-utils/faiss-available.js';

// The published conformance suite, against the real faiss-node build, once per index type.
const indexTypes: FaissIndexType[] = ['flat', 'hnsw'];

if (faissSkipped) {
  describe.skip('VectorDatabase conformance: faiss (skipped: ZERDA_SKIP_FAISS=1)', () => {
    it('runs against the real faiss-node build', () => {});
  });
} else {
  for (const indexType of indexTypes) {
    testVectorDatabase({
      name: `faiss (${indexType})`,
      create: ({ dimension, metric, embedder }) =>
        createFaissStore({ indexType, dimension, metric, embedder }),
      capabilities: { metrics: ['cosine', 'dot', 'l2'], deletion: true, arrayMetadata: true },
    });
  }
}
