// Run in a new process by the persistence tests, which kill it part-way through a save: saves
// a store to <directory> again and again, each time with chunks tagged by a new version number,
// printing "saved <version>" once each save has returned. Usage: save-loop.ts <directory> <first version>
import { createFaissStore } from '../index.js';

const [directory, first] = process.argv.slice(2);
const count = 20_000;
const dimension = 64;
const embeddings = Array.from({ length: count }, (_, row) =>
  Float32Array.from({ length: dimension }, (_, column) => Math.sin(row * 0.37 + column)),
);
for (let version = Number(first); ; version++) {
  const store = createFaissStore({ metric: 'l2' });
  const chunks = Array.from({ length: count }, (_, index) => ({
    id: `c${index}`,
    text: `version ${version}`,
    metadata: { version },
  }));
  await store.add(chunks, { embeddings });
  process.stdout.write(`saving ${version}\n`);
  await store.save(directory!);
  process.stdout.write(`saved ${version}\n`);
}
