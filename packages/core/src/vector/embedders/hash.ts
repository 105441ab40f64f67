/**
 * FNV-1a over UTF-16 code units (one step per unit), finished with murmur3's fmix32
 * avalanche, because raw FNV-1a mixes the low bits of short inputs poorly and those pick the
 * bucket. 32-bit integer arithmetic only (`Math.imul`), so results are identical on every
 * platform and run.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** The starting state for a hash family: one per seed and feature kind, so kinds never collide by construction. */
export function hashStart(seed: number, kind: number): number {
  let h = FNV_OFFSET;
  h = hashUnit(h, seed & 0xffff);
  h = hashUnit(h, (seed >>> 16) & 0xffff);
  return hashUnit(h, kind);
}

/** Folds one 16-bit code unit into the state. */
export function hashUnit(h: number, unit: number): number {
  return Math.imul(h ^ unit, FNV_PRIME);
}

/** Folds `text[start..end)` into the state, without allocating a substring. */
export function hashRange(h: number, text: string, start: number, end: number): number {
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}

/** murmur3's fmix32: every input bit affects every output bit. Returns an unsigned 32-bit value. */
export function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash of a whole string in the family started by `start`. */
export function hashString(start: number, text: string): number {
  return finish(hashRange(start, text, 0, text.length));
}
