import { BackendError, type Chunk, type DistanceMetric, InvalidArgumentError } from '@zerda/core';
import type {
  DriverCapabilities,
  DriverListOptions,
  DriverListPage,
  DriverMatch,
  DriverQueryOptions,
  VectorDriver,
  VectorRecord,
} from '@zerda/core/backend';
import type { FaissIndexType } from './faiss-files.js';
import { type FaissFilter, faissFilterConvention, matchesDocIdFilter } from './faiss-filter.js';
import { readIndexLayout, readVectors, withHnswParameters } from './faiss-index-format.js';
import {
  type FaissIndex,
  type FaissModule,
  loadFaissModule,
  METRIC_INNER_PRODUCT,
  METRIC_L2,
} from './faiss-module.js';
import type { FaissStoreSettings } from './faiss-store.js';

/** Vectors per call into faiss-node (which copies them through a JavaScript array). */
const WRITE_BATCH = 8192;
/** FAISS's removeIds tests each vector against the whole list; above this product, rebuild instead. */
const REMOVE_IDS_WORK = 50_000_000;

/**
 * FAISS holds vectors under consecutive integer labels; the driver maps chunk ids to labels and
 * keeps each chunk beside them. A flat index removes vectors at once (later labels shift down);
 * HNSW cannot, so its deleted labels are tombstones until the graph is rebuilt (`compact`).
 */
export class FaissDriver implements VectorDriver<FaissFilter> {
  readonly specificationVersion = 'v2' as const;
  readonly name = 'faiss';
  readonly filterConvention = faissFilterConvention;
  readonly capabilities: DriverCapabilities;
  readonly metric: DistanceMetric;
  readonly indexType: FaissIndexType;
  readonly hnsw: { m: number; efConstruction: number; efSearch: number };
  readonly compactRatio: number;
  dimension: number | undefined;
  module: FaissModule | undefined;
  index: FaissIndex | undefined;
  /** HNSW only: an exact flat index over the same labels, built when a search first needs it. */
  exact: FaissIndex | undefined;
  /** The chunk id under each FAISS label; undefined for a deleted HNSW entry (a tombstone). */
  labelIds: (string | undefined)[] = [];
  readonly entries = new Map<string, { label: number; chunk: Chunk }>();
  deleted = 0;

  constructor(settings: FaissStoreSettings) {
    const { metric = 'cosine', indexType = 'flat', hnsw, compactRatio = 0.25, client } = settings;
    const refuse = (argument: string, value: unknown, message: string): never => {
      throw new InvalidArgumentError({ argument, value, message });
    };
    if (metric !== 'cosine' && metric !== 'dot' && metric !== 'l2')
      refuse('metric', metric, "expected 'cosine', 'dot' or 'l2'");
    if (indexType !== 'flat' && indexType !== 'hnsw')
      refuse('indexType', indexType, "expected 'flat' or 'hnsw'");
    if (hnsw !== undefined && indexType !== 'hnsw') refuse('hnsw', hnsw, "applies to indexType 'hnsw' only");
    const defined = Object.entries(hnsw ?? {}).filter(([, value]) => value !== undefined);
    this.hnsw = { m: 32, efConstruction: 40, efSearch: 64, ...Object.fromEntries(defined) };
    for (const [name, value] of Object.entries(this.hnsw)) {
      if (!(Number.isSafeInteger(value) && value > 0 && value <= 1_000_000)) {
        refuse(`hnsw.${name}`, value, 'expected a positive integer (at most 1,000,000)');
      }
    }
    if (!(compactRatio > 0 && compactRatio <= 1))
      refuse('compactRatio', compactRatio, 'expected a number in (0, 1]');
    this.metric = metric;
    this.indexType = indexType;
    this.compactRatio = compactRatio;
    this.module = client;
    // Cosine vectors are stored at unit length and searched by inner product; l2 is FAISS's squared distance.
    const scoreConversion = metric === 'l2' ? 'squared-euclidean-distance' : 'similarity';
    this.capabilities = Object.freeze({ metric, scoreConversion, persistent: false });
  }

  async upsert(records: readonly VectorRecord[]): Promise<void> {
    const faiss = await this.load();
    // From here on nothing awaits, so no other call sees the batch half-written.
    const dimension = this.dimension ?? records[0]!.vector.length;
    this.index ??= this.newIndex(faiss, dimension);
    const index = this.index;
    this.dimension = dimension;
    this.removeLabels(records.flatMap((record) => this.entries.get(record.id)?.label ?? []));
    for (let start = 0; start < records.length; start += WRITE_BATCH) {
      const batch = records.slice(start, start + WRITE_BATCH);
      const values = this.toValues(batch.map((record) => record.vector));
      index.add(values);
      this.exact?.add(values);
      for (const { vector: _, ...chunk } of batch) {
        this.entries.set(chunk.id, { label: this.labelIds.length, chunk });
        this.labelIds.push(chunk.id);
      }
    }
    this.compactIfNeeded(faiss);
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
    if (index === undefined || this.entries.size === 0) return [];
    const allowed = options.filter === undefined ? undefined : new Set(options.filter.docIdFilter);
    const passes = (chunk: Chunk) => allowed === undefined || matchesDocIdFilter(allowed, chunk);
    let candidates = this.entries.size;
    if (allowed !== undefined) {
      candidates = 0;
      for (const { chunk } of this.entries.values()) if (passes(chunk)) candidates++;
    }
    const want = Math.min(options.topK, candidates);
    if (want === 0) return [];
    const query = this.toValues([vector]);
    let found = this.searchIndex(index, query, want, candidates, passes, this.indexType === 'hnsw');
    if (found.length < want)
      found = this.searchIndex(this.exactIndex(), query, want, candidates, passes, false);
    return found.map(({ label, score }) => ({
      id: this.labelIds[label]!,
      score,
      chunk: copyChunk(this.entries.get(this.labelIds[label]!)!.chunk),
    }));
  }

  async get(ids: readonly string[]): Promise<Chunk[]> {
    return ids.flatMap((id) => {
      const entry = this.entries.get(id);
      return entry === undefined ? [] : [copyChunk(entry.chunk)];
    });
  }

  async count(): Promise<number> {
    return this.entries.size;
  }

  async delete(ids: readonly string[]): Promise<number> {
    const labels = ids.flatMap((id) => this.entries.get(id)?.label ?? []);
    if (labels.length === 0) return 0;
    const faiss = await this.load();
    this.removeLabels(labels);
    this.compactIfNeeded(faiss);
    return labels.length;
  }

  /** Pages in label order; the cursor is the label to go on from. */
  async list({ cursor, limit }: DriverListOptions): Promise<DriverListPage> {
    const chunks: Chunk[] = [];
    let label = cursor === undefined ? 0 : Number(cursor);
    for (; label < this.labelIds.length && chunks.length < limit; label++) {
      const id = this.labelIds[label];
      if (id !== undefined) chunks.push(copyChunk(this.entries.get(id)!.chunk));
    }
    return label < this.labelIds.length ? { chunks, nextCursor: String(label) } : { chunks };
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
    const removed = this.labelIds.flatMap((id, label) => (id === undefined ? [label] : []));
    const index = this.index!;
    if (this.indexType === 'hnsw' || removed.length * index.ntotal() > REMOVE_IDS_WORK) {
      this.index = this.rebuiltIndex(faiss, index, new Set(removed));
      this.exact = undefined;
    } else index.removeIds(removed);
    this.labelIds = this.labelIds.filter((id) => id !== undefined);
    this.labelIds.forEach((id, label) => {
      this.entries.get(id!)!.label = label;
    });
    this.deleted = 0;
    this.checkConsistency();
    return removed.length;
  }

  newIndex(faiss: FaissModule, dimension: number): FaissIndex {
    const metric = this.metric === 'l2' ? METRIC_L2 : METRIC_INNER_PRODUCT;
    if (this.indexType === 'flat') {
      return metric === METRIC_L2 ? new faiss.IndexFlatL2(dimension) : new faiss.IndexFlatIP(dimension);
    }
    // The factory sets FAISS's defaults (efConstruction 40, efSearch 16) and faiss-node has no
    // way to change them, so they are written into the (empty) index's serialised form.
    const empty = faiss.Index.fromFactory(dimension, `HNSW${this.hnsw.m}`, metric).toBuffer();
    const configured = withHnswParameters(empty, this.hnsw);
    return faiss.Index.fromBuffer(
      Buffer.from(configured.buffer, configured.byteOffset, configured.byteLength),
    );
  }

  /**
   * Asks FAISS for the labels nearest to the query that pass, widening `k` until `want` pass or
   * the index is exhausted. For an HNSW index, stops early when the graph returns fewer labels
   * than asked for (it reached all it can), leaving the caller to search exactly.
   */
  private searchIndex(
    index: FaissIndex,
    query: number[],
    want: number,
    candidates: number,
    passes: (chunk: Chunk) => boolean,
    approximate: boolean,
  ): { label: number; score: number }[] {
    const total = index.ntotal();
    // Expect passing chunks in the proportion they hold of the index.
    const share = candidates / total;
    let k = Math.min(total, share === 1 ? want : Math.ceil((want / share) * 1.5) + 8);
    for (;;) {
      const { labels, distances } = index.search(query, k);
      const found: { label: number; score: number }[] = [];
      for (let position = 0; position < labels.length && found.length < want; position++) {
        const id = this.labelIds[labels[position]!];
        if (id !== undefined && passes(this.entries.get(id)!.chunk)) {
          found.push({ label: labels[position]!, score: distances[position]! });
        }
      }
      if (found.length >= want || k >= total) return found;
      if (approximate && labels.some((label) => label < 0)) return found;
      k = Math.min(total, k * 4);
    }
  }

  private exactIndex(): FaissIndex {
    if (this.indexType === 'flat') return this.index!;
    if (this.exact === undefined) {
      const { IndexFlatL2, IndexFlatIP } = this.module!;
      this.exact = this.metric === 'l2' ? new IndexFlatL2(this.dimension!) : new IndexFlatIP(this.dimension!);
      addInBatches(this.exact, readVectors(this.index!.toBuffer()), this.dimension!);
    }
    return this.exact;
  }

  /** Hides labels as tombstones; a flat index drops them at once (`compactIfNeeded`), HNSW past `compactRatio`. */
  private removeLabels(labels: number[]): void {
    for (const label of labels) {
      this.entries.delete(this.labelIds[label]!);
      this.labelIds[label] = undefined;
    }
    this.deleted += labels.length;
  }

  private compactIfNeeded(faiss: FaissModule): void {
    const ratio = this.indexType === 'flat' ? 0 : this.compactRatio;
    if (this.deleted > 0 && this.deleted >= ratio * this.labelIds.length) this.compact(faiss);
    else this.checkConsistency();
  }

  /** A new index of the same type holding the vectors of `index` except the `removed` labels, in order. */
  private rebuiltIndex(faiss: FaissModule, index: FaissIndex, removed: ReadonlySet<number>): FaissIndex {
    const dimension = this.dimension!;
    const bytes = index.toBuffer();
    const vectors = readVectors(bytes, readIndexLayout(bytes));
    const kept = new Float32Array((vectors.length / dimension - removed.size) * dimension);
    let row = 0;
    for (let label = 0; label * dimension < vectors.length; label++) {
      if (!removed.has(label))
        kept.set(vectors.subarray(label * dimension, (label + 1) * dimension), row++ * dimension);
    }
    const rebuilt = this.newIndex(faiss, dimension);
    addInBatches(rebuilt, kept, dimension);
    return rebuilt;
  }

  /** FAISS and the label map must agree; anything else is a bug to report, not hide. */
  private checkConsistency(): void {
    const indexed = this.index?.ntotal() ?? 0;
    if (indexed !== this.labelIds.length || this.labelIds.length - this.deleted !== this.entries.size) {
      throw new BackendError({
        backend: 'faiss',
        operation: 'write',
        message: `the FAISS index holds ${indexed} vectors, the label map ${this.labelIds.length} labels (${this.deleted} deleted) and ${this.entries.size} chunks (a bug: please report it)`,
      });
    }
  }

  /** Vectors as the plain array faiss-node takes, cosine ones scaled to unit length. */
  private toValues(vectors: readonly Float32Array[]): number[] {
    const dimension = this.dimension!;
    const values = new Array<number>(vectors.length * dimension);
    vectors.forEach((vector, row) => {
      let squared = 0;
      if (this.metric === 'cosine') for (let j = 0; j < dimension; j++) squared += vector[j]! * vector[j]!;
      const scale = squared > 0 ? 1 / Math.sqrt(squared) : 1;
      // Rounded to float32 as the in-memory store stores it, so both give the same scores.
      for (let j = 0; j < dimension; j++) values[row * dimension + j] = Math.fround(vector[j]! * scale);
    });
    return values;
  }
}

function addInBatches(index: FaissIndex, vectors: Float32Array, dimension: number): void {
  for (let start = 0; start < vectors.length; start += WRITE_BATCH * dimension) {
    const slice = vectors.subarray(start, start + WRITE_BATCH * dimension);
    const values = new Array<number>(slice.length);
    for (let position = 0; position < slice.length; position++) values[position] = slice[position]!;
    index.add(values);
  }
}

/** A copy the caller may change without touching the stored chunk. */
function copyChunk(chunk: Chunk): Chunk {
  const copy: Chunk = { id: chunk.id, text: chunk.text };
  if (chunk.docId !== undefined) copy.docId = chunk.docId;
  if (chunk.metadata !== undefined) {
    copy.metadata = Object.fromEntries(
      Object.entries(chunk.metadata).map(([key, value]) => [key, Array.isArray(value) ? [...value] : value]),
    );
  }
  return copy;
}
