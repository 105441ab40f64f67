// A process that writes to a file-backed collection until it is killed: the crash harness's victim.
// Arguments: folder, run number, chunks to add, batch size. Prints 'ready', then for each write
// 'adding <ids>' / 'deleting <ids>' before it starts (its outcome is open until acknowledged) and
// 'add <ids>' / 'del <ids>' once it has returned (acknowledged, hence durable).
import { HashEmbedder, InMemoryVectorStore, openCollection } from '../../index.js';
import { createFileStorage } from '../../node.js';
import { crashChunk } from './crash-chunks.js';

const [directory, run, total, batch] = process.argv.slice(2);
const chunks = Number(total);
const batchSize = Number(batch);
const collection = await openCollection({
  store: new InMemoryVectorStore({ embedder: new HashEmbedder({ dimension: 32 }) }),
  storage: createFileStorage(String(directory)),
  checkpointEvery: 7,
});
process.stdout.write('ready\n');
for (let start = 0, round = 0; start < chunks; start += batchSize, round++) {
  const ids: string[] = [];
  const items = [];
  for (let i = start; i < Math.min(start + batchSize, chunks); i++) {
    const chunk = crashChunk(Number(run), i);
    ids.push(chunk.id);
    items.push(chunk);
  }
  process.stdout.write(`adding ${ids.join(' ')}\n`);
  await collection.add(items);
  process.stdout.write(`add ${ids.join(' ')}\n`);
  if (round % 4 === 3) {
    // Delete a few chunks of an earlier batch of this run.
    const gone = [`r${run}-${start - 2 * batchSize}`, `r${run}-${start - 2 * batchSize + 1}`];
    process.stdout.write(`deleting ${gone.join(' ')}\n`);
    await collection.delete(gone);
    process.stdout.write(`del ${gone.join(' ')}\n`);
  }
}
await collection.close();
process.stdout.write('done\n');
