import type { Chunk } from './chunk.js';
import type { RetrievalMethod } from './enums.js';

/** Per-signal numbers (a score or a rank), keyed by the signal that produced them. */
export type SignalValues = Partial<Record<RetrievalMethod | (string & {}), number>>;

/** How a fused score was built, so a hit can explain itself. */
export interface ScoreExplanation {
  /** For example 'bm25', 'cosine', 'rrf', 'weighted', 'weighted+rrf'. */
  method: string;
  /** A human-readable account of the computation. */
  description: string;
  /** The parts that were added up, by name (for example `keyword: 0.42`). */
  components?: Record<string, number>;
}

/** A chunk found by a retriever, with its score and where it came from. */
export interface ScoredChunk {
  chunk: Chunk;
  /** Final score: a similarity, higher is better, in [0, 1] where the method allows it. */
  score: number;
  /** 1-based position in the result, set by `retrieve`. */
  rank: number;
  /** The name of the retriever that returned this hit. */
  retriever: string;
  /** The score each signal gave (for example `{ keyword: 0.8, vector: 0.61 }`). */
  scores: SignalValues;
  /** The 1-based rank in each signal's own list. */
  ranks: SignalValues;
  explanation?: ScoreExplanation;
}

/** A note that the result is not all that was asked for, or how it was obtained. */
export interface Warning {
  type: 'unsupported' | 'compatibility' | 'partial-failure' | 'other';
  message: string;
  /** The component that raised it (a retriever, a backend, a branch). */
  source?: string;
}

/** What `retrieve` returns. */
export interface SearchResult {
  query: string;
  hits: ScoredChunk[];
  /** How many candidates matched before truncation to k (a lower bound where a backend cannot tell). */
  total: number;
  latencyMs: number;
  warnings: Warning[];
}
