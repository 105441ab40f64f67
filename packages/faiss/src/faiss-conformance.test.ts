import { testVectorDatabase } from '@zerda/testing';
import { describe } from 'vitest';
import { createFaissStore, type FaissIndexType } from './faiss-store.js';
import { faissSkipped } from './test-utils/faiss-available.js';

// The published conformance suite, against the real faiss-node build, once per index type.
const indexTypes: FaissIndexType[] = ['flat', 'hnsw'];

// Skipped only where the FAISS build was explicitly disabled (ZERDA_SKIP_FAISS=1); CI never sets it.
describe.skipIf(faissSkipped)('faiss-node build', () => {
  for (const indexType of indexTypes) {
    testVectorDatabase({
      name: `faiss (${indexType})`,
      create: ({ dimension, metric, embedder }) =>
        createFaissStore({ indexType, dimension, metric, embedder }),
      capabilities: { metrics: ['cosine', 'dot', 'l2'], deletion: true, arrayMetadata: true },
    });
  }
});
