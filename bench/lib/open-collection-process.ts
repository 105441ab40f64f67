import { benchEmbedder, openSaved } from './collection-settings.js';

/*
 * Opens the saved collection in the folder given as argument, as a process that starts would, and
 * prints the open's wall and CPU time as JSON: the collection bench runs it in new processes, since
 * its own heap (the corpus, its embeddings) makes every collection of garbage during an open slower
 * than in an application that opens its collection as it starts.
 */
const directory = process.argv[2];
if (directory === undefined) throw new Error('usage: open-collection-process.ts <folder>');
const embedder = benchEmbedder();
const cpuStarted = process.cpuUsage();
const started = performance.now();
const collection = await openSaved(directory, embedder);
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpuStarted);
const chunks = await collection.count();
await collection.close();
process.stdout.write(`${JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, chunks })}\n`);
