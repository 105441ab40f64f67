import type { ScoredChunk, Warning } from '../model/index.js';

/**
 * The one thing the reranker needs from a language model: text in, text out. Adapters (for
 * example for a LangChain chat model) produce this shape.
 */
export interface LanguageModel {
  generate(prompt: string, options?: { maxTokens?: number; signal?: AbortSignal }): Promise<string>;
}

/** How candidates are re-scored. */
export type RerankMode = 'heuristic' | 'llm' | 'hybrid';

/** Weights of the heuristic score: `original x score + length x bonus + diversity x (0.5 diversity + 0.5 overlap)`. */
export interface HeuristicWeights {
  original: number;
  length: number;
  diversity: number;
}

/** Weights of the hybrid score: the heuristic terms plus the LLM's normalised relevance. */
export interface HybridWeights extends HeuristicWeights {
  llm: number;
}

/** How LLM relevance calls are made. */
export interface LlmScoringOptions {
  /** Words of a chunk shown to the model; longer chunks are cut (default 150). */
  maxChunkWords?: number;
  /** Calls in flight at once (default 6). */
  concurrency?: number;
  /** Scores remembered per reranker instance, least recently used evicted (default 1000; 0 disables). */
  cacheSize?: number;
  /** Passed to `generate` (default 16: the reply is one short line). */
  maxTokens?: number;
  /** A call that has not answered by then scores neutral with a warning (default: no limit). */
  timeoutMs?: number;
  /** Prompt language: by the query's script ('auto', default), or always 'en' or 'ar'. */
  language?: 'auto' | 'en' | 'ar';
  /**
   * Accept only replies that carry the per-call answer tag (`score-<nonce>: N`), default true.
   * Text inside a chunk cannot know the nonce, so a reply that merely repeats a number from the
   * chunk is rejected. Set false for models that cannot repeat the tag; the first number of the
   * reply (after any echoed prompt) is then taken.
   */
  requireTag?: boolean;
}

/** Near-duplicate removal before scoring. */
export interface RerankDeduplicateOptions {
  /** Jaccard threshold on analysed word sets (default 0.85). */
  threshold?: number;
  /** Candidate count from which MinHash with LSH replaces the pairwise comparison (default 200). */
  minHashAbove?: number;
}

/** A removed near-duplicate. */
export interface RemovedDuplicate {
  id: string;
  duplicateOf: string;
  similarity: number;
}

/** What `Reranker.rerank` returns: the reranker hook's result plus how it was obtained. */
export interface RerankResult {
  /** Every candidate that survived near-duplicate removal, best first, ranks from 1. */
  hits: ScoredChunk[];
  warnings: Warning[];
  /** The mode asked for in the configuration. */
  requestedMode: RerankMode;
  /** The mode actually used ('heuristic' when an LLM mode has no LLM). */
  effectiveMode: RerankMode;
  removedDuplicates: RemovedDuplicate[];
  /** LLM calls made, answers served from the cache, failed and unparsable calls. */
  llm: { calls: number; cacheHits: number; failed: number; unparsable: number };
  latencyMs: number;
}
