import type { DistanceMetric, ScoreConversion } from '@zerda/core';

/** What a LangChain store's scores are: similarities (higher is better) or distances (lower is). */
export type ScoreKind = 'similarity' | 'distance';

/** The score direction of the stores whose `_vectorstoreType()` is known (a prior: declare it to be sure). */
export const knownScoreKinds: Readonly<Record<string, ScoreKind>> = Object.freeze({
  memory: 'similarity', // MemoryVectorStore, FakeVectorStore
  pinecone: 'similarity',
  qdrant: 'similarity',
  supabase: 'similarity',
  chroma: 'distance',
  faiss: 'distance',
  hnswlib: 'distance',
  pgvector: 'distance',
});

/** How learnt distances of each metric become similarities. */
export const distanceConversions: Readonly<Record<DistanceMetric, ScoreConversion>> = Object.freeze({
  cosine: 'one-minus-distance',
  l2: 'euclidean-distance',
  dot: 'negated',
});

/** The direction a store's scores are taken in: declared, else known for its type, else not yet known. */
export function declaredScoreKind(
  declared: ScoreConversion | undefined,
  storeType: string,
): ScoreKind | undefined {
  if (declared !== undefined) return declared === 'similarity' ? 'similarity' : 'distance';
  return knownScoreKinds[storeType];
}

/**
 * Reads one result's raw scores (best first, as the store returns them): the direction they show
 * where it was not known yet, and a warning where they contradict the direction taken, or cannot
 * tell an unknown one.
 */
export function readScoreOrder(
  scores: readonly number[],
  kind: ScoreKind | undefined,
  declared: boolean,
): { kind: ScoreKind | undefined; warning?: string } {
  const steps = scores.slice(1).map((score, index) => Math.sign(score - (scores[index] as number)));
  const up = steps.includes(1);
  const down = steps.includes(-1);
  const order = up && down ? 'mixed' : up ? 'ascending' : down ? 'descending' : 'flat';
  if (kind === undefined && up !== down) return { kind: down ? 'similarity' : 'distance' };
  let problem: string | undefined;
  if (kind === undefined && scores.length > 1) problem = 'so their direction is not known yet';
  else if (
    kind !== undefined &&
    (order === 'mixed' || order === (kind === 'similarity' ? 'ascending' : 'descending'))
  ) {
    problem = `which contradicts its score direction '${kind}' (${declared ? 'declared' : 'learnt or assumed'})`;
  }
  if (problem === undefined) return { kind };
  const advice =
    kind === undefined ? 'they are taken as similarities: declare scoreConversion' : 'check scoreConversion';
  return { kind, warning: `returned ${order} scores, ${problem}; ${advice}` };
}
