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
