// The demo application as a runtime-neutral module: it imports only `@zerda/core` and the bundled
// sample, so the same code runs in Node, in a browser page and in an edge runtime, and the browser
// test compares their results hit for hit. It also backs the web page of `zerda demo --web`.
import {
  type Collection,
  type CollectionStorage,
  ContextEngine,
  HashEmbedder,
  InMemoryVectorStore,
  openCollection,
  Reranker,
  type SearchResult,
} from '@zerda/core';
import { demoQueries, samplePassages } from '../sample/passages.js';

export const WEB_DEMO_DIMENSION = 256;

/** Opens the demo collection (in memory unless a storage is given) and indexes the sample if it is empty. */
export async function openDemoCollection(
  storage?: CollectionStorage,
): Promise<{ collection: Collection; indexed: boolean }> {
  const collection = await openCollection({
    store: new InMemoryVectorStore({ embedder: new HashEmbedder({ dimension: WEB_DEMO_DIMENSION }) }),
    ...(storage ? { storage } : {}),
  });
  const indexed = (await collection.count()) === 0;
  if (indexed) await collection.add(samplePassages);
  return { collection, indexed };
}

export interface ScenarioHit {
  id: string;
  score: number;
  ranks: Record<string, number | undefined>;
}

export interface ScenarioResult {
  kernel: 'wasm' | 'js';
  indexed: boolean;
  count: number;
  queries: Array<{
    query: string;
    keyword: ScenarioHit[];
    vector: ScenarioHit[];
    hybrid: ScenarioHit[];
    reranked: ScenarioHit[];
  }>;
  context: { chunks: string[]; size: number; guardPassed: boolean };
}

function hits(result: SearchResult): ScenarioHit[] {
  return result.hits.map((hit) => ({ id: hit.chunk.id, score: hit.score, ranks: { ...hit.ranks } }));
}

/**
 * The scenario both runtimes run: the sample indexed, each demo query in keyword, vector and hybrid
 * mode with its filter, a reranked hybrid retrieval, and a context assembled by the context engine.
 */
export async function runScenario(storage?: CollectionStorage): Promise<ScenarioResult> {
  const { collection, indexed } = await openDemoCollection(storage);
  const reranker = new Reranker({ mode: 'heuristic' });
  const queries: ScenarioResult['queries'] = [];
  for (const query of demoQueries) {
    const options = { k: 3, ...(query.filter ? { filter: query.filter } : {}) };
    const [keyword, vector, hybrid] = await Promise.all([
      collection.retrieve(query.text, { ...options, mode: 'keyword' }),
      collection.retrieve(query.text, { ...options, mode: 'vector' }),
      collection.retrieve(query.text, { ...options, mode: 'hybrid' }),
    ]);
    const candidates = await collection.retrieve(query.text, { ...options, k: 8 });
    const reranked = await reranker.rerank(query.text, candidates.hits, { k: 3 });
    queries.push({
      query: query.text,
      keyword: hits(keyword),
      vector: hits(vector),
      hybrid: hits(hybrid),
      reranked: hits({ ...candidates, hits: reranked.hits.slice(0, 3) }),
    });
  }
  const engine = new ContextEngine({
    retriever: collection,
    reranker,
    k: 8,
    budgets: { low: 400, medium: 600, high: 900 },
  });
  const context = await engine.buildContext('Where does the fennec fox live?');
  const kernel = (collection.store as InMemoryVectorStore).stats().kernel;
  const count = await collection.count();
  await collection.close();
  return {
    kernel,
    indexed,
    count,
    queries,
    context: {
      chunks: context.chunks.map((chunk) => chunk.chunk.id),
      size: context.size,
      guardPassed: context.guardPassed,
    },
  };
}
