import { InvalidArgumentError } from '../errors/index.js';
import { assertFinite, canonicalSum, prepareLists, sortFused } from './prepare.js';
import type { Contribution, FusedItem, RankedList, RrfOptions } from './types.js';

/**
 * Reciprocal rank fusion: `score(d) = Σ_i w_i / (k + rank_i(d))` over the lists that contain
 * `d`, with ranks from 1. Only ranks matter; scores, where present, are reported in the
 * contributions. Lists of weight 0 are ignored entirely. Returns every id found, best first,
 * equal scores ordered by id.
 */
export function reciprocalRankFusion(lists: readonly RankedList[], options: RrfOptions = {}): FusedItem[] {
  const k = options.k ?? 60;
  if (typeof k !== 'number' || !Number.isFinite(k) || k < 0) {
    throw new InvalidArgumentError({ argument: 'k', value: k, message: 'must be a finite number >= 0' });
  }
  const prepared = prepareLists(lists, options.weights, false);
  const byId = new Map<string, Contribution[]>();
  for (const list of prepared) {
    for (const item of list.items) {
      const contribution: Contribution = {
        list: list.label,
        rank: item.rank,
        contribution: list.weight / (k + item.rank),
      };
      if (item.score !== undefined) contribution.score = item.score;
      let contributions = byId.get(item.id);
      if (contributions === undefined) {
        contributions = [];
        byId.set(item.id, contributions);
      }
      contributions.push(contribution);
    }
  }
  const fused: FusedItem[] = [];
  for (const [id, contributions] of byId) {
    const score = canonicalSum(contributions.map((c) => c.contribution));
    assertFinite(id, score);
    fused.push({ id, score, contributions });
  }
  return sortFused(fused);
}
