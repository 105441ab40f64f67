import type { Chunk } from '@zerda/core';
import type {
  DriverCapabilities,
  DriverListOptions,
  DriverListPage,
  DriverMatch,
  DriverQueryOptions,
  VectorDriver,
  VectorRecord,
} from '@zerda/core/backend';
import { type FaissFilter, faissFilterConvention, matchesDocIdFilter } from './faiss-filter.js';
import {
  addVectors,
  createIndex,
  searchPassing,
  toFaissValues,
  vectorsOf,
  WRITE_BATCH,
  withoutRows,
} from './faiss-index.js';
import { copyChunk, FaissLabels } from './faiss-labels.js';
import { type FaissIndex, type FaissModule, loadFaissModule } from './faiss-module.js';
import { type FaissIndexSettings, type FaissStoreSettings, resolveIndexSettings } from './faiss-settings.js';

/** FAISS's removeIds tests each vector against the whole list; above this product, rebuild instead. */
const REMOVE_IDS_WORK = 50_000_000;

/**
 * FAISS holds vectors under consecutive integer labels; the driver keeps each chunk beside its
 * label (`labels`). A flat index removes vectors at once (later labels shift down); HNSW cannot,
 * so its deleted labels are tombstones until the graph is rebuilt (`compact`).
 */
export class FaissDriver implements VectorDriver<FaissFilter> {
  readonly specificationVersion = 'v2' as const;
  readonly name = 'faiss';
  readonly filterConvention = faissFilterConvention;
  readonly capabilities: DriverCapabilities;
  readonly settings: FaissIndexSettings;
  dimension: number | undefined;
  module: FaissModule | undefined;
  index: FaissIndex | undefined;
  /** HNSW only: an exact flat index over the same labels, built when a search first needs it. */
  exact: FaissIndex | undefined;
  readonly labels = new FaissLabels();
  /** Cosine vectors are stored at unit length and searched by inner product. */
  readonly #normalize: boolean;
  /** The query as faiss-node takes it: one array for every search. */
  readonly #queryValues: number[] = [];
  /** The stored vectors while a listing with vectors goes on (read once, not per page); any write drops them. */
  #listedVectors: Float32Array | undefined;

  constructor(settings: FaissStoreSettings) {
    this.settings = resolveIndexSettings(settings);
    this.module = settings.client;
    const { metric } = this.settings;
    this.#normalize = metric === 'cosine';
    // l2 scores are FAISS's squared distance.
    const scoreConversion = metric === 'l2' ? 'squared-euclidean-distance' : 'similarity';
    this.capabilities = Object.freeze({ metric, scoreConversion, persistent: false });
  }

  async upsert(records: readonly VectorRecord[]): Promise<void> {
    const faiss = await this.load();
    // From here on nothing awaits, so no other call sees the batch half-written.
    const dimension = this.dimension ?? records[0]!.vector.length;
    this.index ??= createIndex(faiss, this.settings, dimension);
    const index = this.index;
    this.dimension = dimension;
    this.labels.remove(this.labels.labelsOf(records.map((record) => record.id)));
    for (let start = 0; start < records.length; start += WRITE_BATCH) {
      const batch = records.slice(start, start + WRITE_BATCH);
      const values = toFaissValues(
        batch.map((record) => record.vector),
        dimension,
        this.#normalize,
      );
      index.add(values);
      this.exact?.add(values);
      for (const { vector: _, ...chunk } of batch) this.labels.append(chunk);
    }
    this.afterWrite(faiss);
  }

  /**
   * The nearest chunks that pass the filter. FAISS is asked for more than `topK` when tombstones
   * or the filter take some of its answers. An HNSW graph reaches only part of a large index from
   * one query (about `efSearch` nodes); when that part holds fewer than `topK` passing chunks, the
   * search is answered exactly from a flat copy of the vectors (built at the first such search,
   * kept in step with later writes), so a selective filter still gets its `topK` best hits.
   */
  async query(vector: Float32Array, options: DriverQueryOptions<FaissFilter>): Promise<DriverMatch[]> {
    const index = this.index;
    const { entries, ids } = this.labels;
    if (index === undefined || entries.size === 0) return [];
    const allowed = options.filter === undefined ? undefined : new Set(options.filter.docIdFilter);
    const passes = (chunk: Chunk) => allowed === undefined || matchesDocIdFilter(allowed, chunk);
    let candidates = entries.size;
    if (allowed !== undefined) {
      candidates = 0;
      for (const { chunk } of entries.values()) if (passes(chunk)) candidates++;
    }
    const want = Math.min(options.topK, candidates);
    if (want === 0) return [];
    const query = toFaissValues([vector], this.dimension!, this.#normalize, this.#queryValues);
    // Expect passing chunks in the proportion they hold of the index.
    const search = { want, share: candidates / ids.length, approximate: this.settings.indexType === 'hnsw' };
    const passesLabel = (label: number) => {
      const chunk = this.labels.chunkAt(label);
      return chunk !== undefined && passes(chunk);
    };
    let found = searchPassing(index, query, search, passesLabel);
    if (found.length < want) {
      found = searchPassing(this.exactIndex(), query, { ...search, approximate: false }, passesLabel);
    }
    return found.map(({ label, score }) => ({
      id: ids[label]!,
      score,
      chunk: copyChunk(this.labels.chunkAt(label)!),
    }));
  }

  async get(ids: readonly string[]): Promise<Chunk[]> {
    return this.labels.labelsOf(ids).map((label) => copyChunk(this.labels.chunkAt(label)!));
  }

  async count(): Promise<number> {
    return this.labels.entries.size;
  }

  async delete(ids: readonly string[]): Promise<number> {
    const labels = this.labels.labelsOf(ids);
    if (labels.length === 0) return 0;
    const faiss = await this.load();
    this.labels.remove(labels);
    this.afterWrite(faiss);
    return labels.length;
  }

  /**
   * Pages in label order; the cursor is the label to go on from. With `includeVectors`, the
   * vectors as FAISS holds them (for 'cosine', scaled to unit length), read from the index
   * (flat or HNSW: both keep them whole; faiss-node has no `reconstruct`) once per listing.
   */
  async list({ cursor, limit, includeVectors }: DriverListOptions): Promise<DriverListPage> {
    const chunks: Chunk[] = [];
    const vectors: Float32Array[] = [];
    const source = includeVectors ? (this.exact ?? this.index) : undefined;
    if (source !== undefined) this.#listedVectors ??= vectorsOf(source);
    const stored = source && this.#listedVectors;
    const dimension = this.dimension!;
    let label = cursor === undefined ? 0 : Number(cursor);
    for (; label < this.labels.ids.length && chunks.length < limit; label++) {
      const chunk = this.labels.chunkAt(label);
      if (chunk === undefined) continue;
      chunks.push(copyChunk(chunk));
      if (stored) vectors.push(stored.slice(label * dimension, (label + 1) * dimension));
    }
    const page = stored ? { chunks, vectors } : { chunks };
    if (label < this.labels.ids.length) return { ...page, nextCursor: String(label) };
    this.#listedVectors = undefined; // the listing is over: the copy is not kept
    return page;
  }

  async load(): Promise<FaissModule> {
    this.module ??= await loadFaissModule();
    return this.module;
  }

  /**
   * Drops the tombstones: FAISS's removeIds where it is cheap (flat), else a rebuilt index (HNSW
   * cannot remove). Labels after a dropped one shift down, as FAISS shifts the vectors.
   */
  compact(faiss: FaissModule): number {
    const removed = this.labels.tombstones();
    const index = this.index!;
    const dimension = this.dimension!;
    if (this.settings.indexType === 'hnsw' || removed.length * index.ntotal() > REMOVE_IDS_WORK) {
      const kept = withoutRows(vectorsOf(index), dimension, new Set(removed));
      this.index = createIndex(faiss, this.settings, dimension);
      addVectors(this.index, kept, dimension);
      this.exact = undefined;
    } else index.removeIds(removed);
    this.labels.dropTombstones();
    this.#listedVectors = undefined;
    this.labels.checkAgainst(this.index!.ntotal());
    return removed.length;
  }

  private exactIndex(): FaissIndex {
    if (this.settings.indexType === 'flat') return this.index!;
    if (this.exact === undefined) {
      this.exact = createIndex(this.module!, this.settings, this.dimension!, true);
      addVectors(this.exact, vectorsOf(this.index!), this.dimension!);
    }
    return this.exact;
  }

  /** Deleted labels are tombstones; a flat index drops them at once, HNSW past `compactRatio`. */
  private afterWrite(faiss: FaissModule): void {
    this.#listedVectors = undefined;
    const ratio = this.settings.indexType === 'flat' ? 0 : this.settings.compactRatio;
    const { deleted, ids } = this.labels;
    if (deleted > 0 && deleted >= ratio * ids.length) this.compact(faiss);
    else this.labels.checkAgainst(this.index?.ntotal() ?? 0);
  }
}
