import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HashEmbedder, ZerdaError } from '@zerda/core';
import { type AnalyzerName, isAnalyzerName, namedAnalyzers } from '../analyzers.js';
import { type BackendName, type BackendOptions, knownBackends } from './backends.js';

/*
 * A `zerda` store folder is a collection's file storage (`@zerda/core/node`'s createFileStorage:
 * zerda-collection.json, its blobs and log, zerda-collection.lock while a writer holds it) plus
 * this config, zerda-store.json, which says how to open the same collection again: the backend and
 * its options, the analyser, the embedder and its dimension, BM25's parameters and how documents
 * were split. The collection keeps the chunks, the BM25 index and (for backends that keep nothing
 * across restarts, like memory and faiss) the vectors; every add it acknowledges is durable.
 */

export const STORE_CONFIG = 'zerda-store.json';
export const STORE_FORMAT = 'zerda.store';
export const STORE_FORMAT_VERSION = 2;

export interface StoreConfig {
  format: typeof STORE_FORMAT;
  version: typeof STORE_FORMAT_VERSION;
  backend: { name: BackendName; options: BackendOptions };
  /** The analyser of BM25 and of the hash embedder: its `zerda` name and its configuration string. */
  analyzer: { name: AnalyzerName; signature: string };
  embedder: { name: 'hash'; dimension: number; signature: string };
  keyword: { k1: number; b: number };
  vector: { metric: 'cosine' };
  /** How documents were split (the settings of the last run that wrote). */
  chunking: { unit: 'words'; size: number; overlap: number };
  createdAt: string;
  updatedAt: string;
}

/** The settings of a new store. */
export interface StoreSettings {
  backend: BackendName;
  backendOptions: BackendOptions;
  analyzer: AnalyzerName;
  dimension: number;
  k1: number;
  b: number;
  chunking: { size: number; overlap: number };
}

/** No store at the path, one this version does not read, or one with other settings. */
export class StoreError extends ZerdaError {
  constructor(
    message: string,
    readonly path: string,
    cause?: unknown,
    /** True when there is no store at all (no config). */
    readonly missing = false,
  ) {
    super({ message, cause }, 'StoreError');
  }
}

/** The config of the store at `directory`; a missing or foreign one is a StoreError. */
export async function readStoreConfig(directory: string): Promise<StoreConfig> {
  const path = join(directory, STORE_CONFIG);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? error.code : undefined;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new StoreError(
        `no zerda store at ${directory} (${STORE_CONFIG} not found); create one with: zerda index <files or folders> --store ${directory}`,
        directory,
        error,
        true,
      );
    }
    throw new StoreError(`the store config ${path} cannot be read (${String(code ?? error)})`, path, error);
  }
  let value: Partial<StoreConfig>;
  try {
    value = JSON.parse(text) as Partial<StoreConfig>;
  } catch (error) {
    throw new StoreError(`the store config ${path} is not valid JSON`, path, error);
  }
  if (value?.format !== STORE_FORMAT) {
    throw new StoreError(`${path} is not a zerda store config (format ${String(value?.format)})`, path);
  }
  if (value.version !== STORE_FORMAT_VERSION) {
    throw new StoreError(
      `the store at ${directory} has format version ${String(value.version)}; this zerda reads version ${STORE_FORMAT_VERSION} (index it again with --overwrite)`,
      path,
    );
  }
  const config = value as StoreConfig;
  if (!knownBackends.includes(config.backend?.name)) {
    throw new StoreError(
      `the store at ${directory} names an unknown backend '${String(config.backend?.name)}'`,
      path,
    );
  }
  if (!isAnalyzerName(config.analyzer?.name)) {
    throw new StoreError(
      `the store at ${directory} names an unknown analyser '${String(config.analyzer?.name)}'`,
      path,
    );
  }
  if (!(Number.isSafeInteger(config.embedder?.dimension) && config.embedder.dimension > 0)) {
    throw new StoreError(`the store config ${path} has no valid embedder dimension`, path);
  }
  return config;
}

/** The config of a store with `settings` (keeping an existing store's creation time). */
export function makeStoreConfig(settings: StoreSettings, existing?: StoreConfig): StoreConfig {
  const analyzer = namedAnalyzers[settings.analyzer]();
  const embedder = new HashEmbedder({ dimension: settings.dimension, analyzer });
  const now = new Date().toISOString();
  return {
    format: STORE_FORMAT,
    version: STORE_FORMAT_VERSION,
    backend: { name: settings.backend, options: settings.backendOptions },
    analyzer: { name: settings.analyzer, signature: analyzer.name },
    embedder: { name: 'hash', dimension: settings.dimension, signature: embedder.name },
    keyword: { k1: settings.k1, b: settings.b },
    vector: { metric: 'cosine' },
    chunking: { unit: 'words', ...settings.chunking },
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
}

export function checkSameSettings(config: StoreConfig, settings: StoreSettings, directory: string): void {
  const differences: string[] = [];
  if (config.backend.name !== settings.backend)
    differences.push(`backend ${config.backend.name}, not ${settings.backend}`);
  if (config.analyzer.name !== settings.analyzer)
    differences.push(`analyzer ${config.analyzer.name}, not ${settings.analyzer}`);
  if (config.embedder.dimension !== settings.dimension)
    differences.push(`dimension ${config.embedder.dimension}, not ${settings.dimension}`);
  if (config.keyword.k1 !== settings.k1 || config.keyword.b !== settings.b)
    differences.push(
      `BM25 k1=${config.keyword.k1} b=${config.keyword.b}, not k1=${settings.k1} b=${settings.b}`,
    );
  if (differences.length > 0) {
    throw new StoreError(
      `the store at ${directory} was built with ${differences.join('; ')}: add to it with its own settings, or write a new store (--overwrite)`,
      directory,
    );
  }
}
