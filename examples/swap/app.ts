/**
 * The application of the swap proof: it indexes passages into a collection and answers questions
 * in keyword, vector and hybrid mode, with filters, and never names a backend. The vector database
 * is made in one line by its caller; changing that line moves the application from the in-memory
 * store to FAISS, Chroma, Pinecone, Postgres or a LangChain store, with no other change.
 */
import { type Chunk, type FilterInput, openCollection, type VectorDatabase } from '@zerda/core';

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
    id: 'rivers',
    text: 'River water quality improves when farms reduce fertiliser run-off.',
    docId: 'water-report',
    metadata: { topic: 'water', year: 2020 },
  },
  {
    id: 'desal',
    text: 'Desalination plants turn sea water into drinking water using a lot of electricity.',
    docId: 'water-report',
    metadata: { topic: 'water', year: 2022, reviewed: true },
  },
  {
    id: 'fennec',
    text: 'The fennec fox lives in the sand deserts of North Africa and sleeps through the heat of the day.',
    docId: 'desert-animals',
    metadata: { topic: 'animals', year: 2018 },
  },
  {
    id: 'camel',
    text: 'Camels store fat in their humps and can go for days without drinking water.',
    docId: 'desert-animals',
    metadata: { topic: 'animals', year: 2017 },
  },
  {
    id: 'ar-solar',
    text: 'تحول الألواح الشمسية ضوء الشمس إلى كهرباء للمنازل',
    docId: 'energy-guide-ar',
    metadata: { topic: 'energy', year: 2021, lang: 'ar' },
  },
];

export const questions: Array<{ text: string; filter?: FilterInput }> = [
  { text: 'how is electricity made from sunlight' },
  { text: 'drinking water', filter: { topic: 'water' } },
  { text: 'electricity at night', filter: { year: { $gte: 2020 } } },
  { text: 'desert animals', filter: { reviewed: { $ne: true } } },
  { text: 'الألواح الشمسية كهرباء' },
];

export interface Answer {
  question: string;
  mode: 'keyword' | 'vector' | 'hybrid';
  hits: Array<{ id: string; score: number }>;
}

/** The whole application: index the passages, answer every question in every mode, close. */
export async function runApplication(store: VectorDatabase): Promise<Answer[]> {
  const collection = await openCollection({ store });
  try {
    await collection.add(passages);
    const answers: Answer[] = [];
    for (const question of questions) {
      for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
        const { hits } = await collection.retrieve(question.text, {
          mode,
          k: 3,
          ...(question.filter ? { filter: question.filter } : {}),
        });
        answers.push({
          question: question.text,
          mode,
          hits: hits.map((hit) => ({ id: hit.chunk.id, score: hit.score })),
        });
      }
    }
    return answers;
  } finally {
    await collection.close();
  }
}
