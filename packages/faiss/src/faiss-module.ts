import { BackendError } from '@zerda/core';

/**
 * The part of a faiss-node index this package uses. faiss-node's `Index` (and its subclasses)
 * satisfy it. Vectors go in and out as plain number arrays: that is all faiss-node takes.
 */
export interface FaissIndex {
  ntotal(): number;
  getDimension(): number;
  add(vectors: number[]): void;
  search(vector: number[], k: number): { distances: number[]; labels: number[] };
  removeIds(labels: number[]): number;
  /** Writes the index to a file (see faiss-index.ts for why never `toBuffer`). */
  write(path: string): void;
}

/** The part of the faiss-node module this package uses (`import faiss from 'faiss-node'`). */
export interface FaissModule {
  IndexFlatIP: new (dimension: number) => FaissIndex;
  IndexFlatL2: new (dimension: number) => FaissIndex;
  Index: {
    fromFactory(dimension: number, descriptor: string, metric?: number): FaissIndex;
    read(path: string): FaissIndex;
  };
}

/** faiss-node's `MetricType` values. */
export const METRIC_INNER_PRODUCT = 0;
export const METRIC_L2 = 1;

export const INSTALL_HINT =
  'faiss-node is a native module that must be built. After an install that skipped its install script ' +
  '(npm --ignore-scripts, pnpm 10, offline), run `npx zerda-faiss build` in your project: it builds faiss-node ' +
  'against the system FAISS (Debian/Ubuntu: sudo apt-get install libfaiss-dev libopenblas-dev cmake patchelf g++ make; ' +
  '`npx zerda-faiss build --install-system-packages` installs them). With the network, `npm rebuild faiss-node` ' +
  "downloads a prebuilt binary instead (pnpm: allow it in 'onlyBuiltDependencies'). See the @zerda/faiss README. " +
  '(In the Zerda repository: bash scripts/setup-faiss.sh; ZERDA_SKIP_FAISS=1 skips the FAISS tests.)';

let loading: Promise<FaissModule> | undefined;

/**
 * Loads faiss-node once (it is a peer dependency, loaded on first use so that importing
 * @zerda/faiss never fails). A missing or unbuilt module is a BackendError that says how to build it.
 */
export function loadFaissModule(): Promise<FaissModule> {
  loading ??= import('faiss-node').then(
    (loaded: unknown) => {
      const module = ((loaded as { default?: unknown }).default ?? loaded) as Partial<FaissModule>;
      if (typeof module?.IndexFlatIP !== 'function' || typeof module.Index?.fromFactory !== 'function') {
        throw new BackendError({
          backend: 'faiss',
          operation: 'load',
          message: `faiss-node loaded, but without the expected classes. ${INSTALL_HINT}`,
        });
      }
      return module as FaissModule;
    },
    (error: unknown) => {
      loading = undefined;
      throw new BackendError({
        backend: 'faiss',
        operation: 'load',
        message: `faiss-node could not be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)}). ${INSTALL_HINT}`,
        cause: error,
      });
    },
  );
  return loading;
}
