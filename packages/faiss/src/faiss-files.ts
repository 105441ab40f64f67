import { join } from 'node:path';
import {
  BackendError,
  type Chunk,
  ChunkValidationError,
  type DistanceMetric,
  IndexFormatError,
  InvalidArgumentError,
  normalizeChunks,
  throwIfAborted,
} from '@zerda/core';
import { wrapBackendError } from '@zerda/core/backend';
import { readDataFile, readManifestText, writeManifestSave } from '@zerda/core/node';
import type { FaissDriver } from './faiss-driver.js';
import { createIndex, indexFromBytes, indexToBytes } from './faiss-index.js';
import {
  FaissFormatProblem,
  type FaissIndexLayout,
  readIndexLayout,
  setHnswParameters,
} from './faiss-index-format.js';
import type { FaissIndexType, FaissStoreSettings } from './faiss-settings.js';

/*
 * A saved FAISS store is a directory with two files:
 *
 * - `zerda-faiss.json`, the manifest and sidecar: format name and version, metric, index type,
 *   dimension, the HNSW parameters, the name, size and SHA-256 of the index file, and the chunk
 *   stored under each FAISS label (`null` for a deleted HNSW entry not yet compacted away).
 * - `zerda-faiss-<random>.index`, the FAISS index in FAISS's own format (`faiss.read_index`
 *   in Python or C++ reads it; the vectors are unit length for the cosine metric).
 *
 * Saving writes the index file under a fresh name, then the manifest to a temporary file that is
 * renamed over the old one. The rename is the commit: a crash at any point leaves either the
 * previous save or the new one, never a mix. The previous index file is removed after.
 * Loading checks everything (size and checksum of the index file, its FAISS layout against the
 * manifest) before FAISS reads a byte, since faiss-node aborts the process on some FAISS errors.
 */

export const MANIFEST_FILE = 'zerda-faiss.json';
export const FORMAT = 'zerda.faiss-store';
export const FORMAT_VERSION = 1;
const INDEX_FILE_PATTERN = /^zerda-faiss-[0-9a-f]{16}\.index$/;
const METRICS: readonly DistanceMetric[] = ['cosine', 'dot', 'l2'];

export interface FaissManifest {
  format: typeof FORMAT;
  version: typeof FORMAT_VERSION;
  metric: DistanceMetric;
  indexType: FaissIndexType;
  dimension: number;
  /** Live chunks (labels that are not null). */
  count: number;
  /** m, efConstruction and efSearch of an HNSW index. */
  hnsw?: { m: number; efConstruction: number; efSearch: number };
  index: { file: string; bytes: number; sha256: string };
  /** The chunk under each FAISS label, in label order; null for a deleted (tombstoned) entry. */
  labels: (Chunk | null)[];
}

export interface FaissSave {
  manifest: FaissManifest;
  /** The FAISS index file's bytes, checked against the manifest, with the HNSW parameters of `settings`. */
  index: Uint8Array;
  /** The saved chunks in label order, checked. */
  chunks: Chunk[];
  /** The settings to make the store with: the caller's, with what the save fixes. */
  settings: FaissStoreSettings;
  indexPath: string;
}

/**
 * Saves the driver's index and chunks to `directory` (created if needed), atomically replacing
 * any earlier save. A snapshot taken at the call: nothing awaits before it when there is an index.
 */
export async function writeFaissSave(
  driver: FaissDriver,
  dimension: number | undefined,
  directory: string,
  signal?: AbortSignal,
): Promise<void> {
  throwIfAborted(signal);
  if (dimension === undefined) {
    throw new InvalidArgumentError({
      argument: 'store',
      message:
        'an empty store of unknown dimension has nothing to save; set `dimension` or add vectors first',
    });
  }
  const index = driver.index ?? createIndex(await driver.load(), driver.settings, dimension);
  let data: Uint8Array;
  try {
    data = indexToBytes(index);
  } catch (error) {
    throw wrapBackendError('faiss', 'save', error);
  }
  const { metric, indexType, hnsw } = driver.settings;
  const { ids, entries } = driver.labels;
  const labels = ids.map((id) => (id === undefined ? null : entries.get(id)!.chunk));
  const contents = { metric, indexType, dimension, count: entries.size, labels };
  await writeManifestSave({
    directory,
    manifestFile: MANIFEST_FILE,
    dataPrefix: 'zerda-faiss',
    dataExtension: '.index',
    data,
    manifest: (reference): FaissManifest => ({
      format: FORMAT,
      version: FORMAT_VERSION,
      ...(indexType === 'hnsw' ? { ...contents, hnsw: { ...hnsw } } : contents),
      index: reference,
    }),
    dataFileOf: (manifest) => (manifest as { index?: { file?: unknown } }).index?.file,
    signal,
  });
}

/**
 * Reads and checks a save, and checks `settings` against it: the metric, index type, dimension
 * and HNSW M come from the files and settings that contradict them are refused; efSearch and
 * efConstruction may differ from the save's. Anything missing, corrupt, inconsistent or
 * contradicted is an IndexFormatError, found before FAISS reads a byte.
 */
export async function readFaissSave(
  directory: string,
  settings: FaissStoreSettings,
  signal?: AbortSignal,
): Promise<FaissSave> {
  const manifestPath = join(directory, MANIFEST_FILE);
  const manifest = parseManifest(
    await readManifestText(directory, MANIFEST_FILE, 'FAISS store'),
    manifestPath,
  );
  throwIfAborted(signal);
  const indexPath = join(directory, manifest.index.file);
  const index = await readDataFile(directory, manifest.index, 'FAISS index file');
  throwIfAborted(signal);
  let layout: FaissIndexLayout;
  try {
    layout = readIndexLayout(index);
  } catch (error) {
    if (!(error instanceof FaissFormatProblem)) throw error;
    throw new IndexFormatError({
      message: `The FAISS index file cannot be read: ${error.message}`,
      path: indexPath,
      cause: error,
    });
  }
  const mismatch = layoutMismatch(manifest, layout);
  if (mismatch !== undefined) {
    throw new IndexFormatError({
      message: `The FAISS index file does not match the manifest: ${mismatch}`,
      path: indexPath,
    });
  }
  const contradiction = contradictionOf(manifest, settings);
  if (contradiction !== undefined) throw new IndexFormatError({ message: contradiction, path: manifestPath });
  let chunks: Chunk[];
  try {
    chunks = normalizeChunks(manifest.labels.filter((chunk): chunk is Chunk => chunk !== null));
  } catch (error) {
    if (!ChunkValidationError.isInstance(error)) throw error;
    throw new IndexFormatError({
      message: `The saved chunks are invalid: ${error.message}`,
      path: manifestPath,
    });
  }
  const { metric, indexType, dimension } = manifest;
  const hnsw = manifest.hnsw && {
    m: manifest.hnsw.m,
    efConstruction: settings.hnsw?.efConstruction ?? manifest.hnsw.efConstruction,
    efSearch: settings.hnsw?.efSearch ?? manifest.hnsw.efSearch,
  };
  if (
    hnsw &&
    (layout.hnsw?.efSearch !== hnsw.efSearch || layout.hnsw.efConstruction !== hnsw.efConstruction)
  ) {
    setHnswParameters(index, hnsw);
  }
  return {
    manifest,
    index,
    chunks,
    settings: { ...settings, metric, indexType, dimension, ...(hnsw ? { hnsw } : {}) },
    indexPath,
  };
}

/** Puts a save read by `readFaissSave` into the (new, empty) driver of a store made with its settings. */
export async function restoreFaissSave(driver: FaissDriver, save: FaissSave): Promise<void> {
  const { manifest, indexPath } = save;
  const faiss = await driver.load();
  try {
    driver.index = indexFromBytes(faiss, save.index);
  } catch (error) {
    if (BackendError.isInstance(error)) throw error;
    throw new IndexFormatError({
      message: 'FAISS could not read the index file',
      path: indexPath,
      cause: error,
    });
  }
  if (
    driver.index.ntotal() !== manifest.labels.length ||
    driver.index.getDimension() !== manifest.dimension
  ) {
    throw new IndexFormatError({
      message: 'FAISS read an index of another size than the manifest',
      path: indexPath,
    });
  }
  driver.dimension = manifest.dimension;
  let next = 0;
  for (const entry of manifest.labels) {
    if (entry === null) {
      driver.labels.ids.push(undefined);
      driver.labels.deleted++;
    } else driver.labels.append(save.chunks[next++]!);
  }
}

/** What in `settings` contradicts the save, if anything. */
function contradictionOf(manifest: FaissManifest, settings: FaissStoreSettings): string | undefined {
  const expected = settings.dimension ?? settings.embedder?.dimension;
  if (settings.metric !== undefined && settings.metric !== manifest.metric) {
    return `The saved store uses the ${manifest.metric} metric, the settings ask for ${settings.metric}`;
  }
  if (settings.indexType !== undefined && settings.indexType !== manifest.indexType) {
    return `The saved store is a ${manifest.indexType} index, the settings ask for ${settings.indexType}`;
  }
  if (expected !== undefined && expected !== manifest.dimension) {
    return `The saved store has dimension ${manifest.dimension}, the settings or embedder ${expected}`;
  }
  if (settings.hnsw?.m !== undefined && settings.hnsw.m !== manifest.hnsw?.m) {
    return `The saved HNSW index has M ${manifest.hnsw?.m}, the settings ask for ${settings.hnsw.m}`;
  }
  return undefined;
}

function layoutMismatch(manifest: FaissManifest, layout: FaissIndexLayout): string | undefined {
  if (layout.type !== manifest.indexType)
    return `a ${layout.type} index, the manifest says ${manifest.indexType}`;
  const metric = manifest.metric === 'l2' ? 'l2' : 'ip';
  if (layout.metric !== metric)
    return `metric ${layout.metric}, the manifest's ${manifest.metric} needs ${metric}`;
  if (layout.dimension !== manifest.dimension) {
    return `dimension ${layout.dimension}, the manifest says ${manifest.dimension}`;
  }
  if (layout.count !== manifest.labels.length) {
    return `${layout.count} vectors, the manifest has ${manifest.labels.length} labels`;
  }
  if (manifest.hnsw !== undefined && layout.hnsw?.m !== manifest.hnsw.m) {
    return `HNSW M ${layout.hnsw?.m}, the manifest says ${manifest.hnsw.m}`;
  }
  return undefined;
}

function parseManifest(text: string, path: string): FaissManifest {
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
  if (manifest.format !== FORMAT) return fail(`Not a Zerda FAISS store (format ${String(manifest.format)})`);
  if (manifest.version !== FORMAT_VERSION) {
    return fail(
      `Format version ${String(manifest.version)} is not supported (this version of @zerda/faiss reads ${FORMAT_VERSION})`,
    );
  }
  if (!METRICS.includes(manifest.metric as DistanceMetric))
    return fail(`Unknown metric ${String(manifest.metric)}`);
  if (manifest.indexType !== 'flat' && manifest.indexType !== 'hnsw') {
    return fail(`Unknown index type ${String(manifest.indexType)}`);
  }
  if (!isPositiveInteger(manifest.dimension)) return fail('The dimension must be a positive integer');
  if (!isCount(manifest.count)) return fail('The count must be a non-negative integer');
  const hnsw = manifest.hnsw as Record<string, unknown> | undefined;
  if (manifest.indexType === 'hnsw') {
    if (
      hnsw === null ||
      typeof hnsw !== 'object' ||
      !isPositiveInteger(hnsw.m) ||
      !isPositiveInteger(hnsw.efConstruction) ||
      !isPositiveInteger(hnsw.efSearch)
    ) {
      return fail('The HNSW parameters are missing or invalid');
    }
  } else if (hnsw !== undefined) return fail('A flat index has no HNSW parameters');
  const index = manifest.index as Record<string, unknown> | null;
  if (
    index === null ||
    typeof index !== 'object' ||
    typeof index.file !== 'string' ||
    !INDEX_FILE_PATTERN.test(index.file) ||
    !isCount(index.bytes) ||
    typeof index.sha256 !== 'string'
  ) {
    return fail('The manifest does not name a valid index file');
  }
  if (!Array.isArray(manifest.labels)) return fail('The manifest has no labels');
  let live = 0;
  for (const entry of manifest.labels) {
    if (entry === null) continue;
    if (typeof entry !== 'object' || Array.isArray(entry))
      return fail('A label holds something other than a chunk');
    live++;
  }
  if (live !== manifest.count)
    return fail(`The manifest should hold ${String(manifest.count)} chunks, it holds ${live}`);
  if (manifest.indexType === 'flat' && live !== manifest.labels.length) {
    return fail('A flat index has no deleted entries');
  }
  return manifest as unknown as FaissManifest;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
