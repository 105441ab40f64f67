import type { DistanceMetric, ScoreConversion } from './driver.js';

/** Every conversion a driver may declare, for checks of what a driver says. */
export const scoreConversions: readonly ScoreConversion[] = [
  'similarity',
  'one-minus-distance',
  'negated',
  'euclidean-distance',
  'squared-euclidean-distance',
];

/** A driver's native match value as Zerda's similarity (higher is better), per its declared conversion. */
export function toSimilarity(conversion: ScoreConversion, metric: DistanceMetric, value: number): number {
  let score: number;
  switch (conversion) {
    case 'similarity':
      score = value;
      break;
    case 'one-minus-distance':
      score = 1 - value;
      break;
    case 'negated':
      score = -value;
      break;
    case 'euclidean-distance':
      score = 1 / (1 + Math.max(0, value));
      break;
    case 'squared-euclidean-distance':
      score = 1 / (1 + Math.sqrt(Math.max(0, value)));
      break;
  }
  return metric === 'cosine' ? Math.min(1, Math.max(-1, score)) : score;
}

/** A sentence for explanations: how the backend's value became the score. */
export function describeScoreConversion(conversion: ScoreConversion): string {
  switch (conversion) {
    case 'similarity':
      return 'the similarity the backend returned';
    case 'one-minus-distance':
      return '1 - d for the distance d the backend returned';
    case 'negated':
      return '-d for the negative inner product d the backend returned';
    case 'euclidean-distance':
      return '1 / (1 + d) for the Euclidean distance d the backend returned';
    case 'squared-euclidean-distance':
      return '1 / (1 + sqrt(d)) for the squared Euclidean distance d the backend returned';
  }
}
