import { InMemoryVectorStore } from '@zerda/core';
import { testVectorDatabase } from './index.js';

// The reference store passes the suite it defines, for each of its metrics and quantisations.
testVectorDatabase({
  name: 'memory',
  create: ({ dimension, metric, embedder }) => new InMemoryVectorStore({ dimension, metric, embedder }),
  capabilities: { metrics: ['cosine', 'dot', 'l2'], deletion: true, arrayMetadata: true },
});

testVectorDatabase({
  name: 'memory (int8)',
  create: ({ dimension, metric, embedder }) =>
    new InMemoryVectorStore({ dimension, metric, embedder, quantization: 'int8' }),
  capabilities: { metrics: ['cosine', 'l2'], deletion: true, arrayMetadata: true },
  propertyRuns: 10,
});
