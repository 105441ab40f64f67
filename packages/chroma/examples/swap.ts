/**
 * Swap backends without code changes. `searchPassages` is the application: it indexes passages
 * and answers questions with filters, and never names a backend. The store is created in one
 * line; changing that line moves the application from the in-memory store to Chroma.
 *
 * Run it (with a Chroma server at CHROMA_URL, default http://localhost:8000; `npx chroma run`
 * starts one):
 *   node --import tsx --conditions=@zerda/source packages/chroma/examples/swap.ts
 */
import { pathToFileURL } from 'node:url';
import { createChromaStore } from '@zerda/chroma';
import {
  type Chunk,
  createInMemoryVectorStore,
  type FilterInput,
  HashEmbedder,
  type VectorDatabase,
  VectorRetriever,
} from '@zerda/core';

export const passages: Chunk[] = [
  {
    id: 'solar',
    text: 'Solar panels convert sunlight into electricity for homes and offices.',
    docId: 'energy-guide',
    metadata: { topic: 'energy', year: 2021, reviewed: true },
  },
  {
    id: 'wind',
    text: 'Offshore wind turbines produce electricity even at night.',
    docId: 'energy-guide',
    metadata: { topic: 'energy', year: 2019 },
  },
  {
    id: 'storage',
    text: 'Battery storage keeps solar electricity for the evening peak.',
    docId: 'energy-report',
    metadata: { topic: 'energy', year: 2023, reviewed: true },
  },
  {
    id: 'river',
    text: 'The river floods the valley every spring after the snow melts.',
    docId: 'water-atlas',
    metadata: { topic: 'water', year: 2020 },
  },
  {
    id: 'wells',
    text: 'Deep wells supply drinking water to the villages in summer.',
    docId: 'water-atlas',
    metadata: { topic: 'water', year: 2022, reviewed: false },
  },
  {
    id: 'court',
    text: 'The commercial court settles contract disputes between companies.',
    docId: 'law-notes',
    metadata: { topic: 'law', year: 2018 },
  },
];

export const questions: Array<{ question: string; filter?: FilterInput }> = [
  { question: 'how is electricity made from sunlight?' },
  { question: 'electricity', filter: { topic: 'energy', year: { $gte: 2020 } } },
  // `$exists` has no Chroma form: the retriever evaluates that part itself, on either store.
  {
    question: 'water',
    filter: { $or: [{ topic: 'water' }, { docId: 'law-notes' }], reviewed: { $exists: true } },
  },
];

/** The application. It takes any VectorDatabase and never names a backend. */
export async function searchPassages(store: VectorDatabase, asked = questions) {
  await store.add(passages);
  const retriever = new VectorRetriever({ store });
  const answers = [];
  for (const { question, filter } of asked) {
    const result = await retriever.retrieve(question, { k: 3, ...(filter === undefined ? {} : { filter }) });
    answers.push({ question, hits: result.hits.map((hit) => ({ id: hit.chunk.id, score: hit.score })) });
  }
  return answers;
}

async function main(): Promise<void> {
  const embedder = new HashEmbedder({ dimension: 256 });

  // The one line that differs:
  const memory = createInMemoryVectorStore({ embedder });
  const chroma = createChromaStore({ embedder, collection: 'zerda-swap-example' });

  for (const store of [memory, chroma]) {
    console.log(`\n${store.name}:`);
    for (const { question, hits } of await searchPassages(store)) {
      console.log(`  ${question}: ${hits.map((hit) => `${hit.id} (${hit.score.toFixed(3)})`).join(', ')}`);
    }
  }
  await chroma.deleteCollection();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
