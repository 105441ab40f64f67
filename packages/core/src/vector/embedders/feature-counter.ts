/**
 * Counts 32-bit feature hashes: an open-addressing table reused from text to text, because a
 * `Map` with keys above 2^30 (boxed numbers) is several times slower on this hot path. The
 * hashes are already well mixed, so their low bits index the table directly.
 */
export class FeatureCounter {
  #keys = new Uint32Array(1024);
  #counts = new Uint32Array(1024);
  /** Slots in use, in insertion order: iteration and reset touch only these. As long as the table, so never full. */
  #used = new Uint32Array(1024);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(hash: number): void {
    // 0 marks an empty slot; the hash 0 is stored as 1 (a harmless merge of two features).
    const key = hash === 0 ? 1 : hash >>> 0;
    const mask = this.#keys.length - 1;
    let slot = key & mask;
    for (;;) {
      const k = this.#keys[slot] as number;
      if (k === key) {
        this.#counts[slot] = (this.#counts[slot] as number) + 1;
        return;
      }
      if (k === 0) break;
      slot = (slot + 1) & mask;
    }
    this.#keys[slot] = key;
    this.#counts[slot] = 1;
    this.#used[this.#size++] = slot;
    if (this.#size * 2 > this.#keys.length) this.#grow();
  }

  /** Calls `fn(hash, count)` for every feature counted since the last reset. */
  forEach(fn: (hash: number, count: number) => void): void {
    for (let i = 0; i < this.#size; i++) {
      const slot = this.#used[i] as number;
      fn(this.#keys[slot] as number, this.#counts[slot] as number);
    }
  }

  reset(): void {
    for (let i = 0; i < this.#size; i++) this.#keys[this.#used[i] as number] = 0;
    this.#size = 0;
  }

  #grow(): void {
    const oldKeys = this.#keys;
    const oldCounts = this.#counts;
    const oldUsed = this.#used;
    const size = this.#size;
    this.#keys = new Uint32Array(oldKeys.length * 2);
    this.#counts = new Uint32Array(oldKeys.length * 2);
    this.#used = new Uint32Array(oldKeys.length * 2);
    this.#size = 0;
    const mask = this.#keys.length - 1;
    for (let i = 0; i < size; i++) {
      const from = oldUsed[i] as number;
      const key = oldKeys[from] as number;
      let slot = key & mask;
      while (this.#keys[slot] !== 0) slot = (slot + 1) & mask;
      this.#keys[slot] = key;
      this.#counts[slot] = oldCounts[from] as number;
      this.#used[this.#size++] = slot;
    }
  }
}
