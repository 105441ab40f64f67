import { InvalidArgumentError } from '../errors/index.js';
import type { Qrels, Run, RunEntry } from './types.js';

/**
 * Compares two strings by Unicode code point, which is the byte order of their UTF-8 encodings
 * (what C's `strcmp` sees). JavaScript's `<` compares UTF-16 code units, which differs only for
 * characters above U+FFFF against U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const xSurrogate = x >= 0xd800 && x <= 0xdfff;
      const ySurrogate = y >= 0xd800 && y <= 0xdfff;
      if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
      return x - y;
    }
  }
  return a.length - b.length;
}

/**
 * trec_eval's order for a query's results: score descending, ties broken by document id in
 * descending byte order. The rank column of a run file plays no part.
 */
export function compareRunEntries(a: RunEntry, b: RunEntry): number {
  if (a.score !== b.score) return b.score > a.score ? 1 : -1;
  return compareCodePoints(b.docId, a.docId);
}

/**
 * The document ids of `entries` in trec_eval's order (see `compareRunEntries`), each id once
 * (a repeated id keeps its best-placed occurrence). Does not modify `entries`.
 */
export function rankRunEntries(entries: readonly RunEntry[]): string[] {
  const sorted = [...entries].sort(compareRunEntries);
  const seen = new Set<string>();
  const ranking: string[] = [];
  for (const entry of sorted) {
    if (seen.has(entry.docId)) continue;
    seen.add(entry.docId);
    ranking.push(entry.docId);
  }
  return ranking;
}

/** The gain of a document: its grade when positive, 0 when unjudged or not relevant. */
function gainOf(judgments: ReadonlyMap<string, number>, docId: string): number {
  const grade = judgments.get(docId);
  return grade !== undefined && grade > 0 ? grade : 0;
}

/** Number of documents judged relevant (grade > 0). */
export function countRelevant(judgments: ReadonlyMap<string, number>): number {
  let count = 0;
  for (const grade of judgments.values()) if (grade > 0) count++;
  return count;
}

/**
 * nDCG@k as trec_eval's `ndcg_cut` computes it: linear gain (gain = grade), discount
 * log2(rank + 1), the ideal ranking built from every document judged relevant for the query.
 * `ranking` is the ranked document ids, best first. 0 when nothing is judged relevant.
 */
export function ndcgAt(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  k: number,
): number {
  checkCutoff(k);
  const grades: number[] = [];
  for (const grade of judgments.values()) if (grade > 0) grades.push(grade);
  if (grades.length === 0) return 0;
  grades.sort((a, b) => b - a);
  let ideal = 0;
  for (let i = 0; i < Math.min(k, grades.length); i++) ideal += (grades[i] as number) / Math.log2(i + 2);
  let dcg = 0;
  const depth = Math.min(k, ranking.length);
  for (let i = 0; i < depth; i++) {
    const gain = gainOf(judgments, ranking[i] as string);
    if (gain > 0) dcg += gain / Math.log2(i + 2);
  }
  return dcg / ideal;
}

/** Recall@k: relevant documents (grade > 0) among the first k, over all relevant documents. */
export function recallAt(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  k: number,
): number {
  checkCutoff(k);
  const relevant = countRelevant(judgments);
  if (relevant === 0) return 0;
  let found = 0;
  const depth = Math.min(k, ranking.length);
  for (let i = 0; i < depth; i++) if (gainOf(judgments, ranking[i] as string) > 0) found++;
  return found / relevant;
}

/** Precision@k: relevant documents among the first k, over k (trec_eval's `P_k`). */
export function precisionAt(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  k: number,
): number {
  checkCutoff(k);
  let found = 0;
  const depth = Math.min(k, ranking.length);
  for (let i = 0; i < depth; i++) if (gainOf(judgments, ranking[i] as string) > 0) found++;
  return found / k;
}

/** Reciprocal rank of the first relevant document within the first k; 0 when there is none. */
export function reciprocalRankAt(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  k: number,
): number {
  checkCutoff(k);
  const depth = Math.min(k, ranking.length);
  for (let i = 0; i < depth; i++) if (gainOf(judgments, ranking[i] as string) > 0) return 1 / (i + 1);
  return 0;
}

/** A metric name with its cutoff: `ndcg@10`, `recall@100`, `mrr@10`, `precision@5`. */
export type MetricName = `${'ndcg' | 'recall' | 'mrr' | 'precision'}@${number}`;

export const DEFAULT_METRICS: readonly MetricName[] = ['ndcg@10', 'recall@100', 'mrr@10'];

const metricFunctions = {
  ndcg: ndcgAt,
  recall: recallAt,
  mrr: reciprocalRankAt,
  precision: precisionAt,
} as const;

/** Parses `name@k`; throws InvalidArgumentError for an unknown metric or a bad cutoff. */
export function parseMetric(name: string): { metric: keyof typeof metricFunctions; k: number } {
  const match = /^(ndcg|recall|mrr|precision)@(\d+)$/.exec(name.trim().toLowerCase());
  const k = match ? Number(match[2]) : Number.NaN;
  if (!match || !Number.isSafeInteger(k) || k < 1) {
    throw new InvalidArgumentError({
      argument: 'metrics',
      value: name,
      message: `unknown metric '${name}': expected ndcg@K, recall@K, mrr@K or precision@K with K >= 1`,
    });
  }
  return { metric: match[1] as keyof typeof metricFunctions, k };
}

export interface EvaluateOptions {
  /** Metrics to compute (default nDCG@10, Recall@100, MRR@10). */
  metrics?: readonly string[];
  /**
   * The queries to average over. Default: every query with at least one relevant judgment
   * (grade > 0). A query the run lacks scores 0 on every metric (trec_eval's `-c`).
   */
  queries?: Iterable<string>;
}

export interface Evaluation {
  /** Mean of each metric over the evaluated queries (0 when there are none). */
  metrics: Record<string, number>;
  /** Each evaluated query's values. */
  perQuery: Map<string, Record<string, number>>;
  /** Number of queries averaged over. */
  queryCount: number;
  /** Evaluated queries for which the run had no results. */
  missingFromRun: string[];
}

/**
 * Scores a run against judgments as trec_eval does: each query's results are sorted by score
 * descending then document id descending, and every judged query counts (see `queries`).
 */
export function evaluateRun(run: Run, qrels: Qrels, options: EvaluateOptions = {}): Evaluation {
  const specs = (options.metrics ?? DEFAULT_METRICS).map((name) => ({ name, ...parseMetric(name) }));
  const queryIds = options.queries ? [...new Set(options.queries)] : judgedQueryIds(qrels);
  const totals: Record<string, number> = {};
  for (const spec of specs) totals[spec.name] = 0;
  const perQuery = new Map<string, Record<string, number>>();
  const missingFromRun: string[] = [];
  const none = new Map<string, number>();
  for (const queryId of queryIds) {
    const entries = run.get(queryId);
    if (!entries || entries.length === 0) missingFromRun.push(queryId);
    const ranking = entries ? rankRunEntries(entries) : [];
    const judgments = qrels.get(queryId) ?? none;
    const values: Record<string, number> = {};
    for (const spec of specs) {
      const value = metricFunctions[spec.metric](ranking, judgments, spec.k);
      values[spec.name] = value;
      totals[spec.name] = (totals[spec.name] ?? 0) + value;
    }
    perQuery.set(queryId, values);
  }
  const metrics: Record<string, number> = {};
  for (const spec of specs) {
    metrics[spec.name] = queryIds.length === 0 ? 0 : (totals[spec.name] ?? 0) / queryIds.length;
  }
  return { metrics, perQuery, queryCount: queryIds.length, missingFromRun };
}

/** Ids of the queries with at least one relevant judgment (grade > 0), in the qrels' order. */
export function judgedQueryIds(qrels: Qrels): string[] {
  const ids: string[] = [];
  for (const [queryId, judgments] of qrels) if (countRelevant(judgments) > 0) ids.push(queryId);
  return ids;
}

function checkCutoff(k: number): void {
  if (!Number.isInteger(k) || k < 1) {
    throw new InvalidArgumentError({
      argument: 'k',
      value: k,
      message: 'the cutoff must be a positive integer',
    });
  }
}
