import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeywordRetriever } from '../keyword/index.js';
import type { Chunk } from '../model/index.js';
import { Reranker } from '../rerank/index.js';
import type { Embedder } from '../vector/index.js';
import { HashEmbedder, InMemoryVectorStore, selectTopK, VectorRetriever } from '../vector/index.js';
import type { BaseRetriever } from './base-retriever.js';
import { HybridRetriever } from './hybrid-retriever.js';

/**
 * One tie order (score descending, then chunk id) from top-k selection through fusion,
 * reranking and the final sort: the hits for k are the first k hits for any larger k. The
 * corpora here are built to tie: a handful of words and of vectors, many identical chunks, ids
 * inserted in an order unrelated to their sort order.
 */

const words = ['fox', 'sand', 'dune', 'ear'];
const directions: number[][] = [
  [1, 0, 0],
  [0, 1, 0],
  [1, 1, 0],
  [0, 0, 1],
];

/** Embeds a text as one of four directions, chosen by its first word: many vectors tie. */
const tiedEmbedder: Embedder = {
  dimension: 3,
  async embed(texts: readonly string[]) {
    return texts.map((text) => {
      const index = Math.max(0, words.indexOf(text.split(' ')[0] ?? ''));
      return Float32Array.from(directions[index] as number[]);
    });
  },
};

const corpusArbitrary = fc
  .uniqueArray(fc.stringMatching(/^[a-z0-9]{1,4}$/), { minLength: 4, maxLength: 40 })
  .chain((ids) =>
    fc.tuple(
      fc.constant(ids),
      fc.array(fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 2 }), {
        minLength: ids.length,
        maxLength: ids.length,
      }),
    ),
  )
  .map(([ids, texts]): Chunk[] => ids.map((id, i) => ({ id, text: (texts[i] as string[]).join(' ') })));

async function build(chunks: Chunk[]) {
  const keyword = new KeywordRetriever();
  keyword.add(chunks);
  const store = new InMemoryVectorStore({ embedder: tiedEmbedder, metric: 'cosine' });
  await store.add(chunks);
  const vector = new VectorRetriever({ store, embedder: tiedEmbedder });
  // The metrics' minimums, which theoretical min-max and the weak-branch guard read.
  expect(keyword.scoreLowerBound).toBe(0);
  expect(vector.scoreLowerBound).toBe(-1);
  return { keyword, vector };
}

async function expectPrefixes(retriever: BaseRetriever, query: string, maxK: number): Promise<void> {
  const full = (await retriever.retrieve(query, { k: maxK })).hits.map((hit) => hit.chunk.id);
  for (let k = 1; k < maxK; k++) {
    const hits = (await retriever.retrieve(query, { k })).hits.map((hit) => hit.chunk.id);
    expect(hits, `${retriever.name} k=${k}`).toEqual(full.slice(0, k));
  }
}

describe('the hits for k are the first k hits for any larger k, with many tied scores', () => {
  it('keyword, vector and hybrid retrieval (every fusion method, fixed depth)', async () => {
    await fc.assert(
      fc.asyncProperty(corpusArbitrary, fc.constantFrom(...words), async (chunks, query) => {
        const { keyword, vector } = await build(chunks);
        const maxK = Math.min(12, chunks.length);
        await expectPrefixes(keyword, query, maxK);
        await expectPrefixes(vector, query, maxK);
        for (const method of ['weighted', 'rrf', 'weighted+rrf'] as const) {
          const hybrid = new HybridRetriever({
            keyword,
            vector,
            fusion: { version: 1, method, depth: 40 },
          });
          await expectPrefixes(hybrid, query, maxK);
        }
        // The default depth (2k, at least 200) is the same for every k up to 100.
        await expectPrefixes(new HybridRetriever({ keyword, vector }), query, Math.min(10, chunks.length));
      }),
      { numRuns: 40 },
    );
  });

  it('with a reranker attached', async () => {
    await fc.assert(
      fc.asyncProperty(corpusArbitrary, fc.constantFrom(...words), async (chunks, query) => {
        const reranked = new KeywordRetriever({ reranker: new Reranker({ mode: 'heuristic' }), fetchK: 40 });
        reranked.add(chunks);
        await expectPrefixes(reranked, query, Math.min(10, chunks.length));
      }),
      { numRuns: 25 },
    );
  });

  it('selectTopK orders equal scores by the tie key, as a full sort does', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z]{1,3}$/), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 1000 }),
        (ids, k, seed) => {
          const scores = ids.map((_, i) => ((i * 7 + seed) % 3) / 2);
          const expected = ids
            .map((id, i) => ({ id, score: scores[i] as number }))
            .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
            .slice(0, k)
            .map((e) => e.id);
          const top = selectTopK(scores, scores.length, k, undefined, (i) => ids[i] as string);
          expect(Array.from(top.indices, (i) => ids[i])).toEqual(expected);
        },
      ),
    );
  });
});

describe('the default depth serves one ranking for every k up to 100', () => {
  const vocabulary = [
    'solar',
    'wind',
    'power',
    'grid',
    'panel',
    'storage',
    'turbine',
    'sun',
    'energy',
    'cell',
  ];
  const largeCorpus = fc
    .tuple(fc.integer({ min: 130, max: 220 }), fc.integer({ min: 0, max: 1_000_000 }))
    .map(([size, seed]): Chunk[] => {
      let state = seed;
      const next = () => {
        state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
        return state;
      };
      return Array.from({ length: size }, (_, i) => ({
        id: `c${(next() % 100_000).toString(36)}-${i}`,
        text: Array.from({ length: 2 + (next() % 9) }, () => vocabulary[next() % vocabulary.length]).join(
          ' ',
        ),
      }));
    });

  it('keyword, vector and the default hybrid (2k, at least 200 per branch)', async () => {
    await fc.assert(
      fc.asyncProperty(
        largeCorpus,
        fc.constantFrom('solar wind power', 'grid storage', 'sun'),
        async (chunks, query) => {
          const keyword = new KeywordRetriever();
          keyword.add(chunks);
          // Scores that vary with each text, so a list's min-max range moves with its depth.
          const embedder = new HashEmbedder({ dimension: 64 });
          const store = new InMemoryVectorStore({ embedder, metric: 'cosine' });
          await store.add(chunks);
          const vector = new VectorRetriever({ store, embedder });
          for (const retriever of [keyword, vector, new HybridRetriever({ keyword, vector })]) {
            const full = (await retriever.retrieve(query, { k: 100 })).hits.map((hit) => hit.chunk.id);
            for (const k of [1, 2, 5, 10, 17, 40, 64, 99]) {
              const hits = (await retriever.retrieve(query, { k })).hits.map((hit) => hit.chunk.id);
              expect(hits, `${retriever.name} k=${k}`).toEqual(full.slice(0, k));
            }
          }
        },
      ),
      { numRuns: 12 },
    );
  });
});
