import {
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackendError } from '@zerda/core';
import { readVectors, setHnswParameters } from './faiss-index-format.js';
import { type FaissIndex, type FaissModule, METRIC_INNER_PRODUCT, METRIC_L2 } from './faiss-module.js';
import type { FaissIndexSettings } from './faiss-settings.js';

/*
 * FAISS indexes made and filled through faiss-node, which takes vectors only as plain number
 * arrays and can neither set HNSW's parameters nor hand vectors back: both go through the index's
 * serialised form (faiss-index-format.ts).
 *
 * That form goes through a file, never faiss-node's `toBuffer` or `fromBuffer`: each of those
 * leaks a full copy of the index in native memory (faiss-node 0.5.1 allocates its IOWriter or
 * IOReader and never frees it), which at a million vectors is gigabytes per save, load or
 * removal. `write` and `read` stream the file with no copy kept.
 */

/** Vectors per call into faiss-node (which copies them through a JavaScript array). */
export const WRITE_BATCH = 8192;

/** An empty index of the settings' type and metric (`flat`: an exact index whatever the type). */
export function createIndex(
  faiss: FaissModule,
  settings: FaissIndexSettings,
  dimension: number,
  flat = settings.indexType === 'flat',
): FaissIndex {
  const metric = settings.metric === 'l2' ? METRIC_L2 : METRIC_INNER_PRODUCT;
  if (flat) return metric === METRIC_L2 ? new faiss.IndexFlatL2(dimension) : new faiss.IndexFlatIP(dimension);
  // The factory sets FAISS's defaults (efConstruction 40, efSearch 16) and faiss-node has no
  // way to change them, so they are written into the (empty) index's serialised form.
  const empty = indexToBytes(faiss.Index.fromFactory(dimension, `HNSW${settings.hnsw.m}`, metric));
  setHnswParameters(empty, settings.hnsw);
  return indexFromBytes(faiss, empty);
}

/** The index's serialised form (FAISS's file format). */
export function indexToBytes(index: FaissIndex): Uint8Array {
  return throughTemporaryFile((path) =>
    onTemporaryFile(() => {
      index.write(path);
      return readFileSync(path);
    }),
  );
}

/** The index that serialised form `bytes` holds (FAISS's own error if it holds none). */
export function indexFromBytes(faiss: FaissModule, bytes: Uint8Array): FaissIndex {
  return throughTemporaryFile((path) => {
    onTemporaryFile(() => writeFileSync(path, bytes));
    return faiss.Index.read(path);
  });
}

/**
 * Runs `use` on the path of a new temporary file, removed afterwards whatever happens. On Linux the
 * file has no name (O_TMPFILE) and is reached through /proc/self/fd: the system frees it when its
 * descriptor closes, so a process killed in mid-save leaves nothing behind (an index file is as
 * large as the index). Elsewhere it lies in a new private folder, removed in a `finally`.
 */
function throughTemporaryFile<T>(use: (path: string) => T): T {
  const descriptor = openUnnamedFile();
  if (descriptor !== undefined) {
    try {
      return use(`/proc/self/fd/${descriptor}`);
    } finally {
      closeSync(descriptor);
    }
  }
  const directory = onTemporaryFile(() => mkdtempSync(join(tmpdir(), 'zerda-faiss-')));
  try {
    return use(join(directory, 'index'));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * Linux's O_TMPFILE (Node does not name it): 020000000 with O_DIRECTORY, on the architectures
 * where that is its value. Undefined elsewhere.
 */
const O_TMPFILE =
  process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64')
    ? 0o20000000 | constants.O_DIRECTORY
    : undefined;

/**
 * A descriptor of a new unnamed file in the temporary folder, readable and writable through
 * /proc/self/fd; undefined where there is none (not Linux, no /proc, a file system without
 * O_TMPFILE, or a folder that cannot be written, which the named file then reports).
 */
function openUnnamedFile(): number | undefined {
  if (O_TMPFILE === undefined) return undefined;
  let descriptor: number | undefined;
  try {
    descriptor = openSync(tmpdir(), O_TMPFILE | constants.O_RDWR, 0o600);
    readlinkSync(`/proc/self/fd/${descriptor}`);
    return descriptor;
  } catch {
    if (descriptor !== undefined) closeSync(descriptor);
    return undefined;
  }
}

/**
 * Runs a step on the temporary file. Its failure (a full or read-only disk) is a BackendError
 * naming the folder, never taken for a fault in the index.
 */
function onTemporaryFile<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    throw new BackendError({
      backend: 'faiss',
      operation: 'temporary file',
      message: `could not write or read a temporary file in ${tmpdir()} (TMPDIR chooses the folder): ${error instanceof Error ? error.message : String(error)}`,
      cause: error,
    });
  }
}

/**
 * Vectors as the plain array faiss-node takes, written into `into` when given (a query reuses
 * one), scaled to unit length when `normalize` and rounded to float32 as the in-memory store
 * stores them, so both give the same scores.
 */
export function toFaissValues(
  vectors: readonly Float32Array[],
  dimension: number,
  normalize: boolean,
  into = new Array<number>(vectors.length * dimension),
): number[] {
  vectors.forEach((vector, row) => {
    let squared = 0;
    if (normalize) for (let j = 0; j < dimension; j++) squared += vector[j]! * vector[j]!;
    const scale = squared > 0 ? 1 / Math.sqrt(squared) : 1;
    for (let j = 0; j < dimension; j++) into[row * dimension + j] = Math.fround(vector[j]! * scale);
  });
  return into;
}

/** Adds count x dimension stored vectors (already scaled), in batches. */
export function addVectors(index: FaissIndex, vectors: Float32Array, dimension: number): void {
  for (let start = 0; start < vectors.length; start += WRITE_BATCH * dimension) {
    index.add(Array.from(vectors.subarray(start, start + WRITE_BATCH * dimension)));
  }
}

/** The vectors an index holds, count x dimension in label order: a copy, read from its serialised form. */
export function vectorsOf(index: FaissIndex): Float32Array {
  return readVectors(indexToBytes(index));
}

/** A copy of count x dimension `vectors` without the rows in `removed`, the others in order. */
export function withoutRows(
  vectors: Float32Array,
  dimension: number,
  removed: ReadonlySet<number>,
): Float32Array {
  const kept = new Float32Array(vectors.length - removed.size * dimension);
  let row = 0;
  for (let label = 0; label * dimension < vectors.length; label++) {
    if (!removed.has(label))
      kept.set(vectors.subarray(label * dimension, (label + 1) * dimension), row++ * dimension);
  }
  return kept;
}

/**
 * The labels nearest to the query that pass, with FAISS's scores, at most `want`: asks for more
 * than `want` when some will not pass (`share` of the index is expected to), widening `k` until
 * `want` pass or the index is exhausted. An approximate (HNSW) search stops early when the graph
 * returns fewer labels than asked for (it reached all it can), leaving the caller to search exactly.
 */
export function searchPassing(
  index: FaissIndex,
  query: number[],
  { want, share, approximate }: { want: number; share: number; approximate: boolean },
  passes: (label: number) => boolean,
): { label: number; score: number }[] {
  const total = index.ntotal();
  let k = Math.min(total, share === 1 ? want : Math.ceil((want / share) * 1.5) + 8);
  for (;;) {
    const { labels, distances } = index.search(query, k);
    const found: { label: number; score: number }[] = [];
    for (let position = 0; position < labels.length && found.length < want; position++) {
      if (labels[position]! >= 0 && passes(labels[position]!))
        found.push({ label: labels[position]!, score: distances[position]! });
    }
    if (found.length >= want || k >= total) return found;
    if (approximate && labels.some((label) => label < 0)) return found;
    k = Math.min(total, k * 4);
  }
}
