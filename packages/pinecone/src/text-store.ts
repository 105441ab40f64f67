/**
 * Somewhere other than Pinecone's metadata to keep chunk texts: for texts that would take a
 * record past Pinecone's 40 KB of metadata, or that should not live in the index. The store
 * writes texts before their vectors (a search never finds a vector whose text is missing),
 * reads them for the hits of a search, and deletes them after their vectors. Ids are the chunk
 * ids, so give each namespace its own TextStore.
 */
export interface TextStore {
  setTexts(
    entries: ReadonlyArray<{ id: string; text: string }>,
    options?: { signal?: AbortSignal },
  ): Promise<void>;
  /** The texts of the ids it has; ids it lacks are left out. */
  getTexts(ids: readonly string[], options?: { signal?: AbortSignal }): Promise<Map<string, string>>;
  deleteTexts(ids: readonly string[], options?: { signal?: AbortSignal }): Promise<void>;
}

/** A TextStore in a Map, for tests and single-process use. */
export function createMapTextStore(): TextStore & { readonly size: number } {
  const texts = new Map<string, string>();
  return {
    get size() {
      return texts.size;
    },
    async setTexts(entries) {
      for (const { id, text } of entries) texts.set(id, text);
    },
    async getTexts(ids) {
      const found = new Map<string, string>();
      for (const id of ids) {
        const text = texts.get(id);
        if (text !== undefined) found.set(id, text);
      }
      return found;
    },
    async deleteTexts(ids) {
      for (const id of ids) texts.delete(id);
    },
  };
}
