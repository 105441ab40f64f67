import { AbortedError, InvalidArgumentError, RetrievalError } from '../errors/index.js';
import {
  type FusedItem,
  type RankedList,
  reciprocalRankFusion,
  type ScoreCombination,
  type ScoreNormalization,
  scoreFusion,
} from '../fusion/index.js';
import {
  type Chunk,
  RetrievalMethod,
  type ScoredChunk,
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
export type HybridFusionMethod = 'weighted' | 'rrf' | 'weighted+rrf';

export interface HybridBranch {
  /** The signal's name on hits and in explanations ('keyword', 'vector', 'metadata', ...). */
  name: string;
  retriever: BaseRetriever;
  /** Weight in fusion (default 1; 0.5 for a branch named 'metadata'). */
  weight?: number;
}

export interface HybridRetrieverOptions extends BaseRetrieverOptions {
  /** Shorthands for the usual branches; `branches` adds any others. */
  keyword?: BaseRetriever;
  vector?: BaseRetriever;
  metadata?: BaseRetriever;
  branches?: HybridBranch[];
  /** Weights by branch name, overriding each branch's own. */
  weights?: Record<string, number>;
  /** Default 'weighted+rrf'. */
  fusion?: HybridFusionMethod;
  /** Per-branch score normalisation for weighted fusion (default 'minmax'). */
  normalization?: ScoreNormalization;
  combination?: ScoreCombination;
  /** RRF's k (default 60). */
  rrfK?: number;
  /** In 'weighted+rrf', how much the RRF bonus (scaled to [0, 1]) adds to the weighted score (default 0.5). */
  rrfBonusWeight?: number;
  /** Candidates each branch fetches: a number or a function of k (default 2k). */
  branchK?: number | ((k: number) => number);
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
  private readonly normalization: ScoreNormalization;
  private readonly combination: ScoreCombination;
  private readonly rrfK: number;
  private readonly rrfBonusWeight: number;
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
        branch.weight ??
        (branch.name === RetrievalMethod.Metadata ? 0.5 : 1);
      if (!Number.isFinite(weight) || weight < 0) {
        throw new InvalidArgumentError({
          argument: `weights.${branch.name}`,
          value: weight,
          message: 'must be a finite number >= 0',
        });
      }
      return { ...branch, weight };
    });
    this.fusion = options.fusion ?? 'weighted+rrf';
    if (!['weighted', 'rrf', 'weighted+rrf'].includes(this.fusion)) {
      throw new InvalidArgumentError({
        argument: 'fusion',
        value: this.fusion,
        message: "expected 'weighted', 'rrf' or 'weighted+rrf'",
      });
    }
    this.normalization = options.normalization ?? 'minmax';
    this.combination = options.combination ?? 'arithmetic';
    this.rrfK = options.rrfK ?? 60;
    this.rrfBonusWeight = options.rrfBonusWeight ?? 0.5;
    if (!Number.isFinite(this.rrfBonusWeight) || this.rrfBonusWeight < 0) {
      throw new InvalidArgumentError({
        argument: 'rrfBonusWeight',
        value: this.rrfBonusWeight,
        message: 'must be >= 0',
      });
    }
    const branchK = options.branchK ?? ((k: number) => 2 * k);
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

    const lists: RankedList[] = answered.map(({ branch, result }) => ({
      name: branch.name,
      weight: branch.weight,
      items: (result as SearchResult).hits.map((hit) => ({ id: hit.chunk.id, score: hit.score })),
    }));
    const fused = this.fuse(lists);

    // Each chunk's per-branch hit, for its text and its own explanation.
    const found = new Map<string, { chunk: Chunk; byBranch: Map<string, ScoredChunk> }>();
    for (const { branch, result } of answered) {
      for (const hit of (result as SearchResult).hits) {
        const entry = found.get(hit.chunk.id) ?? { chunk: hit.chunk, byBranch: new Map() };
        entry.byBranch.set(branch.name, hit);
        found.set(hit.chunk.id, entry);
      }
    }
    const hits = fused.slice(0, k).map(({ item, components, description }, index): ScoredChunk => {
      const entry = found.get(item.id) as { chunk: Chunk; byBranch: Map<string, ScoredChunk> };
      const scores: ScoredChunk['scores'] = {};
      const ranks: ScoredChunk['ranks'] = {};
      for (const [name, hit] of entry.byBranch) {
        scores[name] = hit.score;
        ranks[name] = hit.rank;
      }
      return {
        chunk: entry.chunk,
        score: item.score,
        rank: index + 1,
        retriever: this.name,
        scores,
        ranks,
        explanation: { method: this.fusion, description, components },
      };
    });
    return { hits, total: fused.length, warnings };
  }

  /** Fuses the branch lists; each item comes with its score's components and a description. */
  private fuse(
    lists: RankedList[],
  ): Array<{ item: FusedItem; components: Record<string, number>; description: string }> {
    const weighted = (): FusedItem[] =>
      scoreFusion(lists, { normalization: this.normalization, combination: this.combination });
    const rrf = (): FusedItem[] => reciprocalRankFusion(lists, { k: this.rrfK });
    const parts = (item: FusedItem, prefix = '') =>
      Object.fromEntries(item.contributions.map((c) => [`${prefix}${String(c.list)}`, c.contribution]));
    const explain = (item: FusedItem, kind: string) =>
      item.contributions
        .map((c) =>
          kind === 'rrf'
            ? `${String(c.list)} rank ${c.rank} -> ${c.contribution.toFixed(4)}`
            : `${String(c.list)} rank ${c.rank} score ${formatScore(c.score)} (${this.normalization} ${formatScore(c.normalized)}) -> ${c.contribution.toFixed(4)}`,
        )
        .join(', ');

    if (this.fusion === 'rrf') {
      return rrf().map((item) => ({
        item,
        components: parts(item),
        description: `RRF (k=${this.rrfK}): ${explain(item, 'rrf')}`,
      }));
    }
    if (this.fusion === 'weighted') {
      return weighted().map((item) => ({
        item,
        components: parts(item),
        description: `weighted ${this.combination} of ${this.normalization}-normalised scores: ${explain(item, 'weighted')}`,
      }));
    }
    // weighted+rrf: the RRF score, scaled by the best any item could get (rank 1 everywhere) to
    // [0, 1], is added to the weighted score as a bonus, and the sum rescaled to [0, 1].
    const rrfById = new Map(rrf().map((item) => [item.id, item]));
    const bestRrf = lists.reduce((sum, list) => sum + (list.weight ?? 1) / (this.rrfK + 1), 0) || 1;
    const bonusWeight = this.rrfBonusWeight;
    const combined = weighted().map((item) => {
      const rrfItem = rrfById.get(item.id);
      const bonus = (rrfItem?.score ?? 0) / bestRrf;
      const score = (item.score + bonusWeight * bonus) / (1 + bonusWeight);
      return {
        item: { ...item, score },
        components: { ...parts(item), rrfBonus: (bonusWeight * bonus) / (1 + bonusWeight) },
        description:
          `(weighted ${item.score.toFixed(4)} + ${bonusWeight} x RRF bonus ${bonus.toFixed(4)}) / ${1 + bonusWeight}; ` +
          `weighted: ${explain(item, 'weighted')}; RRF: ${rrfItem ? explain(rrfItem, 'rrf') : 'none'}`,
      };
    });
    return combined.sort(
      (a, b) => b.item.score - a.item.score || (a.item.id < b.item.id ? -1 : a.item.id > b.item.id ? 1 : 0),
    );
  }

  private async runBranch(
    branch: HybridBranch,
    query: string,
    k: number,
    options: RetrieveChunksOptions,
  ): Promise<BranchOutcome> {
    const timeoutMs = this.branchTimeoutMs;
    const controller = new AbortController();
    const signals = [controller.signal, ...(options.signal ? [options.signal] : [])];
    const signal = signals.length === 1 ? controller.signal : AbortSignal.any(signals);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const answer = branch.retriever.retrieve(query, { k, filter: options.filter, signal });
      const result =
        timeoutMs === undefined
          ? await answer
          : await Promise.race([
              answer,
              new Promise<never>((_, reject) => {
                timer = setTimeout(() => {
                  const error = new Error(`no answer within ${timeoutMs} ms`);
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

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function formatScore(value: number | undefined): string {
  return value === undefined ? '-' : value.toFixed(4);
}
