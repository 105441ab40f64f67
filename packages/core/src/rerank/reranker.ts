import { InvalidArgumentError, throwIfAborted } from '../errors/index.js';
import type { ScoredChunk, Warning } from '../model/index.js';
import { compareHits, type RerankHook } from '../retriever/index.js';
import { type Analyzer, defaultAnalyzer } from '../text/index.js';
import type { Embedder } from '../vector/index.js';
import { countWords, lengthBonus, termOverlap } from './heuristic.js';
import { type LlmScore, LlmScorer, type LlmScorerSettings } from './llm-scorer.js';
import { maximalMarginalRelevance } from './mmr.js';
import {
  checkThreshold,
  DEFAULT_DUPLICATE_THRESHOLD,
  DEFAULT_MINHASH_ABOVE,
  removeNearDuplicates,
} from './near-duplicates.js';
import type {
  HeuristicWeights,
  HybridWeights,
  LanguageModel,
  LlmScoringOptions,
  RemovedDuplicate,
  RerankDeduplicateOptions,
  RerankMode,
  RerankResult,
} from './types.js';

export interface RerankerOptions {
  /** Default 'heuristic'. 'llm' and 'hybrid' need `llm`; without one the heuristic is used and the result says so. */
  mode?: RerankMode;
  llm?: LanguageModel;
  /** Analyses query and chunks for term overlap and near-duplicates (default: the shared `defaultAnalyzer`). */
  analyzer?: Analyzer;
  /** Heuristic weights (default original 0.5, length 0.2, diversity 0.3). */
  weights?: Partial<HeuristicWeights>;
  /** Hybrid weights (default original 0.2, llm 0.5, length 0.1, diversity 0.2). */
  hybridWeights?: Partial<HybridWeights>;
  /** Word counts that earn the full length bonus (default 30 to 300). */
  idealMinWords?: number;
  idealMaxWords?: number;
  llmOptions?: LlmScoringOptions;
  /** Near-duplicate removal before scoring (default on, threshold 0.85); false turns it off. */
  deduplicate?: boolean | RerankDeduplicateOptions;
  /**
   * Reorder the scored candidates by maximal marginal relevance, with embeddings from this
   * embedder (lambda: weight of relevance against novelty, default 0.7).
   */
  mmr?: { embedder: Embedder; lambda?: number };
}

/** The reranker's settings after defaults, as plain frozen data. */
export interface RerankerConfig {
  readonly mode: RerankMode;
  readonly effectiveMode: RerankMode;
  readonly weights: Readonly<HeuristicWeights>;
  readonly hybridWeights: Readonly<HybridWeights>;
  readonly idealMinWords: number;
  readonly idealMaxWords: number;
  readonly llm: Readonly<LlmScorerSettings>;
  readonly deduplicate: false | Readonly<{ threshold: number; minHashAbove: number }>;
  readonly mmr: false | Readonly<{ lambda: number }>;
}

export interface RerankerStats {
  reranks: number;
  candidates: number;
  duplicatesRemoved: number;
  llmCalls: number;
  cacheHits: number;
  llmFailures: number;
  /** Entries in this instance's LLM cache. */
  cacheSize: number;
}

export const DEFAULT_HEURISTIC_WEIGHTS: Readonly<HeuristicWeights> = Object.freeze({
  original: 0.5,
  length: 0.2,
  diversity: 0.3,
});

export const DEFAULT_HYBRID_WEIGHTS: Readonly<HybridWeights> = Object.freeze({
  original: 0.2,
  llm: 0.5,
  length: 0.1,
  diversity: 0.2,
});

const MODES: readonly RerankMode[] = ['heuristic', 'llm', 'hybrid'];

interface Candidate {
  hit: ScoredChunk;
  original: number;
  length: number;
  diversity: number;
  overlap: number;
  llm?: LlmScore;
}

/**
 * Re-scores retrieval candidates with a heuristic (original score, length bonus, per-document
 * diversity, query-term overlap), an LLM (pointwise 0-10 relevance), or both; optionally removes
 * near-duplicates first and reorders by MMR. Plugs into any retriever as its `reranker`.
 *
 * The options object is read once and never written: the settings live in a frozen copy
 * (`config`), and a missing LLM shows up as `effectiveMode` and a warning, not as a change to the
 * caller's object. The LLM cache belongs to the instance.
 */
export class Reranker implements RerankHook {
  readonly config: RerankerConfig;
  readonly #llm: LlmScorer | undefined;
  readonly #analyzer: Analyzer;
  readonly #embedder: Embedder | undefined;
  readonly #stats = {
    reranks: 0,
    candidates: 0,
    duplicatesRemoved: 0,
    llmCalls: 0,
    cacheHits: 0,
    llmFailures: 0,
  };

  constructor(options: RerankerOptions = {}) {
    const mode = options.mode ?? 'heuristic';
    if (!MODES.includes(mode)) {
      throw new InvalidArgumentError({
        argument: 'mode',
        value: mode,
        message: "expected 'heuristic', 'llm' or 'hybrid'",
      });
    }
    const llm = options.llm;
    if (llm !== undefined && (llm === null || typeof llm.generate !== 'function')) {
      throw new InvalidArgumentError({
        argument: 'llm',
        value: llm,
        message: 'must have a generate(prompt) method',
      });
    }
    const idealMinWords = options.idealMinWords ?? 30;
    const idealMaxWords = options.idealMaxWords ?? 300;
    if (
      !Number.isFinite(idealMinWords) ||
      idealMinWords < 0 ||
      !Number.isFinite(idealMaxWords) ||
      idealMaxWords < idealMinWords ||
      idealMaxWords <= 0
    ) {
      throw new InvalidArgumentError({
        argument: 'idealMinWords',
        value: [idealMinWords, idealMaxWords],
        message: 'need 0 <= idealMinWords <= idealMaxWords, idealMaxWords > 0',
      });
    }
    const llmOptions = options.llmOptions ?? {};
    const llmSettings: LlmScorerSettings = {
      maxChunkWords: positiveInteger(llmOptions.maxChunkWords ?? 150, 'llmOptions.maxChunkWords'),
      concurrency: positiveInteger(llmOptions.concurrency ?? 6, 'llmOptions.concurrency'),
      cacheSize: nonNegativeInteger(llmOptions.cacheSize ?? 1000, 'llmOptions.cacheSize'),
      maxTokens: positiveInteger(llmOptions.maxTokens ?? 16, 'llmOptions.maxTokens'),
      timeoutMs:
        llmOptions.timeoutMs === undefined
          ? undefined
          : positiveNumber(llmOptions.timeoutMs, 'llmOptions.timeoutMs'),
      language: llmOptions.language ?? 'auto',
      requireTag: llmOptions.requireTag ?? true,
    };
    if (!['auto', 'en', 'ar'].includes(llmSettings.language)) {
      throw new InvalidArgumentError({
        argument: 'llmOptions.language',
        value: llmSettings.language,
        message: "expected 'auto', 'en' or 'ar'",
      });
    }
    let deduplicate: RerankerConfig['deduplicate'] = false;
    if (options.deduplicate !== false) {
      const dedup =
        typeof options.deduplicate === 'object' && options.deduplicate !== null ? options.deduplicate : {};
      const threshold = dedup.threshold ?? DEFAULT_DUPLICATE_THRESHOLD;
      checkThreshold(threshold, 'deduplicate.threshold');
      deduplicate = {
        threshold,
        minHashAbove: positiveInteger(
          dedup.minHashAbove ?? DEFAULT_MINHASH_ABOVE,
          'deduplicate.minHashAbove',
        ),
      };
    }
    let mmr: RerankerConfig['mmr'] = false;
    if (options.mmr !== undefined) {
      const lambda = options.mmr.lambda ?? 0.7;
      if (!(lambda >= 0 && lambda <= 1)) {
        throw new InvalidArgumentError({
          argument: 'mmr.lambda',
          value: lambda,
          message: 'must be in [0, 1]',
        });
      }
      if (typeof options.mmr.embedder?.embed !== 'function') {
        throw new InvalidArgumentError({ argument: 'mmr.embedder', message: 'MMR needs an embedder' });
      }
      mmr = { lambda };
      this.#embedder = options.mmr.embedder;
    }
    this.config = deepFreeze({
      mode,
      effectiveMode: mode !== 'heuristic' && llm === undefined ? 'heuristic' : mode,
      weights: readWeights(options.weights, DEFAULT_HEURISTIC_WEIGHTS, 'weights'),
      hybridWeights: readWeights(options.hybridWeights, DEFAULT_HYBRID_WEIGHTS, 'hybridWeights'),
      idealMinWords,
      idealMaxWords,
      llm: llmSettings,
      deduplicate,
      mmr,
    });
    this.#analyzer = options.analyzer ?? defaultAnalyzer;
    this.#llm = llm === undefined ? undefined : new LlmScorer(llm, { ...llmSettings });
  }

  /** The mode asked for. */
  get mode(): RerankMode {
    return this.config.mode;
  }

  /** The mode used: 'heuristic' when an LLM mode was asked for without an LLM. */
  get effectiveMode(): RerankMode {
    return this.config.effectiveMode;
  }

  /** Forgets this instance's cached LLM scores (other instances keep theirs). */
  clearCache(): void {
    this.#llm?.clearCache();
  }

  getStats(): RerankerStats {
    return { ...this.#stats, cacheSize: this.#llm?.cacheSize ?? 0 };
  }

  /**
   * Re-scores candidates (all of them, best first; truncation to `k` is the caller's, as in
   * `BaseRetriever.retrieve`). Failed LLM calls score neutral and warn; only cancellation throws.
   */
  async rerank(
    query: string,
    candidates: readonly ScoredChunk[],
    options: { k?: number; signal?: AbortSignal } = {},
  ): Promise<RerankResult> {
    const started = performance.now();
    checkRerankInput(query, candidates, options);
    const { signal } = options;
    throwIfAborted(signal);
    const { config } = this;
    const mode = config.effectiveMode;
    const warnings: Warning[] = [];
    if (mode !== config.mode) {
      warnings.push({
        type: 'compatibility',
        source: 'reranker',
        message: `Rerank mode '${config.mode}' needs an LLM and none was given; the heuristic mode was used instead`,
      });
    }

    const ordered = [...candidates].sort(compareHits);
    let kept = ordered;
    const removedDuplicates: RemovedDuplicate[] = [];
    if (config.deduplicate) {
      const result = removeNearDuplicates(ordered, (hit) => hit.chunk.text, {
        threshold: config.deduplicate.threshold,
        minHashAbove: config.deduplicate.minHashAbove,
        analyzer: this.#analyzer,
      });
      kept = result.kept;
      for (const { item, duplicateOf, similarity } of result.removed) {
        removedDuplicates.push({ id: item.chunk.id, duplicateOf: duplicateOf.chunk.id, similarity });
      }
    }

    const queryTerms = new Set(this.#analyzer.analyze(query));
    const seenDocuments = new Set<string>();
    const scored: Candidate[] = kept.map((hit) => {
      const document = hit.chunk.docId ?? `\u0000${hit.chunk.id}`;
      const diversity = seenDocuments.has(document) ? 0 : 1;
      seenDocuments.add(document);
      return {
        hit,
        original: Number.isFinite(hit.score) ? hit.score : 0,
        length: lengthBonus(countWords(hit.chunk.text), config.idealMinWords, config.idealMaxWords),
        diversity,
        overlap: termOverlap(queryTerms, new Set(this.#analyzer.analyze(hit.chunk.text))),
      };
    });

    const llmCounts = { calls: 0, cacheHits: 0, failed: 0, unparsable: 0 };
    if (mode !== 'heuristic' && this.#llm && scored.length > 0) {
      const results = await this.#llm.score(
        query,
        scored.map((c) => c.hit.chunk.text),
        signal,
      );
      results.forEach((result, index) => {
        (scored[index] as Candidate).llm = result;
        if (result.status === 'cached') llmCounts.cacheHits++;
        else llmCounts.calls++;
        if (result.status === 'failed') llmCounts.failed++;
        if (result.status === 'unparsable') llmCounts.unparsable++;
      });
      warnings.push(...llmWarnings(scored));
    }

    let hits = scored.map((candidate) => this.score(candidate, mode));

    if (config.mmr && this.#embedder && hits.length > 1) {
      hits = await this.applyMmr(hits, config.mmr.lambda, warnings, signal);
    }
    hits.sort(compareHits);
    const ranked = hits.map((hit, index) => ({ ...hit, rank: index + 1 }));

    this.#stats.reranks++;
    this.#stats.candidates += candidates.length;
    this.#stats.duplicatesRemoved += removedDuplicates.length;
    this.#stats.llmCalls += llmCounts.calls;
    this.#stats.cacheHits += llmCounts.cacheHits;
    this.#stats.llmFailures += llmCounts.failed + llmCounts.unparsable;
    return {
      hits: ranked,
      warnings,
      requestedMode: config.mode,
      effectiveMode: mode,
      removedDuplicates,
      llm: llmCounts,
      latencyMs: performance.now() - started,
    };
  }

  private score(candidate: Candidate, mode: RerankMode): ScoredChunk {
    const { hit, original, length, diversity, overlap, llm } = candidate;
    const previous = hit.explanation ? `; retrieval: ${hit.explanation.method}` : '';
    const llmText = llm
      ? `llm ${llm.score.toFixed(4)}${llm.status === 'failed' || llm.status === 'unparsable' ? ` (${llm.status}, neutral)` : ''}`
      : '';
    if (mode === 'llm') {
      const score = llm?.score ?? 0;
      return {
        ...hit,
        score,
        explanation: {
          method: 'rerank-llm',
          description: `${llmText}${previous}`,
          components: { llm: score },
        },
      };
    }
    const w = mode === 'hybrid' ? this.config.hybridWeights : this.config.weights;
    const components: Record<string, number> = {
      original: w.original * original,
      length: w.length * length,
      diversity: w.diversity * 0.5 * diversity,
      termOverlap: w.diversity * 0.5 * overlap,
    };
    let description =
      `${w.original} x original ${original.toFixed(4)} + ${w.length} x length ${length.toFixed(4)} + ` +
      `${w.diversity} x (0.5 x diversity ${diversity} + 0.5 x overlap ${overlap.toFixed(4)})`;
    if (mode === 'hybrid') {
      const llmWeight = (w as HybridWeights).llm;
      components.llm = llmWeight * (llm?.score ?? 0);
      description += ` + ${llmWeight} x ${llmText}`;
    }
    const score = Object.values(components).reduce((sum, value) => sum + value, 0);
    return {
      ...hit,
      score,
      explanation: { method: `rerank-${mode}`, description: `${description}${previous}`, components },
    };
  }

  private async applyMmr(
    hits: ScoredChunk[],
    lambda: number,
    warnings: Warning[],
    signal: AbortSignal | undefined,
  ): Promise<ScoredChunk[]> {
    const ordered = [...hits].sort(compareHits);
    let embeddings: Float32Array[];
    try {
      embeddings = await (this.#embedder as Embedder).embed(
        ordered.map((hit) => hit.chunk.text),
        { signal },
      );
      if (embeddings.length !== ordered.length)
        throw new Error(`got ${embeddings.length} embeddings for ${ordered.length} texts`);
    } catch (error) {
      throwIfAborted(signal);
      warnings.push({
        type: 'partial-failure',
        source: 'reranker',
        message: `MMR was skipped: embedding the candidates failed (${error instanceof Error ? error.message : String(error)})`,
      });
      return hits;
    }
    const order = maximalMarginalRelevance(
      ordered.map((hit) => hit.score),
      embeddings,
      lambda,
    );
    // value + (1 - lambda) lies in [0, 1] and keeps MMR's (non-increasing) order.
    return order.map(({ index, value, redundancy }) => {
      const hit = ordered[index] as ScoredChunk;
      const score = value + (1 - lambda);
      return {
        ...hit,
        score,
        explanation: {
          method: `${hit.explanation?.method ?? 'rerank'}+mmr`,
          description: `MMR: ${lambda} x relevance ${hit.score.toFixed(4)} - ${(1 - lambda).toFixed(2)} x redundancy ${redundancy.toFixed(4)}, shifted by ${(1 - lambda).toFixed(2)}; ${hit.explanation?.description ?? ''}`,
          components: { ...hit.explanation?.components, relevance: hit.score, redundancy },
        },
      };
    });
  }
}

function llmWarnings(scored: readonly Candidate[]): Warning[] {
  const warnings: Warning[] = [];
  for (const status of ['failed', 'unparsable'] as const) {
    const affected = scored.filter((c) => c.llm?.status === status);
    if (affected.length === 0) continue;
    const ids = affected
      .slice(0, 10)
      .map((c) => c.hit.chunk.id)
      .join(', ');
    const more = affected.length > 10 ? ` and ${affected.length - 10} more` : '';
    const first = affected[0]?.llm?.detail;
    warnings.push({
      type: 'partial-failure',
      source: 'reranker',
      message:
        status === 'failed'
          ? `The LLM call failed for ${affected.length} of ${scored.length} candidates (${ids}${more}); they scored a neutral 0.5. First error: ${first}`
          : `The LLM reply had no valid score for ${affected.length} of ${scored.length} candidates (${ids}${more}); they scored a neutral 0.5. First reply: ${first}`,
    });
  }
  return warnings;
}

function readWeights<T extends object>(
  given: Partial<T> | undefined,
  defaults: Readonly<T>,
  argument: string,
): T {
  const weights = { ...defaults } as Record<string, number>;
  for (const [key, value] of Object.entries(given ?? {})) {
    if (!(key in defaults)) {
      throw new InvalidArgumentError({
        argument: `${argument}.${key}`,
        value,
        message: `unknown weight; expected ${Object.keys(defaults).join(', ')}`,
      });
    }
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new InvalidArgumentError({
        argument: `${argument}.${key}`,
        value,
        message: 'must be a finite number >= 0',
      });
    }
    weights[key] = value;
  }
  return weights as T;
}

function positiveInteger(value: number, argument: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError({ argument, value, message: 'must be a positive integer' });
  }
  return value;
}

function nonNegativeInteger(value: number, argument: string): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError({ argument, value, message: 'must be an integer >= 0' });
  }
  return value;
}

function positiveNumber(value: number, argument: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError({ argument, value, message: 'must be a positive number' });
  }
  return value;
}

/** Freezes a plain-data object and everything inside it (only objects this module built). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** The caller's mistakes, named before any work (a TypeError deep inside would name nothing). */
function checkRerankInput(query: unknown, candidates: unknown, options: unknown): void {
  if (typeof query !== 'string') {
    throw new InvalidArgumentError({ argument: 'query', value: query, message: 'must be a string' });
  }
  if (!Array.isArray(candidates)) {
    throw new InvalidArgumentError({
      argument: 'candidates',
      value: candidates,
      message: `expected an array of scored chunks, got ${candidates === null ? 'null' : typeof candidates}`,
    });
  }
  candidates.forEach((candidate: unknown, index) => {
    const hit = candidate as Partial<ScoredChunk> | null;
    if (
      hit === null ||
      typeof hit !== 'object' ||
      hit.chunk === null ||
      typeof hit.chunk !== 'object' ||
      typeof hit.chunk.id !== 'string' ||
      typeof hit.chunk.text !== 'string' ||
      typeof hit.score !== 'number' ||
      Number.isNaN(hit.score)
    ) {
      throw new InvalidArgumentError({
        argument: `candidates[${index}]`,
        value: candidate,
        message: 'expected a scored chunk { chunk: { id, text }, score }',
      });
    }
  });
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError({ argument: 'options', value: options, message: 'expected an object' });
  }
  const { k } = options as { k?: unknown };
  if (k !== undefined && (typeof k !== 'number' || !Number.isInteger(k) || k <= 0)) {
    throw new InvalidArgumentError({
      argument: 'k',
      value: k,
      message: `must be a positive integer, got ${String(k)}`,
    });
  }
}
