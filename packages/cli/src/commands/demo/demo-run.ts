import {
  DEFAULT_FUSION_CONFIG,
  type FilterInput,
  HashEmbedder,
  type HybridFusionMethod,
  InMemoryVectorStore,
  openCollection,
  type SearchResult,
} from '@zerda/core';
import { type DemoQuery, demoQueries, samplePassages } from '../../sample/passages.js';
import { type ConversationTurnReport, runConversationDemo } from '../demo-conversation.js';

/** The hash embedder's dimension in the demo. */
export const DEMO_DIMENSION = 256;

export interface DemoOptions {
  /** Queries to run (default: the sample queries: English, Arabic, mixed, and one with a filter). */
  queries?: ReadonlyArray<string | DemoQuery>;
  /** Hits per query and retriever (default 3). */
  k?: number;
  /** How the hybrid retriever fuses (default 'weighted', the HybridRetriever's default). */
  fusion?: HybridFusionMethod;
}

/** One query's results in the three modes. */
export interface DemoQueryResult {
  query: string;
  label?: string;
  filter?: FilterInput;
  keyword: SearchResult;
  vector: SearchResult;
  hybrid: SearchResult;
}

export interface DemoReport {
  /** The context engine answering a question and a follow-up that uses the recorded answer. */
  conversation: ConversationTurnReport[];
  documents: number;
  fusion: HybridFusionMethod;
  embedder: { name: string; dimension: number };
  k: number;
  results: DemoQueryResult[];
}

/**
 * The README's first example: adds the bundled sample corpus once to a collection over the
 * in-memory vector store with the hash embedder (no model, no network), which keeps a BM25 index
 * beside it, then retrieves each query in keyword, vector and hybrid mode, with its metadata
 * filter where it has one, and builds a conversation's contexts over the collection.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoReport> {
  const k = options.k ?? 3;
  const fusion = options.fusion ?? DEFAULT_FUSION_CONFIG.method;
  const embedder = new HashEmbedder({ dimension: DEMO_DIMENSION });
  const collection = await openCollection({
    store: new InMemoryVectorStore({ embedder, metric: 'cosine' }),
    fusion,
  });
  try {
    await collection.add(samplePassages);
    const results: DemoQueryResult[] = [];
    for (const input of options.queries ?? demoQueries) {
      const query: DemoQuery = typeof input === 'string' ? { text: input } : input;
      const retrieve = { k, ...(query.filter === undefined ? {} : { filter: query.filter }) };
      const [keyword, vector, hybrid] = await Promise.all([
        collection.retrieve(query.text, { ...retrieve, mode: 'keyword' }),
        collection.retrieve(query.text, { ...retrieve, mode: 'vector' }),
        collection.retrieve(query.text, { ...retrieve, mode: 'hybrid' }),
      ]);
      results.push({
        query: query.text,
        ...(query.label === undefined ? {} : { label: query.label }),
        ...(query.filter === undefined ? {} : { filter: query.filter }),
        keyword,
        vector,
        hybrid,
      });
    }
    const conversation = await runConversationDemo(collection);
    return {
      conversation,
      documents: samplePassages.length,
      fusion,
      embedder: { name: 'HashEmbedder', dimension: DEMO_DIMENSION },
      k,
      results,
    };
  } finally {
    await collection.close();
  }
}
