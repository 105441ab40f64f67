/**
 * Maximal marginal relevance: repeatedly picks the item that maximises
 * `lambda x relevance - (1 - lambda) x max similarity to the items already picked`, so that
 * near-identical passages do not crowd the top. Similarity is the cosine of the embeddings,
 * clipped below at 0. Returns the picking order with each pick's marginal value, which never
 * increases from one pick to the next (penalties only grow as the picked set grows).
 */
export function maximalMarginalRelevance(
  relevance: readonly number[],
  embeddings: readonly Float32Array[],
  lambda: number,
): Array<{ index: number; value: number; redundancy: number }> {
  const n = relevance.length;
  const norms = embeddings.map((vector) => Math.sqrt(dot(vector, vector)) || 1);
  const redundancy = new Float64Array(n);
  const picked = new Uint8Array(n);
  const order: Array<{ index: number; value: number; redundancy: number }> = [];
  for (let step = 0; step < n; step++) {
    let best = -1;
    let bestValue = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      if (picked[i]) continue;
      const value = lambda * (relevance[i] as number) - (1 - lambda) * (redundancy[i] as number);
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    picked[best] = 1;
    order.push({ index: best, value: bestValue, redundancy: redundancy[best] as number });
    const chosen = embeddings[best] as Float32Array;
    for (let i = 0; i < n; i++) {
      if (picked[i]) continue;
      const similarity =
        dot(chosen, embeddings[i] as Float32Array) / ((norms[best] as number) * (norms[i] as number));
      if (similarity > (redundancy[i] as number)) redundancy[i] = Math.min(1, similarity);
    }
  }
  return order;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}
