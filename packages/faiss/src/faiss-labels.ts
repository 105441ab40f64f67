import { BackendError, type Chunk } from '@zerda/core';

/**
 * The chunks under FAISS's labels. FAISS numbers vectors 0, 1, 2, ... in the order they were
 * added and knows nothing else; this map keeps the chunk (id, text, docId, metadata) of each
 * label, and marks a deleted label a tombstone until the index drops its vector (`dropTombstones`).
 */
export class FaissLabels {
  /** The chunk id under each label; undefined for a tombstone. */
  ids: (string | undefined)[] = [];
  readonly entries = new Map<string, { label: number; chunk: Chunk }>();
  /** Tombstones among `ids`. */
  deleted = 0;

  /** The stored chunk under a label (not a copy), or undefined for a tombstone. */
  chunkAt(label: number): Chunk | undefined {
    const id = this.ids[label];
    return id === undefined ? undefined : this.entries.get(id)!.chunk;
  }

  /** The labels of the stored chunks among `ids`. */
  labelsOf(ids: readonly string[]): number[] {
    return ids.flatMap((id) => this.entries.get(id)?.label ?? []);
  }

  /** Puts a chunk under the next label (the one FAISS gives the next vector added). */
  append(chunk: Chunk): void {
    this.entries.set(chunk.id, { label: this.ids.length, chunk });
    this.ids.push(chunk.id);
  }

  /** Makes the labels tombstones. */
  remove(labels: readonly number[]): void {
    for (const label of labels) {
      this.entries.delete(this.ids[label]!);
      this.ids[label] = undefined;
    }
    this.deleted += labels.length;
  }

  tombstones(): number[] {
    return this.ids.flatMap((id, label) => (id === undefined ? [label] : []));
  }

  /** Drops the tombstones, the labels after each shifting down as FAISS shifts the vectors. */
  dropTombstones(): void {
    this.ids = this.ids.filter((id) => id !== undefined);
    this.ids.forEach((id, label) => {
      this.entries.get(id!)!.label = label;
    });
    this.deleted = 0;
  }

  /** The index and the map must agree; anything else is a bug to report, not hide. */
  checkAgainst(indexed: number): void {
    if (indexed !== this.ids.length || this.ids.length - this.deleted !== this.entries.size) {
      throw new BackendError({
        backend: 'faiss',
        operation: 'write',
        message: `the FAISS index holds ${indexed} vectors, the label map ${this.ids.length} labels (${this.deleted} deleted) and ${this.entries.size} chunks (a bug: please report it)`,
      });
    }
  }
}

/** A copy the caller may change without touching the stored chunk. */
export function copyChunk({ metadata, ...chunk }: Chunk): Chunk {
  if (metadata === undefined) return { ...chunk };
  const entries = Object.entries(metadata).map(([key, value]) => [
    key,
    Array.isArray(value) ? [...value] : value,
  ]);
  return { ...chunk, metadata: Object.fromEntries(entries) };
}
