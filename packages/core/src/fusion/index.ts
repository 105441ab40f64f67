export {
  type CandidateListInput,
  CandidatePool,
  DEFAULT_WEAK_BRANCH_GUARD,
  evidenceSpread,
  type FusionSettings,
  fusePool,
  guardFactor,
  type PoolFusion,
  type PoolList,
  topCandidates,
  type WeakBranchGuard,
} from './candidate-pool.js';
export {
  DEFAULT_FUSION_CONFIG,
  FUSION_COMBINATIONS,
  FUSION_CONFIG_VERSION,
  FUSION_METHODS,
  FUSION_NORMALIZATIONS,
  type FusionConfig,
  type FusionMethod,
  parseFusionConfig,
  type ResolvedFusionConfig,
  resolveFusionConfig,
} from './config.js';
export { normalizeScores } from './normalize.js';
export { reciprocalRankFusion } from './rrf.js';
export { scoreFusion } from './score-fusion.js';
export type {
  Contribution,
  FusedItem,
  MissingPolicy,
  RankedItem,
  RankedList,
  RrfOptions,
  ScoreCombination,
  ScoreFusionOptions,
  ScoreNormalization,
} from './types.js';
