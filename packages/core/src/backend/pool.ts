import { throwIfAborted } from '../errors/index.js';

/**
 * Runs `task` over every item with at most `concurrency` in flight, and resolves with the results
 * in input order. The first failure stops new tasks from starting and rejects once the tasks in
 * flight have settled (so nothing runs on after the caller has its error); `onSettled` sees each
 * task's outcome as it happens, which is how a caller learns exactly what succeeded.
 */
export async function mapWithConcurrency<Item, Result>(
  items: readonly Item[],
  concurrency: number,
  task: (item: Item, index: number) => Promise<Result>,
  options: {
    signal?: AbortSignal | undefined;
    onSettled?: (index: number, outcome: { ok: true; value: Result } | { ok: false; error: unknown }) => void;
  } = {},
): Promise<Result[]> {
  const { signal, onSettled } = options;
  const limit = Math.max(1, Math.floor(concurrency));
  const results = new Array<Result>(items.length);
  let next = 0;
  let failed = false;
  let firstError: unknown;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        throwIfAborted(signal);
        const value = await task(items[index] as Item, index);
        results[index] = value;
        onSettled?.(index, { ok: true, value });
      } catch (error) {
        onSettled?.(index, { ok: false, error });
        if (!failed) {
          failed = true;
          firstError = error;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw firstError;
  return results;
}

/** Splits a list into consecutive slices of at most `size` items. */
export function chunked<Item>(items: readonly Item[], size: number): Item[][] {
  const batches: Item[][] = [];
  const step = Math.max(1, Math.floor(size));
  for (let start = 0; start < items.length; start += step) batches.push(items.slice(start, start + step));
  return batches;
}
