// Run in a new process by the persistence tests: loads a saved store and prints the hits of the
// queries in a JSON file. Usage: search-saved-store.ts <directory> <queries.json> <topK>
import { readFile } from 'node:fs/promises';
import { loadFaissStore } from '../index.js';

const [directory, queriesFile, topK] = process.argv.slice(2);
const store = await loadFaissStore(directory!);
const queries = JSON.parse(await readFile(queriesFile!, 'utf8')) as number[][];
const results = [];
for (const query of queries) {
  const { hits } = await store.search(query, { topK: Number(topK) });
  results.push(hits.map((hit) => ({ id: hit.chunk.id, score: hit.score, chunk: hit.chunk })));
}
process.stdout.write(JSON.stringify({ count: await store.count(), stats: store.stats(), results }));
