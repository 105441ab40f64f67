export {
  type AssembledContext,
  type AssemblyItem,
  type AssemblyOptions,
  assembleContext,
  countCharacters,
  estimateTokens,
  type TextCounter,
} from './assembly.js';
export {
  type BuildContextOptions,
  ContextEngine,
  type ContextEngineOptions,
  type ContextEngineResult,
  type ContextEngineStats,
  type ContextRankingWeights,
  type ContextRetriever,
  DEFAULT_RELATIVE_CUTOFF,
} from './context-engine.js';
export {
  ConversationMemory,
  type ConversationMemoryOptions,
  type Enrichment,
} from './conversation-memory.js';
export { detectLanguage } from './language.js';
export {
  analyzeQuery,
  type ComplexityBudgets,
  DEFAULT_CHARACTER_BUDGETS,
  DEFAULT_TOKEN_BUDGETS,
  detectIntent,
  estimateComplexity,
  extractEntities,
  QueryAnalyzer,
  type QueryAnalyzerOptions,
} from './query-analysis.js';
export {
  DEFAULT_DATE_FIELDS,
  DEFAULT_QUALITY_FIELDS,
  qualityScore,
  readDate,
  readSourceQuality,
  recencyScore,
} from './ranking.js';
