import { BackendError } from '@zerda/core';
import { describe, expect, it, vi } from 'vitest';
import { createFaissStore } from './faiss-store.js';

// What a user sees when faiss-node is installed but not built (pnpm skipped its install script).
vi.mock('faiss-node', () => {
  throw new Error('Could not locate the bindings file. Tried: build/Release/faiss-node.node');
});

describe('faiss-node missing or not built', () => {
  it('is a BackendError that says how to build it, from the first call that needs FAISS', async () => {
    const store = createFaissStore({ dimension: 2 });
    const error = await store
      .add([{ id: 'a', text: 'a' }], { embeddings: [[1, 2]] })
      .catch((caught: unknown) => caught);
    expect(BackendError.isInstance(error)).toBe(true);
    expect((error as BackendError).message).toMatch(/faiss-node could not be loaded/);
    expect((error as BackendError).message).toMatch(/npx zerda-faiss build/);
    expect((error as BackendError).message).toMatch(/scripts\/setup-faiss\.sh/);
    expect((error as BackendError).cause).toBeDefined();
    // Nothing was written, and a store that has nothing needs no FAISS to answer.
    expect(await store.count()).toBe(0);
    expect((await store.search([1, 2], { topK: 1 })).hits).toEqual([]);
    // Importing the package did not fail: loading is lazy, and retried on the next call.
    await expect(store.save('/nonexistent/never-written')).rejects.toSatisfy(BackendError.isInstance);
  });
});
