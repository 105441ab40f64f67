export { lengthBonus, termOverlap } from './heuristic.js';
export { buildRelevancePrompt, parseRelevanceReply, type RelevancePrompt } from './llm-scorer.js';
export { maximalMarginalRelevance } from './mmr.js';
export {
  buildTermSets,
  DEFAULT_DUPLICATE_THRESHOLD,
  DEFAULT_MINHASH_ABOVE,
  type DuplicatePair,
  findDuplicatePairsExact,
  findDuplicatePairsMinHash,
  findNearDuplicates,
  jaccard,
  type MinHashOptions,
  type MinHashScheme,
  minHashSignatures,
  type NearDuplicateMethod,
  type NearDuplicateOptions,
  type NearDuplicateResult,
  onePermutationSignatures,
  removeNearDuplicates,
  type TermSet,
} from './near-duplicates.js';
export {
  DEFAULT_HEURISTIC_WEIGHTS,
  DEFAULT_HYBRID_WEIGHTS,
  Reranker,
  type RerankerConfig,
  type RerankerOptions,
  type RerankerStats,
} from './reranker.js';
export type {
  HeuristicWeights,
  HybridWeights,
  LanguageModel,
  LlmScoringOptions,
  RemovedDuplicate,
  RerankDeduplicateOptions,
  RerankMode,
  RerankResult,
} from './types.js';
