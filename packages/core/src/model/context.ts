import type { QueryComplexity, QueryIntent } from './enums.js';
import type { ScoredChunk, Warning } from './scored-chunk.js';

/** What rule-based query analysis found in a question. */
export interface QueryAnalysis {
  query: string;
  /** ISO 639-1 code ('en', 'ar', 'es', ...) or 'unknown'. */
  language: string;
  intent: QueryIntent;
  complexity: QueryComplexity;
  keywords: string[];
  entities: string[];
  /** Context budget chosen for this query (characters or tokens, per the engine's counter). */
  budget: number;
}

/** One exchange of a conversation. */
export interface ConversationTurn {
  query: string;
  /** The answer given, recorded explicitly so that follow-up questions can be enriched. */
  answer?: string;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/** A bounded record of recent turns. */
export interface ConversationHistory {
  turns: ConversationTurn[];
  maxTurns: number;
}

/** The context assembled for a language model, with what it took to build it. */
export interface ContextResult {
  context: string;
  analysis: QueryAnalysis;
  chunks: ScoredChunk[];
  /** Counts at each stage: retrieved, after filtering, after deduplication, used. */
  counts: Record<string, number>;
  guardPassed: boolean;
  guardWarnings: string[];
  warnings: Warning[];
  latencyMs: number;
}
