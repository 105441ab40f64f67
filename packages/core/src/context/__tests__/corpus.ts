import { KeywordRetriever } from '../../keyword/index.js';
import type { Chunk } from '../../model/index.js';
import { HybridRetriever } from '../../retriever/index.js';
import { HashEmbedder, InMemoryVectorStore, VectorRetriever } from '../../vector/index.js';

/** A small corpus about Zerda itself, in English and Arabic, with quality and dates in metadata. */
export const corpus: Chunk[] = [
  {
    id: 'rerank-1',
    docId: 'reranker-guide',
    text: 'The Zerda reranker rescores retrieval candidates with a heuristic, a language model, or both, before the best few are returned.',
    metadata: { sourceQuality: 'high', date: '2025-03-01' },
  },
  {
    id: 'rerank-2',
    docId: 'reranker-guide',
    text: 'Near-duplicate removal uses Jaccard similarity over word sets; above three hundred candidates MinHash with locality-sensitive hashing takes over and handles two thousand candidates in about forty milliseconds.',
    metadata: { sourceQuality: 'high', date: '2025-03-01' },
  },
  {
    id: 'bm25-1',
    docId: 'bm25-notes',
    text: 'BM25 scores a document by term frequency with saturation k1 and length normalisation b, summed over the query terms weighted by inverse document frequency.',
    metadata: { quality: 2, date: '2023-06-15' },
  },
  {
    id: 'fusion-1',
    docId: 'fusion-notes',
    text: 'Reciprocal rank fusion adds one over sixty plus the rank for every list that found a chunk, so agreement between keyword and vector search lifts a result.',
    metadata: { quality: 'medium', date: '2024-11-20' },
  },
  {
    id: 'chroma-1',
    docId: 'backends',
    text: 'The Chroma backend translates Zerda filters into where clauses and runs against a real Chroma server started from the npm package.',
    metadata: { sourceQuality: 'low', date: '2022-01-10' },
  },
  {
    id: 'faiss-1',
    docId: 'backends',
    text: 'FAISS stores vectors only, so only docId equality and membership filters are pushed down; everything else is evaluated on the candidates.',
    metadata: { date: '2024-02-02' },
  },
  {
    id: 'arabic-1',
    docId: 'arabic-guide',
    text: 'يطبع محلل النصوص الحروف العربية ويزيل التشكيل والتطويل ويوحد أشكال الألف والياء قبل التجذيع الخفيف.',
    metadata: { sourceQuality: 'high', date: '2025-01-05' },
  },
  {
    id: 'context-1',
    docId: 'context-guide',
    text: 'The context engine assembles retrieved chunks into a context within a budget, with a source marker before every chunk and guard checks for weak or empty contexts.',
    metadata: { sourceQuality: 'high', date: '2025-02-10' },
  },
];

export async function hybridOver(chunks: Chunk[] = corpus): Promise<HybridRetriever> {
  const keyword = new KeywordRetriever();
  keyword.add(chunks);
  const embedder = new HashEmbedder({ dimension: 256 });
  const store = new InMemoryVectorStore({ embedder });
  await store.add(chunks);
  const vector = new VectorRetriever({ store, embedder });
  return new HybridRetriever({ keyword, vector });
}
