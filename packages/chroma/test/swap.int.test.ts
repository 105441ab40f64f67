import { createInMemoryVectorStore, HashEmbedder, type VectorDatabase } from '@zerda/core';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { questions, searchPassages } from '../examples/swap.js';
import { createChromaStore } from '../src/chroma-store.js';

const embedder = new HashEmbedder({ dimension: 256 });
const chroma = createChromaStore({
  url: inject('chromaUrl'),
  embedder,
  collection: `swap-${crypto.randomUUID()}`,
});

afterAll(async () => {
  await chroma.deleteCollection();
});

describe('swapping the in-memory store for Chroma', () => {
  it('runs the same application code and gets the same hits for the same data', async () => {
    // Only the line that creates the store differs.
    const stores: VectorDatabase[] = [createInMemoryVectorStore({ embedder }), chroma];
    const [memoryAnswers, chromaAnswers] = await Promise.all(stores.map((store) => searchPassages(store)));
    expect(memoryAnswers).toHaveLength(questions.length);
    for (const [index, memoryAnswer] of memoryAnswers!.entries()) {
      const chromaAnswer = chromaAnswers![index]!;
      expect(memoryAnswer.hits.length, memoryAnswer.question).toBeGreaterThan(0);
      expect(
        chromaAnswer.hits.map((hit) => hit.id),
        memoryAnswer.question,
      ).toEqual(memoryAnswer.hits.map((hit) => hit.id));
      chromaAnswer.hits.forEach((hit, rank) => {
        expect(hit.score).toBeCloseTo(memoryAnswer.hits[rank]!.score, 4);
      });
    }
  });
});
