import { IndexFormatError } from '../errors/index.js';
import type { Chunk } from '../model/index.js';

/*
 * The in-memory store keeps its rows in its own order (a deletion moves the last row into the
 * hole), the collection's chunk table in insertion order. When they differ, the snapshot saves the
 * store's order beside its vector image ('vector-order': per row, u32 little-endian, the index of
 * the row's chunk in the chunk table), so neither side is reordered row by row on close or open.
 */

/**
 * For each of the store's rows, the index of its chunk in `chunks`: null when the orders are the
 * same, undefined when the two do not hold the same ids (the caller falls back to copying rows).
 */
export function storeRowOrder(
  rows: readonly Chunk[],
  chunks: readonly Chunk[],
): Uint32Array | null | undefined {
  if (rows.length !== chunks.length) return undefined;
  let same = true;
  for (let row = 0; row < rows.length && same; row++)
    same = (rows[row] as Chunk).id === (chunks[row] as Chunk).id;
  if (same) return null;
  const index = new Map<string, number>();
  for (let at = 0; at < chunks.length; at++) index.set((chunks[at] as Chunk).id, at);
  const order = new Uint32Array(rows.length);
  for (let row = 0; row < rows.length; row++) {
    const at = index.get((rows[row] as Chunk).id);
    if (at === undefined) return undefined;
    order[row] = at;
  }
  return order;
}

/** The bytes of an order, as saved. */
export function encodeRowOrder(order: Uint32Array): Uint8Array {
  // Little-endian like every blob; typed arrays are little-endian on every platform Zerda runs on.
  return new Uint8Array(order.buffer, order.byteOffset, order.byteLength);
}

/**
 * The chunks in the store's row order, from a saved order (none: the chunk table's own order). An
 * order of the wrong size or that is not a permutation of the chunks is an IndexFormatError.
 */
export function chunksInRowOrder(bytes: Uint8Array | undefined, chunks: Chunk[], path: string): Chunk[] {
  if (bytes === undefined) return chunks;
  const count = chunks.length;
  if (bytes.byteLength !== count * 4) {
    throw new IndexFormatError({
      message: `The collection's vector order holds ${bytes.byteLength} bytes for ${count} chunks (${count * 4} expected)`,
      path,
    });
  }
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  const order = new Uint32Array(aligned.buffer, aligned.byteOffset, count);
  const seen = new Uint8Array(count);
  const rows = new Array<Chunk>(count);
  for (let row = 0; row < count; row++) {
    const at = order[row] as number;
    if (at >= count || seen[at] === 1) {
      throw new IndexFormatError({
        message: `The collection's vector order is damaged (row ${row} names chunk ${at}, ${at >= count ? 'out of range' : 'named twice'})`,
        path,
      });
    }
    seen[at] = 1;
    rows[row] = chunks[at] as Chunk;
  }
  return rows;
}
