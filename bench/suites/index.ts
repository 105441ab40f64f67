import type { BenchSuite } from '../report.js';
import { annSuite } from './ann.js';
import { bundleSuite } from './bundle.js';
import { collectionSuite } from './collection.js';
import { faissSuite } from './faiss.js';
import { faissSweepSuite } from './faiss-sweep.js';
import { hybridSuite } from './hybrid.js';
import { keywordSuite } from './keyword.js';
import { rerankSuite } from './rerank.js';
import { sparseSuite } from './sparse.js';
import { sparseDriftSuite } from './sparse-drift.js';
import { vectorSuite } from './vector.js';

/** Every suite `pnpm bench` runs, in order. */
export const suites: BenchSuite[] = [
  keywordSuite,
  vectorSuite,
  hybridSuite,
  faissSuite,
  faissSweepSuite,
  annSuite,
  rerankSuite,
  collectionSuite,
  bundleSuite,
  sparseSuite,
  sparseDriftSuite,
];
