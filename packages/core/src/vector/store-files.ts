import { join } from 'node:path';
import {
  ChunkValidationError,
  IndexFormatError,
  InvalidArgumentError,
  throwIfAborted,
} from '../errors/index.js';
import { type Chunk, normalizeChunks } from '../model/index.js';
import { readDataFile, readManifestText, writeManifestSave } from '../util/manifest-save.js';
import type { InMemoryStoreSnapshot, InMemoryVectorStoreSettings } from './in-memory-vector-store.js';
import { InMemoryVectorStore } from './in-memory-vector-store.js';
import type { DistanceMetric } from './vector-database.js';

/*
 * A saved in-memory store is a directory with two files:
 *
 * - `zerda-vectors.json`, the manifest: format name and version, metric, dimension, count, the
 *   name, size and SHA-256 of the vectors file, and the chunks in slot order.
 * - `zerda-vectors-<random>.bin`, the vectors: a 24-byte header (magic `ZERDAVEC`, u32 format
 *   version, u32 dimension, u32 count, u8 metric, 3 zero bytes; little-endian) followed by
 *   count x dimension float32 values (little-endian, no padding), in slot order; then, when the
 *   store has an IVF index (`index` in the manifest: lists and trained rows), its lists x
 *   dimension float32 centroids and count int32 list numbers, one per row in slot order. A save
 *   without `index` is what it was before; an older reader refuses one with it (wrong length).
 *
 * Saving writes a new vectors file under a fresh name, then the manifest to a temporary file
 * which is renamed over the old one. The rename is the commit: a crash at any point leaves
 * either the old save or the new one, never a mix. The old vectors file is removed after.
 */

export const MANIFEST_FILE = 'zerda-vectors.json';
const FORMAT = 'zerda.in-memory-vector-store';
export const FORMAT_VERSION = 1;
const MAGIC = 'ZERDAVEC';
const HEADER_BYTES = 24;
const METRIC_CODES: readonly DistanceMetric[] = ['cosine', 'dot', 'l2'];
const VECTORS_FILE_PATTERN = /^zerda-vectors-[0-9a-f]{16}\.bin$/;

/** What a save holds: vectors as stored (unit length for cosine) and chunks, both in slot order. */
export type StoreSnapshot = InMemoryStoreSnapshot;

interface Manifest {
  format: string;
  version: number;
  metric: DistanceMetric;
  dimension: number;
  count: number;
  vectors: { file: string; bytes: number; sha256: string };
  /** The IVF index appended to the vectors file, when the store had one. */
  index?: { type: 'ivf'; lists: number; trainedRows: number };
  chunks: Chunk[];
}

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Writes a snapshot to `directory` (created if needed), atomically replacing any earlier save. */
export async function writeStore(
  directory: string,
  snapshot: StoreSnapshot,
  signal?: AbortSignal,
): Promise<void> {
  const count = snapshot.chunks.length;
  await writeManifestSave({
    directory,
    manifestFile: MANIFEST_FILE,
    dataPrefix: 'zerda-vectors',
    dataExtension: '.bin',
    data: encodeVectors(snapshot, count),
    manifest: (vectors): Manifest => ({
      format: FORMAT,
      version: FORMAT_VERSION,
      metric: snapshot.metric,
      dimension: snapshot.dimension,
      count,
      vectors,
      ...(snapshot.index === undefined
        ? {}
        : {
            index: {
              type: 'ivf' as const,
              lists: snapshot.index.centroids.length / snapshot.dimension,
              trainedRows: snapshot.index.trainedRows,
            },
          }),
      chunks: snapshot.chunks,
    }),
    dataFileOf: (manifest) => (manifest as { vectors?: { file?: unknown } }).vectors?.file,
    signal,
  });
}

/** Reads and checks a save; anything missing, corrupt or inconsistent is an IndexFormatError. */
export async function readStore(directory: string, signal?: AbortSignal): Promise<StoreSnapshot> {
  const manifestPath = join(directory, MANIFEST_FILE);
  const manifest = parseManifest(
    await readManifestText(directory, MANIFEST_FILE, 'vector store'),
    manifestPath,
  );
  throwIfAborted(signal);
  const binary = await readDataFile(directory, manifest.vectors, 'vectors file');
  throwIfAborted(signal);
  const vectorsPath = join(directory, manifest.vectors.file);
  const vectors = decodeVectors(binary, manifest, vectorsPath);
  let chunks: Chunk[];
  try {
    chunks = normalizeChunks(manifest.chunks);
  } catch (error) {
    if (!ChunkValidationError.isInstance(error)) throw error;
    throw new IndexFormatError({
      message: `The saved chunks are invalid: ${error.message}`,
      path: manifestPath,
      cause: error,
    });
  }
  const index = decodeIndex(binary, manifest, vectorsPath);
  return {
    metric: manifest.metric,
    dimension: manifest.dimension,
    vectors,
    chunks,
    ...(index ? { index } : {}),
  };
}

/** The IVF index after the vectors (version 2 saves), checked: every row's list exists. */
function decodeIndex(binary: Uint8Array, manifest: Manifest, path: string): StoreSnapshot['index'] {
  if (manifest.index === undefined) return undefined;
  const { dimension, count } = manifest;
  const { lists, trainedRows } = manifest.index;
  const at = HEADER_BYTES + count * dimension * 4;
  const view = new DataView(binary.buffer, binary.byteOffset, binary.byteLength);
  const centroids = new Float32Array(lists * dimension);
  for (let index = 0; index < centroids.length; index++) {
    centroids[index] = view.getFloat32(at + index * 4, true);
    if (!Number.isFinite(centroids[index]!)) {
      throw new IndexFormatError({
        message: `IVF centroid ${Math.floor(index / dimension)} is not finite`,
        path,
      });
    }
  }
  const assignments = new Int32Array(count);
  const assignmentsAt = at + centroids.length * 4;
  for (let row = 0; row < count; row++) {
    const list = view.getInt32(assignmentsAt + row * 4, true);
    if (list < 0 || list >= lists) {
      throw new IndexFormatError({ message: `Row ${row} is in IVF list ${list}, of ${lists}`, path });
    }
    assignments[row] = list;
  }
  return { centroids, assignments, trainedRows };
}

function parseManifest(text: string, path: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new IndexFormatError({ message: 'The manifest is not valid JSON', path, cause: error });
  }
  const fail = (message: string): never => {
    throw new IndexFormatError({ message, path });
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return fail('The manifest is not an object');
  const manifest = value as Record<string, unknown>;
  if (manifest.format !== FORMAT)
    return fail(`Not a Zerda in-memory vector store (format ${String(manifest.format)})`);
  if (manifest.version !== FORMAT_VERSION) {
    return fail(
      `Format version ${String(manifest.version)} is not supported (this version of Zerda reads ${FORMAT_VERSION})`,
    );
  }
  const index = manifest.index as Record<string, unknown> | undefined;
  if (
    index !== undefined &&
    (index === null ||
      typeof index !== 'object' ||
      index.type !== 'ivf' ||
      !isPositiveInteger(index.lists) ||
      !isCount(index.trainedRows))
  ) {
    return fail('The manifest describes an invalid IVF index');
  }
  if (!METRIC_CODES.includes(manifest.metric as DistanceMetric))
    return fail(`Unknown metric ${String(manifest.metric)}`);
  if (!isPositiveInteger(manifest.dimension)) return fail('The dimension must be a positive integer');
  if (!isCount(manifest.count)) return fail('The count must be a non-negative integer');
  const vectors = manifest.vectors as Record<string, unknown> | null;
  if (
    vectors === null ||
    typeof vectors !== 'object' ||
    typeof vectors.file !== 'string' ||
    !VECTORS_FILE_PATTERN.test(vectors.file) ||
    !isCount(vectors.bytes) ||
    typeof vectors.sha256 !== 'string'
  ) {
    return fail('The manifest does not name a valid vectors file');
  }
  if (!Array.isArray(manifest.chunks) || manifest.chunks.length !== manifest.count) {
    return fail(`The manifest should hold ${String(manifest.count)} chunks`);
  }
  return manifest as unknown as Manifest;
}

function encodeVectors(snapshot: StoreSnapshot, count: number): Uint8Array {
  const { dimension, vectors, index } = snapshot;
  const values = count * dimension;
  const indexBytes = index === undefined ? 0 : index.centroids.length * 4 + count * 4;
  const binary = new Uint8Array(HEADER_BYTES + values * 4 + indexBytes);
  const view = new DataView(binary.buffer);
  for (let index = 0; index < MAGIC.length; index++) binary[index] = MAGIC.charCodeAt(index);
  view.setUint32(8, FORMAT_VERSION, true);
  view.setUint32(12, dimension, true);
  view.setUint32(16, count, true);
  view.setUint8(20, METRIC_CODES.indexOf(snapshot.metric));
  if (littleEndian) {
    binary.set(new Uint8Array(vectors.buffer, vectors.byteOffset, values * 4), HEADER_BYTES);
  } else {
    for (let index = 0; index < values; index++)
      view.setFloat32(HEADER_BYTES + index * 4, vectors[index]!, true);
  }
  if (index !== undefined) {
    let at = HEADER_BYTES + values * 4;
    for (const value of index.centroids) {
      view.setFloat32(at, value, true);
      at += 4;
    }
    for (let row = 0; row < count; row++, at += 4) view.setInt32(at, index.assignments[row]!, true);
  }
  return binary;
}

function decodeVectors(binary: Uint8Array, manifest: Manifest, path: string): Float32Array {
  const fail = (message: string): never => {
    throw new IndexFormatError({ message, path });
  };
  const { dimension, count } = manifest;
  if (binary.byteLength < HEADER_BYTES) return fail('The vectors file is too short for its header');
  const view = new DataView(binary.buffer, binary.byteOffset, binary.byteLength);
  for (let index = 0; index < MAGIC.length; index++) {
    if (binary[index] !== MAGIC.charCodeAt(index)) return fail('Not a Zerda vectors file (bad magic number)');
  }
  if (view.getUint32(8, true) !== FORMAT_VERSION)
    return fail(`Unsupported vectors file version ${view.getUint32(8, true)}`);
  if (view.getUint32(12, true) !== dimension || view.getUint32(16, true) !== count) {
    return fail('The vectors file header does not match the manifest');
  }
  if (METRIC_CODES[view.getUint8(20)] !== manifest.metric)
    return fail('The vectors file metric does not match the manifest');
  const values = count * dimension;
  const indexBytes = manifest.index === undefined ? 0 : (manifest.index.lists * dimension + count) * 4;
  if (binary.byteLength !== HEADER_BYTES + values * 4 + indexBytes)
    return fail('The vectors file has the wrong length');
  const vectors = new Float32Array(values);
  if (littleEndian) {
    new Uint8Array(vectors.buffer).set(binary.subarray(HEADER_BYTES, HEADER_BYTES + values * 4));
  } else {
    for (let index = 0; index < values; index++)
      vectors[index] = view.getFloat32(HEADER_BYTES + index * 4, true);
  }
  for (let index = 0; index < values; index++) {
    if (!Number.isFinite(vectors[index]!)) {
      return fail(`Vector ${Math.floor(index / dimension)} holds a value that is not finite`);
    }
  }
  return vectors;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Saves an in-memory store to `directory` (created if needed): a versioned binary vectors file and
 * a JSON manifest with the chunks. Atomic: a crash leaves the previous save or this one. Taken as a
 * snapshot at the call, so later writes do not leak into it.
 */
export async function saveInMemoryVectorStore(
  store: InMemoryVectorStore,
  directory: string,
  options: { signal?: AbortSignal } = {},
): Promise<void> {
  throwIfAborted(options.signal);
  const snapshot = store.snapshot();
  if (snapshot === undefined) {
    throw new InvalidArgumentError({
      argument: 'store',
      message:
        'an empty store of unknown dimension has nothing to save; set `dimension` or add vectors first',
    });
  }
  await writeStore(directory, snapshot, options.signal);
}

/**
 * Loads a store saved by `saveInMemoryVectorStore`. The metric and dimension come from the files;
 * settings that contradict them (metric, dimension, the embedder's dimension) are refused with an
 * IndexFormatError, as are corrupt, truncated or mismatched files. Quantisation and kernel may
 * differ from the saved store's.
 */
export async function loadInMemoryVectorStore(
  directory: string,
  settings: InMemoryVectorStoreSettings = {},
  options: { signal?: AbortSignal } = {},
): Promise<InMemoryVectorStore> {
  const snapshot = await readStore(directory, options.signal);
  if (settings.metric !== undefined && settings.metric !== snapshot.metric) {
    throw new IndexFormatError({
      message: `The saved store uses the ${snapshot.metric} metric, the settings ask for ${settings.metric}`,
      path: directory,
    });
  }
  const expected = settings.dimension ?? settings.embedder?.dimension;
  if (expected !== undefined && expected !== snapshot.dimension) {
    throw new IndexFormatError({
      message: `The saved store has dimension ${snapshot.dimension}, the settings or embedder ${expected}`,
      path: directory,
    });
  }
  return InMemoryVectorStore.fromSnapshot(snapshot, settings);
}
