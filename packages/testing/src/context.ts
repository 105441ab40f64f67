import type { Chunk, DistanceMetric, VectorDatabase } from '@zerda/core';
import { afterEach, expect } from 'vitest';
import type {
  ConformanceCapabilities,
  ConformanceCreateOptions,
  TestVectorDatabaseOptions,
} from './types.js';

/** What every group of tests shares: the options, and stores that are cleaned up after each test. */
export interface SuiteContext<Store extends VectorDatabase = VectorDatabase> {
  readonly name: string;
  readonly capabilities: Required<Pick<ConformanceCapabilities, 'embedder' | 'unreachableTimeoutMs'>> &
    ConformanceCapabilities;
  /** The metric the metric-independent tests use (the first declared). */
  readonly metric: DistanceMetric;
  /** Vector length of the metric-independent tests. */
  readonly dimension: number;
  readonly timeout: number;
  readonly propertyTimeout: number;
  readonly propertyRuns: number;
  readonly seed: number | undefined;
  /** A fresh store (the first metric and the suite's dimension unless given), destroyed after the test. */
  open(options?: Partial<ConformanceCreateOptions>): Promise<Store>;
  /** Destroys a store now (for loops that make many). */
  release(store: VectorDatabase): Promise<void>;
}

export function createSuiteContext<Store extends VectorDatabase>(
  options: TestVectorDatabaseOptions<Store>,
): SuiteContext<Store> {
  const { capabilities } = options;
  if (!Array.isArray(capabilities.metrics) || capabilities.metrics.length === 0) {
    throw new Error('testVectorDatabase: capabilities.metrics must list at least one metric');
  }
  const metric = capabilities.metrics[0]!;
  const timeout = options.testTimeoutMs ?? 30_000;
  const live = new Set<Store>();
  const destroy = async (store: Store): Promise<void> => {
    live.delete(store);
    if (options.destroy) await options.destroy(store);
    else await store.close?.();
  };

  afterEach(async () => {
    const stores = [...live];
    live.clear();
    const results = await Promise.allSettled(stores.map(destroy));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw new Error('destroy failed after the test', { cause: failed.reason });
  });

  return {
    name: options.name,
    capabilities: {
      ...capabilities,
      embedder: capabilities.embedder ?? true,
      unreachableTimeoutMs: capabilities.unreachableTimeoutMs ?? 10_000,
    },
    metric,
    dimension: 8,
    timeout,
    propertyTimeout: timeout * 4,
    propertyRuns: options.propertyRuns ?? 20,
    seed: options.seed,
    async open(partial = {}) {
      const createOptions: ConformanceCreateOptions = { dimension: 8, metric, ...partial };
      const store = await options.create(createOptions);
      live.add(store);
      return store;
    },
    release: (store) => destroy(store as Store),
  };
}

/** Adds chunks with their vectors and checks the ids returned. */
export async function addWithVectors(
  store: VectorDatabase,
  chunks: readonly Chunk[],
  vectors: ReadonlyArray<readonly number[] | Float32Array>,
): Promise<void> {
  const result = await store.add(chunks, { embeddings: vectors });
  expect(result.ids).toEqual(chunks.map((chunk) => chunk.id));
}

/** An error class of core, checked through its brand (works across two copies of core). */
export interface TypedErrorClass<E> {
  readonly name: string;
  isInstance(error: unknown): error is E;
}

/** Awaits a call that must fail with `errorClass`, and returns the error. */
export async function expectTypedError<E>(
  call: () => Promise<unknown>,
  errorClass: TypedErrorClass<E>,
  what: string,
): Promise<E> {
  let outcome: unknown;
  try {
    outcome = await call();
  } catch (error) {
    if (errorClass.isInstance(error)) return error;
    throw new Error(`${what}: expected a ${errorClass.name}, got ${describeError(error)}`, { cause: error });
  }
  throw new Error(`${what}: expected a ${errorClass.name}, but it succeeded with ${preview(outcome)}`);
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `a thrown ${typeof error} (${preview(error)})`;
}

export function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/** Sorted ids of a list of hits or chunks. */
export function idsOf(items: ReadonlyArray<{ id: string } | { chunk: { id: string } }>): string[] {
  return items.map((item) => ('chunk' in item ? item.chunk.id : item.id)).sort();
}
