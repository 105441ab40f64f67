import type { Chunk } from '@zerda/core';

/** A small corpus with metadata to filter on: language, year, topic, and a document per pair. */
export const corpus: Chunk[] = [
  {
    id: 'bm25',
    docId: 'retrieval',
    text: 'BM25 ranks documents by term frequency and inverse document frequency.',
    metadata: { lang: 'en', year: 2009, topic: 'keyword', tags: ['ranking', 'classic'] },
  },
  {
    id: 'dense',
    docId: 'retrieval',
    text: 'Dense retrieval embeds queries and passages as vectors and compares them by cosine similarity.',
    metadata: { lang: 'en', year: 2020, topic: 'vector', tags: ['embeddings'] },
  },
  {
    id: 'rrf',
    docId: 'fusion',
    text: 'Reciprocal rank fusion combines ranked lists by adding one over sixty plus the rank.',
    metadata: { lang: 'en', year: 2009, topic: 'fusion', tags: ['ranking'] },
  },
  {
    id: 'hybrid',
    docId: 'fusion',
    text: 'Hybrid search fuses keyword ranking with dense vector similarity for better recall.',
    metadata: { lang: 'en', year: 2022, topic: 'fusion', tags: ['ranking', 'embeddings'] },
  },
  {
    id: 'faiss',
    docId: 'stores',
    text: 'FAISS stores vectors in an index for fast nearest neighbour search over embeddings.',
    metadata: { lang: 'en', year: 2017, topic: 'vector', draft: true },
  },
  {
    id: 'chroma',
    docId: 'stores',
    text: 'Chroma is a vector database that keeps metadata beside each embedding and filters on it.',
    metadata: { lang: 'en', year: 2023, topic: 'vector' },
  },
  {
    id: 'arabic',
    docId: 'languages',
    text: 'البحث الهجين يجمع بين الكلمات المفتاحية والمتجهات الكثيفة',
    metadata: { lang: 'ar', year: 2024, topic: 'fusion' },
  },
  {
    id: 'spanish',
    docId: 'languages',
    text: 'La búsqueda híbrida combina palabras clave y vectores densos.',
    metadata: { lang: 'es', year: 2024, topic: 'fusion' },
  },
  {
    id: 'reranker',
    text: 'A reranker re-scores the candidates of a first stage with a heavier model.',
    metadata: { lang: 'en', year: 2021, topic: 'rerank' },
  },
  {
    id: 'context',
    text: 'Context assembly packs the best passages into the prompt within a token budget.',
    metadata: { lang: 'en', year: 2024, topic: 'context' },
  },
];
