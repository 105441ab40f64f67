import { InvalidArgumentError, throwIfAborted } from '../errors/index.js';
import type { FilterInput } from '../filter/index.js';
import type { Chunk, ContextResult, ScoredChunk, SearchResult, Warning } from '../model/index.js';
import { DEFAULT_DUPLICATE_THRESHOLD, removeNearDuplicates } from '../rerank/index.js';
import { compareHits, type RerankHook } from '../retriever/index.js';
import { type Analyzer, defaultAnalyzer } from '../text/index.js';
import { assembleContext, countCharacters, estimateTokens, type TextCounter } from './assembly.js';
import { ConversationMemory, type ConversationMemoryOptions } from './conversation-memory.js';
import {
  type ComplexityBudgets,
  DEFAULT_CHARACTER_BUDGETS,
  DEFAULT_TOKEN_BUDGETS,
  QueryAnalyzer,
  resolveBudgets,
} from './query-analysis.js';
import {
  DEFAULT_DATE_FIELDS,
  DEFAULT_QUALITY_FIELDS,
  qualityScore,
  readDate,
  readSourceQuality,
  recencyScore,
} from './ranking.js';

/** What the engine needs of a retriever: `retrieve`, as every Zerda retriever has it. */
export interface ContextRetriever {
  retrieve(
    query: string,
    options: { k?: number; filter?: FilterInput; signal?: AbortSignal },
  ): Promise<SearchResult>;
}

/** Weights of the composite ranking (each part lies in [0, 1]). */
export interface ContextRankingWeights {
  relevance: number;
  quality: number;
  recency: number;
}

export interface ContextEngineOptions {
  /** Usually a HybridRetriever; any Zerda retriever works. */
  retriever: ContextRetriever;
  /** Re-scores the retrieved candidates before filtering (for example a `Reranker`). */
  reranker?: RerankHook;
  /** Shared by query analysis, near-duplicate detection and the conversation memory (default `defaultAnalyzer`). */
  analyzer?: Analyzer;
  /** An existing memory, or options for a new one. */
  memory?: ConversationMemory | ConversationMemoryOptions;
  /** Candidates retrieved per question (default 20). */
  k?: number;
  /** Candidates scoring below this are dropped (default 0). */
  minScore?: number;
  /** Candidates scoring below this share of the best score are dropped (default 0.1). */
  minRelativeScore?: number;
  /**
   * The relative cutoff: a candidate is left out when its score is far below the best one's,
   * rather than used to fill the budget. Kept: `(score - floor) / (best - floor) >= relativeCutoff`,
   * where `floor` is the lowest score retrieved when the retriever returned all `k` candidates
   * asked for (the level of "barely retrieved"), and 0 otherwise. Measured against the
   * candidates' own spread, it means the same for every fusion method and with a reranker
   * (whose scores are compressed), unlike a share of the best score. Default 0.25; 0 or false
   * turns it off.
   */
  relativeCutoff?: number | false;
  /** Near-duplicate removal: Jaccard threshold on analysed word sets (default 0.85); false turns it off. */
  deduplicate?: false | { threshold?: number };
  /** Default relevance 0.7, quality 0.15, recency 0.15. */
  rankingWeights?: Partial<ContextRankingWeights>;
  /** Metadata fields holding the source quality (default `sourceQuality`, `quality`). */
  qualityFields?: readonly string[];
  /** Metadata fields holding a date (default `date`, `publishedAt`, `updatedAt`, `createdAt`, `timestamp`, `year`, ...). */
  dateFields?: readonly string[];
  /** A chunk this many days old gets half the recency of a new one (default 180). */
  halfLifeDays?: number;
  /** Quality score of a chunk without one (default 0.5, neutral). */
  unknownQuality?: number;
  /** Recency score of a chunk without a date (default 0.5, neutral). */
  unknownRecency?: number;
  /** The budget's unit (default 'characters'; 'tokens' uses `counter` or an estimate of four characters per token). */
  budgetUnit?: 'characters' | 'tokens';
  /** Measures text in the budget's unit (for tokens, plug in the model's tokenizer). */
  counter?: TextCounter;
  /** Budget per complexity, in the unit (defaults: 2,000 / 4,000 / 8,000 characters or 500 / 1,000 / 2,000 tokens). */
  budgets?: Partial<ComplexityBudgets>;
  /** Fill the rest of the budget with the start of the next chunk, cut after a word and marked (default true). */
  allowPartial?: boolean;
  /** A partial chunk keeps at least this many words (default 20). */
  minPartialWords?: number;
  /** The guard flags a context whose best chunk's relevance is below this (default 0.2). */
  minTopScore?: number;
  /** The name in a chunk's source marker (default: docId, else metadata `source`, else the chunk id). */
  sourceLabel?: (chunk: Chunk) => string;
  /** Clock for recency, in ms since the epoch (default `Date.now`). */
  now?: () => number;
}

export interface BuildContextOptions {
  filter?: FilterInput;
  signal?: AbortSignal;
  /** Candidates to retrieve for this question (default: the engine's `k`). */
  k?: number;
  /** Overrides the budget chosen by complexity. */
  budget?: number;
  /** Record the question as a turn of the conversation (default true). */
  remember?: boolean;
}

/** `ContextResult` plus how the engine got there. */
export interface ContextEngineResult extends ContextResult {
  question: string;
  /**
   * What the guard notes without failing: `few-relevant` when fewer chunks than the budget has
   * room for were relevant (the relative cutoff left the rest out).
   */
  guardNotes: string[];
  /** The text that was searched: the question, enriched when it is a follow-up. */
  retrievalQuery: string;
  followUp: boolean;
  /** Words added from the conversation. */
  enrichment: string[];
  budget: number;
  budgetUnit: 'characters' | 'tokens';
  /** The context's size in the budget's unit. */
  size: number;
  /** The id of the chunk that was cut to fill the budget, if any. */
  partialChunkId?: string;
  /** Milliseconds per stage. */
  timings: { analysis: number; retrieval: number; rerank: number; ranking: number; assembly: number };
}

export interface ContextEngineStats {
  queries: number;
  followUps: number;
  enrichedQueries: number;
  guardFailures: number;
  averageLatencyMs: number;
  averageChunksUsed: number;
  /** In the budget's unit. */
  averageContextSize: number;
  warnings: number;
  turns: number;
  answersRecorded: number;
}

/** The context engine's default relative cutoff (see `ContextEngineOptions.relativeCutoff`). */
export const DEFAULT_RELATIVE_CUTOFF = 0.25;

const DEFAULT_WEIGHTS: ContextRankingWeights = { relevance: 0.7, quality: 0.15, recency: 0.15 };

/**
 * Turns a question into a context for a language model: analyse the question, enrich it from
 * the conversation when it is a follow-up, retrieve (and rerank), drop weak candidates and
 * near-duplicates, rank by relevance, source quality and recency, assemble within the budget
 * with a source marker per chunk, and check the result. Record each answer with
 * `recordAnswer` so that the next follow-up question is searched with it.
 */
export class ContextEngine {
  readonly memory: ConversationMemory;
  readonly queryAnalyzer: QueryAnalyzer;
  readonly budgetUnit: 'characters' | 'tokens';
  readonly #retriever: ContextRetriever;
  readonly #reranker: RerankHook | undefined;
  readonly #analyzer: Analyzer;
  readonly #counter: TextCounter;
  readonly #settings: Readonly<{
    k: number;
    minScore: number;
    minRelativeScore: number;
    relativeCutoff: number;
    deduplicate: number | false;
    weights: ContextRankingWeights;
    qualityFields: readonly string[];
    dateFields: readonly string[];
    halfLifeDays: number;
    unknownQuality: number;
    unknownRecency: number;
    allowPartial: boolean;
    minPartialWords: number;
    minTopScore: number;
  }>;
  readonly #sourceLabel: (chunk: Chunk) => string;
  readonly #now: () => number;
  readonly #stats = {
    queries: 0,
    followUps: 0,
    enrichedQueries: 0,
    guardFailures: 0,
    latencyMs: 0,
    chunksUsed: 0,
    contextSize: 0,
    warnings: 0,
    answersRecorded: 0,
  };

  constructor(options: ContextEngineOptions) {
    if (typeof options?.retriever?.retrieve !== 'function') {
      throw new InvalidArgumentError({
        argument: 'retriever',
        message: 'the context engine needs a retriever',
      });
    }
    this.#retriever = options.retriever;
    this.#reranker = options.reranker;
    this.#analyzer = options.analyzer ?? defaultAnalyzer;
    this.budgetUnit = options.budgetUnit ?? 'characters';
    if (this.budgetUnit !== 'characters' && this.budgetUnit !== 'tokens') {
      throw new InvalidArgumentError({
        argument: 'budgetUnit',
        value: this.budgetUnit,
        message: "expected 'characters' or 'tokens'",
      });
    }
    this.#counter = options.counter ?? (this.budgetUnit === 'tokens' ? estimateTokens : countCharacters);
    const budgets = resolveBudgets(
      options.budgets,
      this.budgetUnit === 'tokens' ? DEFAULT_TOKEN_BUDGETS : DEFAULT_CHARACTER_BUDGETS,
    );
    this.queryAnalyzer = new QueryAnalyzer({ analyzer: this.#analyzer, budgets });
    this.memory =
      options.memory instanceof ConversationMemory
        ? options.memory
        : new ConversationMemory({ analyzer: this.#analyzer, ...options.memory });
    const weights = { ...DEFAULT_WEIGHTS };
    for (const key of ['relevance', 'quality', 'recency'] as const) {
      const value = options.rankingWeights?.[key];
      if (value === undefined) continue;
      weights[key] = nonNegative(value, `rankingWeights.${key}`);
    }
    let deduplicate: number | false = false;
    if (options.deduplicate !== false) {
      deduplicate = options.deduplicate?.threshold ?? DEFAULT_DUPLICATE_THRESHOLD;
      if (!(deduplicate > 0 && deduplicate <= 1)) {
        throw new InvalidArgumentError({
          argument: 'deduplicate.threshold',
          value: deduplicate,
          message: 'must be a number in (0, 1]',
        });
      }
    }
    const k = options.k ?? 20;
    if (!Number.isInteger(k) || k < 1)
      throw new InvalidArgumentError({ argument: 'k', value: k, message: 'must be a positive integer' });
    const halfLifeDays = options.halfLifeDays ?? 180;
    if (!(halfLifeDays > 0)) {
      throw new InvalidArgumentError({
        argument: 'halfLifeDays',
        value: halfLifeDays,
        message: 'must be positive',
      });
    }
    this.#settings = Object.freeze({
      k,
      minScore: finite(options.minScore ?? 0, 'minScore'),
      minRelativeScore: unit(options.minRelativeScore ?? 0.1, 'minRelativeScore'),
      relativeCutoff:
        options.relativeCutoff === false
          ? 0
          : unit(options.relativeCutoff ?? DEFAULT_RELATIVE_CUTOFF, 'relativeCutoff'),
      deduplicate,
      weights: Object.freeze(weights),
      qualityFields: Object.freeze([...(options.qualityFields ?? DEFAULT_QUALITY_FIELDS)]),
      dateFields: Object.freeze([...(options.dateFields ?? DEFAULT_DATE_FIELDS)]),
      halfLifeDays,
      unknownQuality: unit(options.unknownQuality ?? 0.5, 'unknownQuality'),
      unknownRecency: unit(options.unknownRecency ?? 0.5, 'unknownRecency'),
      allowPartial: options.allowPartial ?? true,
      minPartialWords: Math.max(1, Math.floor(options.minPartialWords ?? 20)),
      minTopScore: finite(options.minTopScore ?? 0.2, 'minTopScore'),
    });
    this.#sourceLabel = options.sourceLabel ?? defaultSourceLabel;
    this.#now = options.now ?? Date.now;
  }

  /** Records the answer given to the latest question (or to one `turnsAgo` turns back). */
  recordAnswer(answer: string, turnsAgo = 0): void {
    this.memory.recordAnswer(answer, turnsAgo);
    this.#stats.answersRecorded++;
  }

  async buildContext(question: string, options: BuildContextOptions = {}): Promise<ContextEngineResult> {
    const started = performance.now();
    const { signal, filter } = options;
    throwIfAborted(signal);
    const settings = this.#settings;
    const warnings: Warning[] = [];
    let mark = performance.now();
    const lap = () => {
      const now = performance.now();
      const elapsed = now - mark;
      mark = now;
      return elapsed;
    };

    // 1. Analysis and follow-up enrichment.
    const analysis = this.queryAnalyzer.analyze(question);
    if (options.budget !== undefined) {
      if (!(options.budget >= 0)) {
        throw new InvalidArgumentError({
          argument: 'budget',
          value: options.budget,
          message: 'must be a number >= 0',
        });
      }
      analysis.budget = options.budget;
    }
    const enrichment = this.memory.enrich(question);
    const retrievalQuery = enrichment.query;
    const analysisMs = lap();

    // 2. Retrieval, then the reranker.
    const k = options.k ?? settings.k;
    const searched = await this.#retriever.retrieve(retrievalQuery, { k, filter, signal });
    warnings.push(...searched.warnings);
    let hits = [...searched.hits];
    const counts: Record<string, number> = { retrieved: hits.length };
    const retrievalMs = lap();
    if (this.#reranker && hits.length > 0) {
      const reranked = await this.#reranker.rerank(retrievalQuery, hits, { k, signal });
      hits = [...reranked.hits];
      warnings.push(...(reranked.warnings ?? []));
      counts.reranked = hits.length;
    }
    const rerankMs = lap();
    throwIfAborted(signal);

    // 3. Filtering: minimum scores, then near-duplicates (the better-scored copy stays).
    hits.sort(compareHits);
    const top = hits[0]?.score ?? 0;
    hits = hits.filter(
      (hit) =>
        Number.isFinite(hit.score) &&
        hit.score >= settings.minScore &&
        hit.score >= settings.minRelativeScore * top,
    );
    counts.filtered = hits.length;
    // The relative cutoff: chunks far below the best, relative to the candidates' spread, stay out.
    if (settings.relativeCutoff > 0 && hits.length > 1) {
      const best = hits[0]?.score ?? 0;
      const lowest = Math.min(...hits.map((hit) => hit.score));
      const floor = searched.hits.length >= k ? lowest : Math.min(0, lowest);
      const range = best - floor;
      if (range > 0) {
        hits = hits.filter((hit) => (hit.score - floor) / range >= settings.relativeCutoff);
      }
    }
    counts.relevant = hits.length;
    if (settings.deduplicate !== false && hits.length > 1) {
      hits = removeNearDuplicates(hits, (hit) => hit.chunk.text, {
        threshold: settings.deduplicate,
        analyzer: this.#analyzer,
      }).kept;
    }
    counts.deduplicated = hits.length;

    // 4. Composite ranking: relevance (relative to the best), source quality, recency.
    const ranked = this.rank(hits);
    counts.ranked = ranked.length;
    const rankingMs = lap();

    // 5. Assembly within the budget.
    const assembled = assembleContext(
      ranked.map((hit) => ({ text: hit.chunk.text, source: this.#sourceLabel(hit.chunk) })),
      {
        budget: analysis.budget,
        counter: this.#counter,
        allowPartial: settings.allowPartial,
        minPartialWords: settings.minPartialWords,
      },
    );
    const chunks = assembled.used.map((index, position) => ({
      ...(ranked[index] as ScoredChunk),
      rank: position + 1,
    }));
    counts.used = chunks.length;
    counts.partial = assembled.partial === undefined ? 0 : 1;
    const assemblyMs = lap();

    // 6. Guard checks.
    const guardWarnings: string[] = [];
    if (chunks.length === 0) {
      guardWarnings.push(
        counts.retrieved === 0
          ? 'no-chunks: retrieval found nothing for the question'
          : ranked.length === 0
            ? `no-chunks: ${counts.retrieved} chunk(s) were retrieved but none passed the filters`
            : `no-chunks: ${ranked.length} chunk(s) qualified but none fits the budget of ${analysis.budget} ${this.budgetUnit}`,
      );
    } else {
      const best = Math.max(...chunks.map((hit) => hit.scores.relevance ?? hit.score));
      if (best < settings.minTopScore) {
        guardWarnings.push(
          `weak-top-score: the best chunk's relevance is ${best.toFixed(3)}, below ${settings.minTopScore}`,
        );
      }
    }
    // Fewer relevant chunks than the budget has room for: said, not filled with filler.
    const guardNotes: string[] = [];
    const relevant = counts.relevant ?? 0;
    const cut = (counts.filtered ?? 0) - relevant;
    if (chunks.length > 0 && cut > 0 && assembled.partial === undefined && assembled.size < analysis.budget) {
      guardNotes.push(
        `few-relevant: ${relevant} of ${searched.hits.length} retrieved chunk(s) are within the relative cutoff ` +
          `(${settings.relativeCutoff}) of the best; the context uses ${assembled.size} of ${analysis.budget} ${this.budgetUnit} ` +
          `rather than filling the budget with ${cut} weaker one(s)`,
      );
    }
    if (assembled.size > analysis.budget) {
      guardWarnings.push(
        `budget-overflow: the context measures ${assembled.size} ${this.budgetUnit}, over the budget of ${analysis.budget}`,
      );
    }

    if (options.remember ?? true) this.memory.addTurn(question);
    const latencyMs = performance.now() - started;
    const stats = this.#stats;
    stats.queries++;
    if (enrichment.followUp) stats.followUps++;
    if (enrichment.addedTerms.length > 0) stats.enrichedQueries++;
    if (guardWarnings.length > 0) stats.guardFailures++;
    stats.latencyMs += latencyMs;
    stats.chunksUsed += chunks.length;
    stats.contextSize += assembled.size;
    stats.warnings += warnings.length;

    const result: ContextEngineResult = {
      context: assembled.context,
      analysis,
      chunks,
      counts,
      guardPassed: guardWarnings.length === 0,
      guardWarnings,
      guardNotes,
      warnings,
      latencyMs,
      question,
      retrievalQuery,
      followUp: enrichment.followUp,
      enrichment: enrichment.addedTerms,
      budget: analysis.budget,
      budgetUnit: this.budgetUnit,
      size: assembled.size,
      timings: {
        analysis: analysisMs,
        retrieval: retrievalMs,
        rerank: rerankMs,
        ranking: rankingMs,
        assembly: assemblyMs,
      },
    };
    if (assembled.partial !== undefined)
      result.partialChunkId = (ranked[assembled.partial] as ScoredChunk).chunk.id;
    return result;
  }

  /** Totals and averages over every `buildContext` call of this engine. */
  getStats(): ContextEngineStats {
    const s = this.#stats;
    const per = (total: number) => (s.queries === 0 ? 0 : total / s.queries);
    return {
      queries: s.queries,
      followUps: s.followUps,
      enrichedQueries: s.enrichedQueries,
      guardFailures: s.guardFailures,
      averageLatencyMs: per(s.latencyMs),
      averageChunksUsed: per(s.chunksUsed),
      averageContextSize: per(s.contextSize),
      warnings: s.warnings,
      turns: this.memory.size,
      answersRecorded: s.answersRecorded,
    };
  }

  /** Candidates in composite order, each scored and explained. */
  private rank(hits: readonly ScoredChunk[]): ScoredChunk[] {
    const settings = this.#settings;
    const { weights } = settings;
    const best = Math.max(0, ...hits.map((hit) => hit.score));
    const now = this.#now();
    return hits
      .map((hit): ScoredChunk => {
        const relevance = best > 0 ? Math.max(0, hit.score) / best : 0;
        const quality = readSourceQuality(hit.chunk.metadata, settings.qualityFields);
        const qualityPart = qualityScore(quality, settings.unknownQuality);
        const date = readDate(hit.chunk.metadata, settings.dateFields);
        const recency =
          date === undefined ? settings.unknownRecency : recencyScore(date, now, settings.halfLifeDays);
        const components = {
          relevance: weights.relevance * relevance,
          quality: weights.quality * qualityPart,
          recency: weights.recency * recency,
        };
        return {
          ...hit,
          score: components.relevance + components.quality + components.recency,
          scores: { ...hit.scores, relevance: hit.score },
          explanation: {
            method: 'context-ranking',
            description:
              `${weights.relevance} x relevance ${relevance.toFixed(4)} (score ${hit.score.toFixed(4)} / best ${best.toFixed(4)}) + ` +
              `${weights.quality} x quality ${qualityPart.toFixed(4)} + ${weights.recency} x recency ${recency.toFixed(4)}` +
              `${date === undefined ? ' (no date)' : ''}${hit.explanation ? `; before: ${hit.explanation.method}` : ''}`,
            components,
          },
        };
      })
      .sort(compareHits);
  }
}

function defaultSourceLabel(chunk: Chunk): string {
  const source = chunk.metadata?.source;
  return chunk.docId ?? (typeof source === 'string' && source !== '' ? source : chunk.id);
}

function finite(value: number, argument: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError({ argument, value, message: 'must be a finite number' });
  }
  return value;
}

function nonNegative(value: number, argument: string): number {
  if (finite(value, argument) < 0)
    throw new InvalidArgumentError({ argument, value, message: 'must be >= 0' });
  return value;
}

function unit(value: number, argument: string): number {
  if (!(typeof value === 'number' && value >= 0 && value <= 1)) {
    throw new InvalidArgumentError({ argument, value, message: 'must be in [0, 1]' });
  }
  return value;
}
