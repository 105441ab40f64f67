// A process that writes to a collection whose keyword side is in Postgres (reached over the wire)
// until it is killed: the victim of postgres-collection-crash.test.ts. Arguments: connection
// string, storage folder, table, run number. Prints 'ready', then for each write 'adding <ids>' /
// 'deleting <ids>' before it starts and 'add <ids>' / 'del <ids>' once it has returned.
import { HashEmbedder, openCollection } from '@zerda/core';
import { createFileStorage } from '@zerda/core/node';
import pg from 'pg';
import { createPostgresStore } from '../postgres-store.js';

const [url, directory, table, run] = process.argv.slice(2) as [string, string, string, string];
const pool = new pg.Pool({ connectionString: url, max: 1 });
const collection = await openCollection({
  store: createPostgresStore({
    pool,
    table,
    embedder: new HashEmbedder({ dimension: 16 }),
    index: 'exact',
    sparse: true,
  }),
  storage: createFileStorage(directory),
  keyword: 'database',
  checkpointEvery: 5,
});
process.stdout.write('ready\n');
const topics = ['solar power panels', 'wind turbine blades', 'river water mills', 'library catalogue'];
for (let round = 0; ; round++) {
  const ids: string[] = [];
  const items = [];
  for (let i = 0; i < 20; i++) {
    const id = `r${run}-${round}-${i}`;
    ids.push(id);
    // Lengths vary, so the average length (and the encoding) moves with every batch.
    items.push({
      id,
      text: `${topics[i % 4]} ${'extra words '.repeat((round + i) % 7)}chunk ${i} run ${run}`,
    });
  }
  process.stdout.write(`adding ${ids.join(' ')}\n`);
  await collection.add(items);
  process.stdout.write(`add ${ids.join(' ')}\n`);
  if (round >= 2 && round % 3 === 2) {
    const gone = [`r${run}-${round - 2}-0`, `r${run}-${round - 2}-1`];
    process.stdout.write(`deleting ${gone.join(' ')}\n`);
    await collection.delete(gone);
    process.stdout.write(`del ${gone.join(' ')}\n`);
  }
}
