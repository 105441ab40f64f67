import {
  DEFAULT_FUSION_CONFIG,
  type FilterInput,
  type HybridFusionMethod,
  type Metadata,
  type RetrievalMode,
  type ScoredChunk,
  type ScoreExplanation,
  type SignalValues,
} from '@zerda/core';
import type { AnalyzerName } from '../../analyzers.js';
import { openStoreForReading, storeCounts } from '../../store-folder/store-folder.js';

/** The retrieval modes of `zerda search`: the collection's. */
export type SearchMode = RetrievalMode;
export const searchModes: readonly SearchMode[] = ['hybrid', 'keyword', 'vector'];

export const searchFusions: readonly HybridFusionMethod[] = ['weighted', 'rrf', 'weighted+rrf'];

export interface SearchOptions {
  /** The store folder (written by `zerda index`). */
  store: string;
  query: string;
  /** Hits to return (default 10). */
  k?: number;
  /** 'hybrid' (default), 'keyword' or 'vector'. */
  mode?: SearchMode;
  /** Hybrid fusion (default 'weighted', the HybridRetriever's default). */
  fusion?: HybridFusionMethod;
  /** A metadata filter in Zerda's filter language, applied to every branch. */
  filter?: FilterInput;
  /** Also run each branch alone to report its own rank, score and explanation per hit. */
  explain?: boolean;
}

/** What one branch says about a hit (with `explain`). */
export interface BranchExplanation {
  /** Rank in the branch's own list of `branchK` candidates; absent when it did not find the hit. */
  rank?: number;
  score?: number;
  explanation?: ScoreExplanation;
}

export interface SearchHitReport {
  rank: number;
  score: number;
  id: string;
  docId?: string;
  source?: string;
  title?: string;
  text: string;
  metadata: Metadata;
  /** The score and rank each signal gave it. */
  scores: SignalValues;
  ranks: SignalValues;
  /** How the final score was built. */
  explanation?: ScoreExplanation;
  /** Each branch on its own (hybrid with `explain`). */
  branches?: Record<string, BranchExplanation>;
}

/** What `zerda search --json` prints. */
export interface SearchReport {
  query: string;
  store: string;
  mode: SearchMode;
  fusion?: HybridFusionMethod;
  k: number;
  filter?: FilterInput;
  /** Matching candidates before truncation to k (a lower bound for vector search). */
  total: number;
  latencyMs: number;
  /** Documents and chunks in the store. */
  storeCounts: { documents: number; chunks: number };
  /** The store's analyser, which also decides which words of a snippet match. */
  analyzer: AnalyzerName;
  hits: SearchHitReport[];
  warnings: string[];
}

/** Opens a store folder's collection (for reading) and runs one query. */
export async function runSearch(options: SearchOptions): Promise<SearchReport> {
  const mode = options.mode ?? 'hybrid';
  const k = options.k ?? 10;
  const fusion = mode === 'hybrid' ? (options.fusion ?? DEFAULT_FUSION_CONFIG.method) : undefined;
  const store = await openStoreForReading(options.store, fusion === undefined ? {} : { fusion });
  try {
    const { collection } = store;
    const retrieve = { k, ...(options.filter === undefined ? {} : { filter: options.filter }) };
    const result = await collection.retrieve(options.query, { ...retrieve, mode });
    let branches: Map<string, Map<string, ScoredChunk>> | undefined;
    if (options.explain && mode === 'hybrid') {
      // Each branch alone, with the hybrid retriever's candidate count (2k), to show its own view.
      branches = new Map();
      for (const name of ['keyword', 'vector'] as const) {
        const own = await collection
          .retrieve(options.query, { ...retrieve, k: 2 * k, mode: name })
          .catch(() => undefined);
        branches.set(name, new Map((own?.hits ?? []).map((hit) => [hit.chunk.id, hit])));
      }
    }
    const warnings = [
      ...store.warnings,
      ...[...collection.report.warnings, ...result.warnings].map((warning) =>
        warning.source ? `${warning.source}: ${warning.message}` : warning.message,
      ),
    ];
    return {
      query: options.query,
      store: options.store,
      mode,
      ...(fusion === undefined ? {} : { fusion }),
      k,
      ...(options.filter === undefined ? {} : { filter: options.filter }),
      total: result.total,
      latencyMs: Math.round(result.latencyMs * 1000) / 1000,
      storeCounts: await storeCounts(collection),
      analyzer: store.config.analyzer.name,
      hits: result.hits.map((hit) => describeHit(hit, branches)),
      warnings,
    };
  } finally {
    await store.close();
  }
}

function describeHit(
  hit: ScoredChunk,
  branches: Map<string, Map<string, ScoredChunk>> | undefined,
): SearchHitReport {
  const metadata = hit.chunk.metadata ?? {};
  const source = typeof metadata.source === 'string' ? metadata.source : undefined;
  const title = typeof metadata.title === 'string' ? metadata.title : undefined;
  const report: SearchHitReport = {
    rank: hit.rank,
    score: hit.score,
    id: hit.chunk.id,
    ...(hit.chunk.docId === undefined ? {} : { docId: hit.chunk.docId }),
    ...(source === undefined ? {} : { source }),
    ...(title === undefined ? {} : { title }),
    text: hit.chunk.text,
    metadata,
    scores: hit.scores,
    ranks: hit.ranks,
    ...(hit.explanation === undefined ? {} : { explanation: hit.explanation }),
  };
  if (branches) {
    report.branches = {};
    for (const [name, hits] of branches) {
      const own = hits.get(hit.chunk.id);
      report.branches[name] = own
        ? { rank: own.rank, score: own.score, ...(own.explanation ? { explanation: own.explanation } : {}) }
        : {};
    }
  }
  return report;
}
