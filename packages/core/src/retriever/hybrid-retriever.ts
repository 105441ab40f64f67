import {
  AbortedError,
  BackendError,
  FilterError,
  InvalidArgumentError,
  RetrievalError,
} from '../errors/index.js';
import {
  CandidatePool,
  DEFAULT_FUSION_CONFIG as DEFAULT_FUSION_CONFIG_FOR_HYBRID,
  FUSION_METHODS as FUSION_METHOD_NAMES,
  type FusionConfig,
  type FusionMethod,
  type FusionSettings,
  fusePool,
  type PoolFusion,
  type PoolList,
  parseFusionConfig,
  type ResolvedFusionConfig,
  resolveFusionConfig,
  type ScoreCombination,
  type ScoreNormalization,
  topCandidates,
  type WeakBranchGuard,
} from '../fusion/index.js';
import {
  type Chunk,
  RetrievalMethod,
  type ScoredChunk,
  type ScoreExplanation,
  type SearchResult,
  type Warning,
} from '../model/index.js';
import {
  BaseRetriever,
  type BaseRetrieverOptions,
  type RetrieveChunksOptions,
  type RetrievedChunks,
} from './base-retriever.js';

/** How branch rankings become one: normalised weighted scores, reciprocal ranks, or both. */
export type HybridFusionMethod = FusionMethod;

/**
 * The fewest candidates a branch fetches by default (see `HybridRetrieverOptions.branchK`): with
 * 2k and at least 200, every k up to 100 fuses the same candidates, so the hits for k are the
 * first k hits for any larger k up to 100.
 */
const MIN_DEFAULT_BRANCH_DEPTH = 200;

/** The default setting with another method; RRF takes no guard (it is Σ w / (k + rank) exactly). */
function fusionSettingFor(method: HybridFusionMethod): FusionConfig {
  const { guard, ...rest } = DEFAULT_FUSION_CONFIG_FOR_HYBRID;
  return method === 'rrf' ? { ...rest, method } : { ...rest, guard, method };
}

export interface HybridBranch {
  /** The signal's name on hits and in explanations ('keyword', 'vector', 'metadata', ...). */
  name: string;
  retriever: BaseRetriever;
  /** Weight in fusion (default 1; 0.5 for a branch named 'metadata'). */
  weight?: number;
  /**
   * The lowest score the branch's metric can give, for theoretical min-max normalisation
   * (default: the retriever's `scoreLowerBound`: 0 for BM25, -1 for cosine).
   */
  lowerBound?: number;
  /**
   * Whether the weak-branch guard may lower this branch's weight (default true; false for a
   * branch named 'metadata', whose every match scores 1: a flat list is its nature).
   */
  guard?: boolean;
}

export interface HybridRetrieverOptions extends BaseRetrieverOptions {
  /** Shorthands for the usual branches; `branches` adds any others. */
  keyword?: BaseRetriever;
  vector?: BaseRetriever;
  metadata?: BaseRetriever;
  branches?: HybridBranch[];
  /** Weights by branch name, overriding each branch's own (and the fusion setting's). */
  weights?: Record<string, number>;
  /**
   * The fusion: a method name, or a fusion setting (the versioned JSON object `zerda tune`
   * writes, checked by `parseFusionConfig`). Default `DEFAULT_FUSION_CONFIG`. The options below
   * override the setting's keys when given.
   */
  fusion?: HybridFusionMethod | FusionConfig;
  /** Per-branch score normalisation for weighted fusion (default 'minmax'). */
  normalization?: ScoreNormalization;
  combination?: ScoreCombination;
  /** RRF's k (default 60). */
  rrfK?: number;
  /** In 'weighted+rrf', how much the RRF bonus (scaled to [0, 1]) adds to the weighted score (default 0.5). */
  rrfBonusWeight?: number;
  /**
   * Candidates each branch fetches: a number (at least k) or a function of k. Default: the
   * setting's depth, or else 2k and at least 200 (`MIN_DEFAULT_BRANCH_DEPTH`), so that min-max
   * normalisation sees enough of each list and the hits for any k up to 100 are the first hits of
   * k = 100.
   */
  branchK?: number | ((k: number) => number);
  /**
   * The weak-branch guard (default on): when a branch's top scores are flat for a query (its
   * evidence spread is below `minSpread`, see `WeakBranchGuard`), its weight drops for that query.
   * `false` turns it off.
   */
  guard?: boolean | Partial<WeakBranchGuard>;
  /** A branch that has not answered by then is abandoned with a warning (default: no limit). */
  branchTimeoutMs?: number;
  /** Name reported on hits (default 'hybrid'). */
  name?: string;
}

interface BranchOutcome {
  branch: HybridBranch;
  result?: SearchResult;
  error?: unknown;
}

/**
 * Runs the keyword, vector and metadata retrievers (or any others) concurrently with the same
 * filter, fuses their rankings by chunk id, and returns hits that say which branches found them,
 * at what rank and score, and how the final score was built. A branch that fails or times out
 * does not fail the query: the others answer and the result carries a warning naming it.
 */
export class HybridRetriever extends BaseRetriever {
  readonly name: string;
  readonly branches: readonly HybridBranch[];
  readonly fusion: HybridFusionMethod;
  /** The fusion in effect, every default filled in. */
  readonly fusionSettings: Readonly<ResolvedFusionConfig>;
  private readonly branchK: (k: number) => number;
  private readonly branchTimeoutMs: number | undefined;

  constructor(options: HybridRetrieverOptions) {
    super(options);
    const branches: HybridBranch[] = [];
    for (const name of [RetrievalMethod.Keyword, RetrievalMethod.Vector, RetrievalMethod.Metadata] as const) {
      const retriever = options[name];
      if (retriever) branches.push({ name, retriever });
    }
    branches.push(...(options.branches ?? []));
    if (branches.length === 0) {
      throw new InvalidArgumentError({
        argument: 'branches',
        message: 'a hybrid retriever needs at least one branch',
      });
    }
    const fusionInput = options.fusion ?? DEFAULT_FUSION_CONFIG_FOR_HYBRID;
    if (
      typeof fusionInput === 'string' &&
      !(FUSION_METHOD_NAMES as readonly string[]).includes(fusionInput)
    ) {
      throw new InvalidArgumentError({
        argument: 'fusion',
        value: fusionInput,
        message: "expected 'weighted', 'rrf', 'weighted+rrf' or a fusion setting { version: 1, method, ... }",
      });
    }
    const config = parseFusionConfig(
      typeof fusionInput === 'string' ? fusionSettingFor(fusionInput) : fusionInput,
    );
    const resolved = resolveFusionConfig({
      ...config,
      ...(options.normalization === undefined ? {} : { normalization: options.normalization }),
      ...(options.combination === undefined ? {} : { combination: options.combination }),
      ...(options.rrfK === undefined ? {} : { rrfK: options.rrfK }),
      ...(options.rrfBonusWeight === undefined ? {} : { rrfBonusWeight: options.rrfBonusWeight }),
      ...(options.guard === undefined ? {} : { guard: options.guard }),
    });
    if (
      options.normalization !== undefined ||
      options.combination !== undefined ||
      options.guard !== undefined
    ) {
      // Checked as a setting would be, so a bad option names itself.
      parseFusionConfig({
        version: 1,
        method: resolved.method,
        normalization: resolved.normalization,
        combination: resolved.combination,
        ...(options.guard === undefined ? {} : { guard: options.guard }),
      });
    }
    for (const [argument, value] of [
      ['rrfK', resolved.rrfK],
      ['rrfBonusWeight', resolved.rrfBonusWeight],
    ] as const) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw new InvalidArgumentError({ argument, value, message: 'must be a finite number >= 0' });
      }
    }
    const names = new Set<string>();
    this.branches = branches.map((branch) => {
      if (names.has(branch.name)) {
        throw new InvalidArgumentError({
          argument: 'branches',
          value: branch.name,
          message: `two branches named '${branch.name}'`,
        });
      }
      names.add(branch.name);
      const weight =
        options.weights?.[branch.name] ??
        resolved.weights[branch.name] ??
        branch.weight ??
        (branch.name === RetrievalMethod.Metadata ? 0.5 : 1);
      if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
        throw new InvalidArgumentError({
          argument: `weights.${branch.name}`,
          value: weight,
          message: 'must be a finite number >= 0',
        });
      }
      const lowerBound =
        branch.lowerBound ?? resolved.lowerBounds[branch.name] ?? branch.retriever.scoreLowerBound;
      return { ...branch, weight, ...(lowerBound === undefined ? {} : { lowerBound }) };
    });
    resolved.weights = Object.fromEntries(
      this.branches.map((branch) => [branch.name, branch.weight as number]),
    );
    this.fusionSettings = resolved;
    this.fusion = resolved.method;
    const depth = resolved.depth;
    const branchK =
      options.branchK ??
      (depth === undefined ? (k: number) => Math.max(2 * k, MIN_DEFAULT_BRANCH_DEPTH) : depth);
    this.branchK =
      typeof branchK === 'number' ? (k) => Math.max(k, branchK) : (k) => Math.max(k, Math.ceil(branchK(k)));
    this.branchTimeoutMs = options.branchTimeoutMs;
    this.name = options.name ?? 'hybrid';
  }

  protected async retrieveChunks(
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<RetrievedChunks> {
    const fetch = this.branchK(k);
    const outcomes = await Promise.all(
      this.branches.map((branch) => this.runBranch(branch, query, fetch, options)),
    );
    if (options.signal?.aborted) throw new AbortedError({ cause: options.signal.reason });
    // A filter a branch refuses (a store in strict mode that cannot evaluate it whole) is the
    // caller's to fix, not a branch failure: the same FilterError a single retriever throws.
    const refused = outcomes.find((outcome) => FilterError.isInstance(outcome.error));
    if (refused !== undefined) throw refused.error;

    const warnings: Warning[] = [];
    const answered = outcomes.filter((outcome) => outcome.result !== undefined);
    const failed = outcomes.filter((outcome) => outcome.result === undefined);
    if (answered.length === 0) {
      throw new RetrievalError({ failures: failed.map((f) => ({ branch: f.branch.name, error: f.error })) });
    }
    for (const { branch, error } of failed) {
      warnings.push({
        type: 'partial-failure',
        source: branch.name,
        message: `The ${branch.name} branch failed (${describe(error)}); the result comes from ${answered.map((a) => a.branch.name).join(' and ')} only`,
      });
    }
    for (const { branch, result } of answered) {
      for (const warning of result?.warnings ?? [])
        warnings.push({ ...warning, source: warning.source ?? branch.name });
    }

    const outcome = this.fuseBranches(
      answered.map(({ branch, result }) => ({ branch, hits: (result as SearchResult).hits })),
      k,
    );
    return { hits: outcome.hits, total: outcome.total, warnings };
  }

  /**
   * Fuses branch hits into the best `k`. The candidates are merged once into typed arrays, the
   * fused scores computed without an object per candidate, and explanations built only for the
   * hits returned.
   */
  fuseBranches(
    answered: ReadonlyArray<{ branch: HybridBranch; hits: readonly ScoredChunk[] }>,
    k: number,
  ): { hits: ScoredChunk[]; total: number } {
    // Plain arrays for what lives only during this call: on Node a typed array of more than 64
    // bytes costs about 0.8 us to make (its memory is outside the heap), against 0.07 for an array.
    const pool = new CandidatePool(
      answered.map(({ branch, hits }) => {
        const ids: string[] = [];
        const scores: number[] = [];
        for (let i = 0; i < hits.length; i++) {
          const hit = hits[i] as ScoredChunk;
          ids.push(hit.chunk.id);
          scores.push(hit.score);
        }
        return { name: branch.name, ids, scores, lowerBound: branch.lowerBound };
      }),
    );
    const settings = this.fusionSettings;
    const fusionSettings: FusionSettings = {
      method: settings.method,
      normalization: settings.normalization,
      combination: settings.combination,
      weights: answered.map(({ branch }) => branch.weight ?? 1),
      rrfK: settings.rrfK,
      rrfBonusWeight: settings.rrfBonusWeight,
      guard: settings.guard,
      // A metadata branch scores membership (every match 1): a flat list is its nature, not weakness.
      guarded: answered.map(({ branch }) => branch.guard ?? branch.name !== RetrievalMethod.Metadata),
    };
    const fused = fusePool(pool, fusionSettings);
    const top = topCandidates(pool, fused.scores, k);
    // Each returned candidate's position in each branch (-1: not found there), for the hits
    // returned only: plain arrays, no object per candidate.
    const listCount = pool.lists.length;
    const slotOf = new Array<number>(pool.size).fill(-1);
    for (let i = 0; i < top.length; i++) slotOf[top[i] as number] = i;
    const rankOf = new Array<number>(top.length * listCount).fill(-1);
    for (let l = 0; l < listCount; l++) {
      const candidates = (pool.lists[l] as PoolList).candidates;
      for (let r = 0; r < candidates.length; r++) {
        const slot = slotOf[candidates[r] as number] as number;
        if (slot >= 0 && rankOf[slot * listCount + l] === -1) rankOf[slot * listCount + l] = r;
      }
    }
    const hits = new Array<ScoredChunk>(top.length);
    for (let i = 0; i < top.length; i++) {
      const candidate = top[i] as number;
      // This hit's ranks are rankOf[first, first + listCount).
      const first = i * listCount;
      let chunk: Chunk | undefined;
      const scores: ScoredChunk['scores'] = {};
      const ranks: ScoredChunk['ranks'] = {};
      for (let l = 0; l < listCount; l++) {
        const r = rankOf[first + l] as number;
        if (r < 0) continue;
        const { branch, hits: branchHits } = answered[l] as (typeof answered)[number];
        // The branch hit at this rank (branch lists have no duplicates after the base retriever).
        const hit = findHit(branchHits, pool.ids[candidate] as string, r);
        chunk ??= hit.chunk;
        scores[branch.name] = hit.score;
        ranks[branch.name] = hit.rank;
      }
      hits[i] = {
        chunk: chunk as Chunk,
        score: fused.scores[candidate] as number,
        rank: i + 1,
        retriever: this.name,
        scores,
        ranks,
        explanation: this.explain(pool, fused, candidate, rankOf, first),
      };
    }
    return { hits, total: fused.found };
  }

  /**
   * How a candidate's fused score was built: the components now, the description (text) when
   * first read, from a few numbers kept for it.
   */
  private explain(
    pool: CandidatePool,
    fused: PoolFusion,
    candidate: number,
    /** The candidate's rank in each list (-1: not in it) at [first, first + lists). */
    rankOf: readonly number[],
    first: number,
  ): ScoreExplanation {
    const settings = this.fusionSettings;
    const method = settings.method;
    const components: Record<string, number> = {};
    let totalWeight = 0;
    for (const weight of fused.weights) totalWeight += weight;
    totalWeight ||= 1;
    const bonusWeight = settings.rrfBonusWeight;
    const parts: ExplainedPart[] = [];
    for (let l = 0; l < pool.lists.length; l++) {
      const r = rankOf[first + l] as number;
      if (r < 0) continue;
      const list = pool.lists[l] as PoolList;
      const weight = fused.weights[l] as number;
      const rrfPart = (fused.rrfWeights[l] as number) / (settings.rrfK + r + 1);
      const normalized = method === 'rrf' ? 0 : (fused.normalized[l]?.[r] as number);
      const part = settings.combination === 'arithmetic' ? (weight / totalWeight) * normalized : normalized;
      if (method === 'rrf') components[list.name] = rrfPart;
      else components[list.name] = method === 'weighted' ? part : part / (1 + bonusWeight);
      const spread = fused.spreads[l] as number;
      parts.push({
        name: list.name,
        rank: r + 1,
        score: list.scores[r] as number,
        normalized,
        part,
        rrfPart,
        // The guard lowered this branch's weight for the query.
        weak: Number.isNaN(spread) || weight === this.weightOf(list.name) ? undefined : { spread, weight },
      });
    }
    let weighted = 0;
    let bonus = 0;
    if (method === 'weighted+rrf') {
      weighted = fused.weighted?.[candidate] as number;
      bonus = (fused.rrf?.[candidate] as number) / (fused.bestRrf || 1);
      components.rrfBonus = (bonusWeight * bonus) / (1 + bonusWeight);
    }
    const explanation = new FusionExplanation(method, components, settings, parts, weighted, bonus);
    return explanation;
  }

  private weightOf(name: string): number | undefined {
    for (const branch of this.branches) if (branch.name === name) return branch.weight;
    return undefined;
  }

  private async runBranch(
    branch: HybridBranch,
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<BranchOutcome> {
    const timeoutMs = this.branchTimeoutMs;
    const { filter, signal: callerSignal } = options;
    // A signal of the branch's own only where a timeout may abort it: an AbortSignal costs
    // microseconds a query to make, and nothing would ever fire it.
    const controller = timeoutMs === undefined ? undefined : new AbortController();
    const signal =
      controller === undefined
        ? callerSignal
        : callerSignal === undefined
          ? controller.signal
          : AbortSignal.any([controller.signal, callerSignal]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const answer = branch.retriever.retrieve(query, { k, filter, signal });
      const result =
        controller === undefined
          ? await answer
          : await Promise.race([
              answer,
              new Promise<never>((_, reject) => {
                timer = setTimeout(() => {
                  // Typed like any backend's timeout: worth trying again later.
                  const error = new BackendError({
                    backend: branch.name,
                    operation: 'retrieve',
                    message: `no answer within ${timeoutMs} ms (branchTimeoutMs)`,
                    retryable: true,
                  });
                  controller.abort(error);
                  reject(error);
                }, timeoutMs);
              }),
            ]);
      return { branch, result };
    } catch (error) {
      return { branch, error };
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }
}

/**
 * A fused hit's explanation: the components at once, the description (text) when first read,
 * so that a query pays for the text of no hit it does not show. `JSON.stringify` includes the
 * description (`toJSON`).
 */
class FusionExplanation implements ScoreExplanation {
  #description: string | undefined;

  constructor(
    readonly method: string,
    readonly components: Record<string, number>,
    private readonly settings: ResolvedFusionConfig,
    private readonly parts: readonly ExplainedPart[],
    private readonly weighted: number,
    private readonly bonus: number,
  ) {}

  get description(): string {
    this.#description ??= describeFusion(this.settings, this.parts, this.weighted, this.bonus);
    return this.#description;
  }

  set description(value: string) {
    this.#description = value;
  }

  toJSON(): { method: string; description: string; components: Record<string, number> } {
    return { method: this.method, description: this.description, components: this.components };
  }
}

/** What an explanation's text is built from, for one branch that found the hit. */
interface ExplainedPart {
  name: string;
  rank: number;
  score: number;
  normalized: number;
  part: number;
  rrfPart: number;
  weak: { spread: number; weight: number } | undefined;
}

function describeFusion(
  settings: ResolvedFusionConfig,
  parts: readonly ExplainedPart[],
  weighted: number,
  bonus: number,
): string {
  const weak = (part: ExplainedPart) =>
    part.weak === undefined
      ? ''
      : ` (weak evidence: spread ${part.weak.spread.toFixed(4)}, weight ${part.weak.weight.toFixed(4)})`;
  const rrfParts = parts
    .map(
      (p) => `${p.name} rank ${p.rank} -> ${p.rrfPart.toFixed(4)}${settings.method === 'rrf' ? weak(p) : ''}`,
    )
    .join(', ');
  if (settings.method === 'rrf') return `RRF (k=${settings.rrfK}): ${rrfParts}`;
  const weightedParts = parts
    .map(
      (p) =>
        `${p.name} rank ${p.rank} score ${p.score.toFixed(4)} (${settings.normalization} ${p.normalized.toFixed(4)}) -> ${p.part.toFixed(4)}${weak(p)}`,
    )
    .join(', ');
  if (settings.method === 'weighted') {
    return `weighted ${settings.combination} of ${settings.normalization}-normalised scores: ${weightedParts}`;
  }
  const bonusWeight = settings.rrfBonusWeight;
  return (
    `(weighted ${weighted.toFixed(4)} + ${bonusWeight} x RRF bonus ${bonus.toFixed(4)}) / ${1 + bonusWeight}; ` +
    `weighted: ${weightedParts}; RRF (k=${settings.rrfK}): ${rrfParts}`
  );
}

/** The hit of `id`, expected at position `at` (its first occurrence). */
function findHit(hits: readonly ScoredChunk[], id: string, at: number): ScoredChunk {
  const expected = hits[at];
  if (expected !== undefined && expected.chunk.id === id) return expected;
  return hits.find((hit) => hit.chunk.id === id) as ScoredChunk;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
