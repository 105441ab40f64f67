// `@zerda/testing`: the published backend conformance suite. Any VectorDatabase (ours or a
// contributor's) runs `testVectorDatabase` against its real database.

export {
  type FilterConventionTestOptions,
  type FilterKind,
  randomFilterKinds,
  testFilterConvention,
} from './filter-convention-tests.js';
export {
  comparableChunk,
  conformanceEmbedder,
  expectedSimilarity,
  recordingEmbedder,
  seededRandom,
  seededUnitVectors,
  seededVectors,
} from './fixtures.js';
export { testVectorDatabase } from './test-vector-database.js';
export type {
  ConformanceCapabilities,
  ConformanceCreateOptions,
  TestVectorDatabaseOptions,
} from './types.js';
