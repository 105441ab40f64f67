import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  type Chunk,
  type CollectionSettings,
  type HashEmbedder,
  HybridRetriever,
  InMemoryVectorStore,
  KeywordRetriever,
  openCollection,
  type VectorDatabase,
  VectorRetriever,
} from '@zerda/core';
import { createFileStorage } from '@zerda/core/node';
import { SyntheticCorpus } from '../corpus/synthetic.js';
import { benchEmbedder, DIMENSION, openSaved, whitespaceAnalyzer } from '../lib/collection-settings.js';
import { collectGarbage, formatBytes, measureBuild, percentile, runQueries } from '../lib/measure.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';
import { importFaiss } from './faiss.js';

/*
 * The collection against its two parts wired by hand: adding the corpus (embeddings computed
 * beforehand, so only the writes are timed), retained memory, hybrid query latency, and the open
 * time of a saved collection (file storage: snapshot read, BM25 index and vectors restored).
 */

/** Opens of the saved collection timed per size (the median is reported). */
const OPEN_REPEATS = 3;
/** Fills by hand and into a collection, taken in turn, for the add overhead (medians compared). */
const ADD_PAIRS = 3;
const execFileAsync = promisify(execFile);
/** Chunks a short writing session adds (its log is left for the next open to replay). */
const FEW_WRITES = 10;
const BATCH = 1000;
const TOP_K = 10;

async function runSize(
  size: number,
  options: BenchSuiteOptions,
  corpus: SyntheticCorpus,
): Promise<BenchRow[]> {
  const { log } = options;
  const documents: Chunk[] = corpus.documents(size);
  const queries = corpus.queries(Math.min(options.queries, 200));
  const embedder = benchEmbedder();
  const embeddings: Float32Array[] = [];
  for (let i = 0; i < documents.length; i += 2048) {
    embeddings.push(...(await embedder.embed(documents.slice(i, i + 2048).map((d) => d.text))));
  }
  const rows: BenchRow[] = [];

  collectGarbage();
  const byHand = await fillByHand(
    new InMemoryVectorStore({ dimension: DIMENSION, embedder }),
    documents,
    embeddings,
  );
  const handRow = await queryRow(
    'keyword + vector store by hand',
    size,
    byHand,
    queries,
    `KeywordRetriever.add + InMemoryVectorStore.add in batches of ${BATCH}, HybridRetriever over them`,
  );
  log(
    `  by hand: added in ${(byHand.ms / 1000).toFixed(2)} s, ${formatBytes(byHand.bytes)}, hybrid p50 ${handRow.p50Ms.toFixed(2)} ms`,
  );
  rows.push(handRow);
  byHand.value = undefined as never;
  collectGarbage();

  for (const kind of ['memory storage', 'file storage'] as const) {
    const directory =
      kind === 'file storage' ? await mkdtemp(join(tmpdir(), 'zerda-bench-collection-')) : undefined;
    try {
      const built = await fillCollection(
        {
          store: new InMemoryVectorStore({ dimension: DIMENSION, embedder }),
          ...(directory ? { storage: createFileStorage(directory) } : {}),
        },
        documents,
        embeddings,
      );
      const overhead = ((built.ms / byHand.ms - 1) * 100).toFixed(1);
      const row = await queryRow(
        `zerda collection (${kind})`,
        size,
        built,
        queries,
        `add in batches of ${BATCH}: ${overhead}% time over the parts by hand; memory includes the storage's copy where it keeps one`,
      );
      log(
        `  collection (${kind}): added in ${(built.ms / 1000).toFixed(2)} s (${overhead}% over by hand), ${formatBytes(built.bytes)}, hybrid p50 ${row.p50Ms.toFixed(2)} ms`,
      );
      rows.push(row);
      const closeStarted = performance.now();
      const closeCpuStarted = process.cpuUsage();
      await built.value.close();
      const closeMs = performance.now() - closeStarted;
      const closeCpuMs = cpuMsSince(closeCpuStarted);
      if (directory !== undefined) {
        built.value = undefined as never;
        collectGarbage();
        let openCpuMs = 0;
        const opened = await measureBuild(async () => {
          // CPU time beside wall time: on a loaded machine the wall time mostly measures the others.
          const cpuStarted = process.cpuUsage();
          const collection = await openSaved(directory, embedder);
          openCpuMs = cpuMsSince(cpuStarted);
          return collection;
        });
        await opened.value.close();
        opened.value = undefined as never;
        collectGarbage();
        // One open is noisy on a shared machine (a collection of the heap may land in it or not):
        // more opens, the median reported, each one listed in the note.
        const opens = [{ ms: opened.ms, cpuMs: openCpuMs }];
        for (let i = 1; i < OPEN_REPEATS; i++) {
          const started = performance.now();
          const cpuStarted = process.cpuUsage();
          const again = await openSaved(directory, embedder);
          opens.push({ ms: performance.now() - started, cpuMs: cpuMsSince(cpuStarted) });
          await again.close();
          collectGarbage();
        }
        const { openMs, cpuMs: medianCpuMs, each } = medianOpen(opens);
        log(
          `  reopened a saved collection of ${size.toLocaleString('en-US')} chunks in ${openMs.toFixed(0)} ms, median of ${opens.length} (cpu ${medianCpuMs.toFixed(0)} ms; each: ${each}; snapshot on close took ${closeMs.toFixed(0)} ms, cpu ${closeCpuMs.toFixed(0)} ms), ${formatBytes(opened.bytes)}`,
        );
        rows.push({
          suite: 'collection',
          system: 'zerda collection open (file storage)',
          size,
          buildMs: openMs,
          memoryBytes: opened.bytes,
          quality: { openCpuMs: Math.round(medianCpuMs), closeCpuMs: Math.round(closeCpuMs) },
          notes: `open of a saved collection: snapshot read and checked, BM25 index and ${DIMENSION}-dim vectors restored; median of ${opens.length} opens (${each}), memory retained by the first; snapshot written on close in ${closeMs.toFixed(0)} ms`,
        });
        rows.push(await newProcessOpenRow(size, directory, log));
        // The floor under any open: the blobs an open reads, read and checked, nothing decoded (the
        // chunks' texts are left unread, as an open leaves them).
        const readStarted = performance.now();
        const readCpuStarted = process.cpuUsage();
        const blobs = await createFileStorage(directory).readSnapshot({
          defer: (key) => (key === 'chunk-texts' ? () => {} : undefined),
        });
        const readMs = performance.now() - readStarted;
        const readCpuMs = cpuMsSince(readCpuStarted);
        let snapshotBytes = 0;
        for (const bytes of blobs?.values() ?? []) snapshotBytes += bytes.byteLength;
        log(
          `  read what an open reads of its snapshot alone (${formatBytes(snapshotBytes)}, CRC-32 checked, texts left) in ${readMs.toFixed(0)} ms (cpu ${readCpuMs.toFixed(0)} ms)`,
        );
        rows.push({
          suite: 'collection',
          system: 'snapshot read alone (file storage)',
          size,
          buildMs: readMs,
          memoryBytes: snapshotBytes,
          quality: { openCpuMs: Math.round(readCpuMs) },
          notes: `the floor under an open: the ${formatBytes(snapshotBytes)} of the snapshot an open reads (all but the chunks' texts), read into new memory and CRC-32 checked, nothing decoded`,
        });
        rows.push(await fewWritesRow(size, directory, documents, embeddings, embedder, log));
      }
    } finally {
      if (directory !== undefined) await rm(directory, { recursive: true, force: true });
    }
    collectGarbage();
  }
  rows.push(
    await overheadRow(
      'in-memory store (memory storage)',
      size,
      () => new InMemoryVectorStore({ dimension: DIMENSION, embedder }),
      documents,
      embeddings,
      log,
    ),
  );
  rows.push(...(await faissRows(size, options, documents, embeddings, queries, embedder)));
  return rows;
}

/**
 * The collection's add overhead over the parts by hand, from ADD_PAIRS fills of each taken in turn
 * (by hand, collection, by hand, ...), medians compared: one fill of each swings by ±10 points on
 * a shared machine, and whichever runs second finds the code warm.
 */
async function overheadRow(
  what: string,
  size: number,
  makeStore: () => VectorDatabase,
  documents: Chunk[],
  embeddings: Float32Array[],
  log: (line: string) => void,
): Promise<BenchRow> {
  const hand: number[] = [];
  const collection: number[] = [];
  for (let pair = 0; pair < ADD_PAIRS; pair++) {
    collectGarbage();
    const byHand = await fillByHand(makeStore(), documents, embeddings);
    hand.push(byHand.ms);
    byHand.value = undefined as never;
    collectGarbage();
    const built = await fillCollection({ store: makeStore() }, documents, embeddings);
    collection.push(built.ms);
    await built.value.close();
    built.value = undefined as never;
  }
  collectGarbage();
  const handMs = percentile(hand, 50);
  const collectionMs = percentile(collection, 50);
  const overhead = (collectionMs / handMs - 1) * 100;
  const pairs = hand
    .map((ms, i) => `${(ms / 1000).toFixed(2)}/${((collection[i] as number) / 1000).toFixed(2)} s`)
    .join(', ');
  log(
    `  add overhead over the parts by hand, ${what}: ${overhead.toFixed(1)}% (medians of ${ADD_PAIRS} fills each, by hand/collection: ${pairs})`,
  );
  return {
    suite: 'collection',
    system: `collection add overhead, ${what}`,
    size,
    buildMs: collectionMs,
    quality: { overheadPercent: Number(overhead.toFixed(1)), byHandMs: Math.round(handMs) },
    notes: `median of ${ADD_PAIRS} collection fills against the median of ${ADD_PAIRS} fills of the parts by hand, taken in turn (by hand/collection: ${pairs})`,
  };
}

/**
 * The same comparison over FAISS (a flat index, exact): the keyword index and a FAISS store by
 * hand, against a collection over a FAISS store (memory storage). Skipped where faiss-node is not usable.
 */
async function faissRows(
  size: number,
  options: BenchSuiteOptions,
  documents: Chunk[],
  embeddings: Float32Array[],
  queries: string[],
  embedder: HashEmbedder,
): Promise<BenchRow[]> {
  const faiss = await importFaiss('collection', options.log);
  if (faiss === undefined) return [];
  const makeStore = () => faiss.createFaissStore({ indexType: 'flat', metric: 'cosine', embedder });
  collectGarbage();
  const byHand = await fillByHand(makeStore(), documents, embeddings);
  const handRow = await queryRow(
    'keyword + FAISS store by hand',
    size,
    byHand,
    queries,
    `KeywordRetriever.add + createFaissStore (flat, exact) add in batches of ${BATCH}; memory counts Node's heap, not FAISS's own`,
  );
  byHand.value = undefined as never;
  collectGarbage();
  const built = await fillCollection({ store: makeStore() }, documents, embeddings);
  const overhead = ((built.ms / byHand.ms - 1) * 100).toFixed(1);
  const row = await queryRow(
    'zerda collection over FAISS (memory storage)',
    size,
    built,
    queries,
    `add in batches of ${BATCH}: ${overhead}% time over the parts by hand`,
  );
  options.log(
    `  collection over FAISS (memory storage): added in ${(built.ms / 1000).toFixed(2)} s (${overhead}% over by hand, ${(byHand.ms / 1000).toFixed(2)} s), hybrid p50 ${row.p50Ms.toFixed(2)} ms`,
  );
  await built.value.close();
  built.value = undefined as never;
  return [
    handRow,
    row,
    await overheadRow('FAISS flat (memory storage)', size, makeStore, documents, embeddings, options.log),
  ];
}

/** The keyword index and `store` filled by hand, batch by batch, with a HybridRetriever over them. */
function fillByHand(store: VectorDatabase, documents: Chunk[], embeddings: Float32Array[]) {
  return measureBuild(async () => {
    const keyword = new KeywordRetriever({ analyzer: whitespaceAnalyzer });
    for (let i = 0; i < documents.length; i += BATCH) {
      keyword.add(documents.slice(i, i + BATCH));
      await store.add(documents.slice(i, i + BATCH), { embeddings: embeddings.slice(i, i + BATCH) });
    }
    return new HybridRetriever({ keyword, vector: new VectorRetriever({ store }) });
  });
}

/** A collection opened with `settings` and filled batch by batch. */
function fillCollection(
  settings: Pick<CollectionSettings, 'store' | 'storage'>,
  documents: Chunk[],
  embeddings: Float32Array[],
) {
  return measureBuild(async () => {
    const collection = await openCollection({ ...settings, analyzer: whitespaceAnalyzer });
    for (let i = 0; i < documents.length; i += BATCH) {
      await collection.add(documents.slice(i, i + BATCH), { embeddings: embeddings.slice(i, i + BATCH) });
    }
    return collection;
  });
}

/** A built system's row: its build time and memory, and the latency of its hybrid queries. */
async function queryRow(
  system: string,
  size: number,
  built: {
    ms: number;
    bytes: number;
    value: { retrieve(query: string, options: { k: number }): Promise<{ hits: unknown[] }> };
  },
  queries: string[],
  notes: string,
): Promise<BenchRow & { p50Ms: number }> {
  const timed = await runQueries(
    queries,
    async (q) => (await built.value.retrieve(q, { k: TOP_K })).hits.length,
    {
      budgetMs: 30_000,
    },
  );
  return {
    suite: 'collection',
    system,
    size,
    buildMs: built.ms,
    memoryBytes: built.bytes,
    p50Ms: timed.p50,
    p99Ms: timed.p99,
    qps: timed.qps,
    notes,
  };
}

/**
 * A session of a few writes: open, add FEW_WRITES chunks, close (the short log is left for the next
 * open), reopen (which replays it), and what a checkpoint (the full snapshot a close used to
 * write) takes beside it.
 */
async function fewWritesRow(
  size: number,
  directory: string,
  documents: Chunk[],
  embeddings: Float32Array[],
  embedder: HashEmbedder,
  log: (line: string) => void,
): Promise<BenchRow> {
  const writer = await openSaved(directory, embedder);
  await writer.add(
    documents.slice(0, FEW_WRITES).map((document, i) => ({ ...document, id: `few-${i}` })),
    { embeddings: embeddings.slice(0, FEW_WRITES) },
  );
  let started = performance.now();
  await writer.close();
  const closeMs = performance.now() - started;
  collectGarbage();
  started = performance.now();
  const reader = await openSaved(directory, embedder);
  const reopenMs = performance.now() - started;
  started = performance.now();
  await reader.checkpoint();
  const checkpointMs = performance.now() - started;
  await reader.close();
  collectGarbage();
  log(
    `  ${FEW_WRITES} chunks added: close ${closeMs.toFixed(0)} ms (log left to replay), reopen ${reopenMs.toFixed(0)} ms (replaying it), a full snapshot ${checkpointMs.toFixed(0)} ms`,
  );
  return {
    suite: 'collection',
    system: `close after ${FEW_WRITES} adds, reopen (file storage)`,
    size,
    buildMs: reopenMs,
    quality: { closeMs: Math.round(closeMs), checkpointMs: Math.round(checkpointMs) },
    notes: `a session of ${FEW_WRITES} adds: close leaves the short log (closeMs), the reopen replays it (build column), checkpointMs is the full snapshot a close wrote before`,
  };
}

/**
 * Opens of the saved collection in new processes (bench/lib/open-collection-process.ts), as an
 * application opens its collection when it starts: no corpus or embeddings beside it in the heap.
 */
async function newProcessOpenRow(
  size: number,
  directory: string,
  log: (line: string) => void,
): Promise<BenchRow> {
  const script = fileURLToPath(new URL('../lib/open-collection-process.ts', import.meta.url));
  const opens: Array<{ ms: number; cpuMs: number }> = [];
  for (let i = 0; i < OPEN_REPEATS; i++) {
    // The bench's own flags (tsx, the source condition) minus what only the bench needs.
    const args = [...process.execArgv.filter((flag) => flag !== '--expose-gc'), script, directory];
    const { stdout } = await execFileAsync(process.execPath, args, { maxBuffer: 1 << 20 });
    const result = JSON.parse(stdout.trim().split('\n').at(-1) as string) as {
      ms: number;
      cpuMs: number;
      chunks: number;
    };
    if (result.chunks !== size)
      throw new Error(`the new process opened ${result.chunks} chunks, not ${size}`);
    opens.push(result);
  }
  const { openMs, cpuMs, each } = medianOpen(opens);
  log(
    `  opened in a new process in ${openMs.toFixed(0)} ms, median of ${opens.length} (cpu ${cpuMs.toFixed(0)} ms; each: ${each})`,
  );
  return {
    suite: 'collection',
    system: 'zerda collection open in a new process (file storage)',
    size,
    buildMs: openMs,
    quality: { openCpuMs: Math.round(cpuMs) },
    notes: `the same open as an application's at its start, in a process with nothing else in its heap; median of ${opens.length} (${each})`,
  };
}

/** Timed opens: their median wall and CPU time, and each one for the row's note. */
function medianOpen(opens: ReadonlyArray<{ ms: number; cpuMs: number }>) {
  return {
    openMs: percentile(
      opens.map((open) => open.ms),
      50,
    ),
    cpuMs: percentile(
      opens.map((open) => open.cpuMs),
      50,
    ),
    each: opens.map((open) => `${open.ms.toFixed(0)} ms (cpu ${open.cpuMs.toFixed(0)})`).join(', '),
  };
}

/** User plus system CPU time since `started`, in ms. */
function cpuMsSince(started: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

export const collectionSuite: BenchSuite = {
  name: 'collection',
  defaultSizes: [10_000, 100_000],
  async run(options) {
    const corpus = new SyntheticCorpus();
    const rows: BenchRow[] = [];
    for (const size of options.sizes) {
      options.log(`collection: ${size.toLocaleString('en-US')} chunks`);
      rows.push(...(await runSize(size, options, corpus)));
    }
    return rows;
  },
};
