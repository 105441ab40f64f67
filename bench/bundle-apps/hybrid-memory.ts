// An application that uses the hybrid retriever over the in-memory store and the hash embedder.
import {
  HashEmbedder,
  HybridRetriever,
  InMemoryVectorStore,
  KeywordRetriever,
  VectorRetriever,
} from '@zerda/core';

const embedder = new HashEmbedder({ dimension: 256 });
const keyword = new KeywordRetriever();
const store = new InMemoryVectorStore({ embedder });
const hybrid = new HybridRetriever({ keyword, vector: new VectorRetriever({ store }) });
export async function index(chunks: Array<{ id: string; text: string }>) {
  keyword.add(chunks);
  await store.add(chunks);
}
export const search = (query: string) => hybrid.retrieve(query, { k: 5 });
