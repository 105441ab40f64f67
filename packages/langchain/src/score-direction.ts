import type { DistanceMetric } from '@zerda/core';
import { InvalidArgumentError } from '@zerda/core';

/** What a LangChain store's scores are: similarities (higher is better) or distances (lower is). */
export type ScoreKind = 'similarity' | 'distance';

/**
 * How a distance becomes the similarity Zerda reports (DESIGN: every score is a similarity):
 * - `'cosine'`: cosine distance d, similarity `1 - d`;
 * - `'squared-l2-unit'`: squared Euclidean distance on unit vectors, `1 - d / 2`;
 * - `'l2'`: Euclidean (or any non-negative) distance, `1 / (1 + d)`;
 * - `'negative-inner-product'`: the inner product stored as a negative distance, `-d`;
 * - a function of your own (it must be decreasing: a smaller distance, a higher similarity).
 */
export type DistanceConversion =
  | 'cosine'
  | 'squared-l2-unit'
  | 'l2'
  | 'negative-inner-product'
  | ((distance: number) => number);

/**
 * The score direction of LangChain stores whose `_vectorstoreType()` is known. A prior only:
 * declare `scoreKind` to be sure. Anything else is learnt from the order of its first results.
 */
export const knownScoreKinds: Readonly<Record<string, ScoreKind>> = Object.freeze({
  // MemoryVectorStore and FakeVectorStore: cosine similarity.
  memory: 'similarity',
  pinecone: 'similarity',
  qdrant: 'similarity',
  supabase: 'similarity',
  // Raw distances.
  chroma: 'distance',
  faiss: 'distance',
  hnswlib: 'distance',
  pgvector: 'distance',
});

const defaultConversions: Record<DistanceMetric, Exclude<DistanceConversion, (d: number) => number>> = {
  cosine: 'cosine',
  l2: 'l2',
  dot: 'negative-inner-product',
};

export interface ScoreConverter {
  convert(raw: number): number;
  /** Says which conversion is applied, for `capabilities.scoreConversion` and explanations. */
  description: string;
}

export function scoreConverter(
  kind: ScoreKind,
  metric: DistanceMetric,
  conversion: DistanceConversion | undefined,
): ScoreConverter {
  if (kind === 'similarity') {
    if (conversion !== undefined) {
      throw new InvalidArgumentError({
        argument: 'distanceConversion',
        value: conversion,
        message: "only applies when scoreKind is 'distance'",
      });
    }
    return { convert: (raw) => finiteOrZero(raw), description: "the store's own similarity, unchanged" };
  }
  const chosen = conversion ?? defaultConversions[metric];
  if (typeof chosen === 'function') {
    return {
      convert: (raw) => finiteOrZero(chosen(raw)),
      description: 'a custom conversion of the distance d',
    };
  }
  switch (chosen) {
    case 'cosine':
      return { convert: (d) => finiteOrZero(1 - d), description: '1 - d for cosine distance d' };
    case 'squared-l2-unit':
      return {
        convert: (d) => finiteOrZero(1 - d / 2),
        description: '1 - d/2 for squared Euclidean distance d on unit vectors',
      };
    case 'l2':
      return {
        convert: (d) => finiteOrZero(1 / (1 + d)),
        description: '1 / (1 + d) for Euclidean distance d',
      };
    case 'negative-inner-product':
      return { convert: (d) => finiteOrZero(-d), description: '-d for inner-product distance d' };
    default:
      throw new InvalidArgumentError({
        argument: 'distanceConversion',
        value: chosen,
        message: "expected 'cosine', 'squared-l2-unit', 'l2', 'negative-inner-product' or a function",
      });
  }
}

/** The order of a result's raw scores, best (as the store ranks) first. */
export function scoreOrder(scores: readonly number[]): 'descending' | 'ascending' | 'flat' | 'mixed' {
  let up = false;
  let down = false;
  for (let index = 1; index < scores.length; index++) {
    const previous = scores[index - 1] as number;
    const current = scores[index] as number;
    if (!Number.isFinite(previous) || !Number.isFinite(current)) continue;
    if (current > previous) up = true;
    else if (current < previous) down = true;
  }
  if (up && down) return 'mixed';
  if (up) return 'ascending';
  if (down) return 'descending';
  return 'flat';
}

/** A score the store could not compute (NaN, for the cosine of a zero vector) reports as 0. */
function finiteOrZero(value: number): number {
  return Number.isNaN(value) ? 0 : value;
}
