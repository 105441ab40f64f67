import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { FakeEmbeddings, FakeVectorStore } from '@langchain/core/utils/testing';
import { createChromaStore } from '@zerda/chroma';
import { createInMemoryVectorStore, HashEmbedder, type VectorDatabase } from '@zerda/core';
import { createFaissStore } from '@zerda/faiss';
import { fromLangChainVectorStore } from '@zerda/langchain';
import { createPineconeStore } from '@zerda/pinecone';
import { createPostgresStore } from '@zerda/postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type LoopbackPinecone,
  startLoopbackPinecone,
} from '../../packages/pinecone/src/test-utils/loopback-pinecone.js';
import { type Answer, passages, questions, runApplication } from './app.js';

/*
 * The swap proof: one application (app.ts), run unchanged over six vector databases; only the line
 * that makes the database differs. Keyword answers are identical everywhere (the keyword side is the
 * collection's own). Vector and hybrid answers are identical where the database searches exactly:
 * all of these do at this size (FAISS flat, Postgres exact, Chroma's HNSW over eight vectors, the
 * Pinecone loopback and the in-memory stores scan everything).
 */

const embedder = new HashEmbedder({ dimension: 64 });
const apiKey = 'pcsk_loopback-swap-key';
let pinecone: LoopbackPinecone;
let pglite: PGlite;

beforeAll(async () => {
  pinecone = await startLoopbackPinecone({
    apiKey,
    indexes: [{ name: 'swap', dimension: 64, metric: 'cosine' }],
  });
  pglite = await PGlite.create({ extensions: { vector } });
});

afterAll(async () => {
  await pinecone?.close();
  await pglite?.close();
});

const backends: Record<string, () => VectorDatabase | Promise<VectorDatabase>> = {
  memory: () => createInMemoryVectorStore({ embedder }),
  faiss: () => createFaissStore({ embedder }),
  chroma: () =>
    createChromaStore({ url: inject('chromaUrl'), embedder, collection: `swap-${crypto.randomUUID()}` }),
  pinecone: () =>
    createPineconeStore({ apiKey, controllerHostUrl: pinecone.url, indexName: 'swap', embedder }),
  postgres: () => createPostgresStore({ pglite, table: 'swap', index: 'exact', embedder }),
  langchain: () =>
    fromLangChainVectorStore(new FakeVectorStore(new FakeEmbeddings()), { embedder, metric: 'cosine' }),
};

function byQuestion(answers: Answer[], mode: Answer['mode']) {
  return answers
    .filter((answer) => answer.mode === mode)
    .map((answer) => ({ question: answer.question, ids: answer.hits.map((hit) => hit.id) }));
}

describe('one application, six vector databases, one line apart', () => {
  it('gives identical keyword answers everywhere and identical vector and hybrid answers on exact search', async () => {
    const results: Record<string, Answer[]> = {};
    for (const [name, make] of Object.entries(backends)) results[name] = await runApplication(await make());
    const reference = results.memory as Answer[];
    expect(reference).toHaveLength(questions.length * 3);
    expect(reference.every((answer) => answer.hits.length > 0)).toBe(true);
    expect(passages.length).toBeGreaterThan(5);
    for (const [name, answers] of Object.entries(results)) {
      for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
        expect(byQuestion(answers, mode), `${name} ${mode}`).toEqual(byQuestion(reference, mode));
      }
      answers.forEach((answer, index) => {
        answer.hits.forEach((hit, rank) => {
          const expected = reference[index]!.hits[rank]!.score;
          expect(hit.score, `${name} ${answer.mode} ${answer.question}`).toBeCloseTo(expected, 4);
        });
      });
    }
  });
});
