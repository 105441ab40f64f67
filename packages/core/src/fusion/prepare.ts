import { InvalidArgumentError } from '../errors/index.js';
import type { FusedItem, RankedItem, RankedList } from './types.js';

/** One first occurrence of an id in a list, with its 1-based rank among distinct ids. */
export interface PreparedItem {
  id: string;
  rank: number;
  /** 0-based position in the input list, for messages. */
  position: number;
  score: number | undefined;
}

/** A validated list with duplicates removed and its effective weight resolved. */
export interface PreparedList {
  label: string | number;
  /** For messages: `lists[2] ('bm25')`. */
  where: string;
  weight: number;
  /** The metric's lowest score (for `theoretical-minmax`), where the list declares one. */
  lowerBound: number | undefined;
  items: PreparedItem[];
}

/**
 * Validates every list and item (even of lists with weight 0, so bad input never passes
 * silently), removes duplicate ids (the first occurrence wins and later ones take no rank),
 * and drops lists of weight 0, which take no part in fusion at all.
 */
export function prepareLists(
  lists: readonly RankedList[],
  weights: readonly number[] | undefined,
  requireScores: boolean,
): PreparedList[] {
  if (!Array.isArray(lists)) {
    throw new InvalidArgumentError({
      argument: 'lists',
      value: lists,
      message: 'expected an array of ranked lists',
    });
  }
  if (weights !== undefined) {
    if (!Array.isArray(weights) || weights.length !== lists.length) {
      throw new InvalidArgumentError({
        argument: 'weights',
        value: weights,
        message: `expected one weight per list (${lists.length}), got ${Array.isArray(weights) ? weights.length : typeof weights}`,
      });
    }
  }
  const prepared: PreparedList[] = [];
  lists.forEach((list, index) => {
    if (list === null || typeof list !== 'object' || !Array.isArray(list.items)) {
      throw new InvalidArgumentError({
        argument: 'lists',
        value: list,
        message: `lists[${index}] is not a ranked list ({ items: [...] })`,
      });
    }
    if (list.name !== undefined && typeof list.name !== 'string') {
      throw new InvalidArgumentError({
        argument: 'lists',
        value: list.name,
        message: `lists[${index}].name must be a string`,
      });
    }
    const where = describeList(index, list.name);
    const weight = weights === undefined ? (list.weight ?? 1) : weights[index];
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
      throw new InvalidArgumentError({
        argument: weights === undefined ? 'lists' : 'weights',
        value: weight,
        message: `weight of ${where} must be a finite number >= 0, got ${String(weight)}`,
      });
    }
    if (
      list.lowerBound !== undefined &&
      (typeof list.lowerBound !== 'number' || Number.isNaN(list.lowerBound))
    ) {
      throw new InvalidArgumentError({
        argument: 'lists',
        value: list.lowerBound,
        message: `lowerBound of ${where} must be a number, got ${String(list.lowerBound)}`,
      });
    }
    const seen = new Set<string>();
    const items: PreparedItem[] = [];
    const listItems: readonly RankedItem[] = list.items;
    listItems.forEach((item, position) => {
      if (item === null || typeof item !== 'object' || typeof item.id !== 'string') {
        throw new InvalidArgumentError({
          argument: 'lists',
          value: item,
          message: `${where} item #${position}: expected { id: string, score?: number }`,
        });
      }
      const { id, score } = item;
      if (score === undefined) {
        if (requireScores) {
          throw new InvalidArgumentError({
            argument: 'lists',
            value: item,
            message: `${where} item #${position} (id '${id}') has no score; score fusion needs one on every item`,
          });
        }
      } else if (typeof score !== 'number' || !Number.isFinite(score)) {
        throw new InvalidArgumentError({
          argument: 'lists',
          value: score,
          message: `${where} item #${position} (id '${id}') has a non-finite score: ${String(score)}`,
        });
      }
      if (seen.has(id)) return;
      seen.add(id);
      items.push({ id, rank: items.length + 1, position, score });
    });
    if (weight > 0)
      prepared.push({ label: list.name ?? index, where, weight, lowerBound: list.lowerBound, items });
  });
  return prepared;
}

export function describeList(index: number, name: string | undefined): string {
  return name === undefined ? `lists[${index}]` : `lists[${index}] ('${name}')`;
}

/**
 * Sums in ascending order, so the result does not depend on the order the terms arrive in
 * (floating-point addition is not associative): permuting the input lists gives identical scores.
 */
export function canonicalSum(values: number[]): number {
  values.sort((a, b) => a - b);
  let sum = 0;
  for (const value of values) sum += value;
  return sum;
}

/** Best first; equal scores by id (code-unit order), so the output is deterministic. */
export function sortFused(items: FusedItem[]): FusedItem[] {
  return items.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function assertFinite(id: string, score: number): void {
  if (!Number.isFinite(score)) {
    throw new InvalidArgumentError({
      argument: 'weights',
      value: score,
      message: `the fused score of id '${id}' is not finite; the weights or scores are too large`,
    });
  }
}
