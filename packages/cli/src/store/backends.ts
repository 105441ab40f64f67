import { type Embedder, InMemoryVectorStore, type VectorDatabase, ZerdaError } from '@zerda/core';

/** The vector backends `zerda index --backend` knows. */
export const knownBackends = ['memory', 'chroma', 'faiss', 'pinecone'] as const;
export type BackendName = (typeof knownBackends)[number];

/** Settings of a backend as stored in the store's manifest (never a secret: keys come from the environment). */
export type BackendOptions = Record<string, string>;

/** What a backend needs to open its vector database. */
export interface BackendContext {
  embedder: Embedder;
  options: BackendOptions;
  /** The store directory (a default collection or index name comes from its name). */
  storeName: string;
}

/** How the `zerda` store keeps its vectors in one backend. */
export interface BackendAdapter {
  name: BackendName;
  /** The package that provides it ('@zerda/core' for memory). */
  packageName: string;
  /** Options `--backend-option key=value` accepts, with what each means. */
  optionHelp: Record<string, string>;
  /**
   * 'local': the vectors are saved into the store directory at each commit, with the BM25 index,
   * so a commit is atomic. 'remote': they live in a service, written as each batch is added.
   */
  persistence: 'local' | 'remote';
  /** A new, empty database (for 'remote': the service's collection or index, which may hold data). */
  create(context: BackendContext): Promise<VectorDatabase>;
  /** The database saved in `directory` ('local'), or the service's ('remote', `directory` unused). */
  open(context: BackendContext, directory: string): Promise<VectorDatabase>;
  /** Saves a 'local' database into `directory`. */
  save?(database: VectorDatabase, directory: string): Promise<void>;
}

/** A backend that is unknown, not installed or not usable here. */
export class BackendUnavailableError extends ZerdaError {
  constructor(message: string, cause?: unknown) {
    super({ message, cause }, 'BackendUnavailableError');
  }
}

const memory: BackendAdapter = {
  name: 'memory',
  packageName: '@zerda/core',
  optionHelp: {},
  persistence: 'local',
  async create({ embedder }) {
    return new InMemoryVectorStore({ embedder, metric: 'cosine' });
  },
  async open({ embedder }, directory) {
    return InMemoryVectorStore.load(directory, { embedder, metric: 'cosine' });
  },
  async save(database, directory) {
    await (database as InMemoryVectorStore).save(directory);
  },
};

type Module = Record<string, unknown>;

/**
 * Loads a backend package with a dynamic import, so that `zerda` runs without the backends a
 * user does not use; a package that is missing or lacks the export is a clear error.
 */
async function importBackend(name: BackendName, packageName: string, exportName: string): Promise<Module> {
  let module: Module;
  try {
    // A variable specifier: the package is optional, and resolved only when this backend is used.
    const specifier: string = packageName;
    module = (await import(specifier)) as Module;
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    if (code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(packageName)) {
      throw new BackendUnavailableError(
        `the ${name} backend needs the ${packageName} package, which is not installed (install it beside @zerda/cli: npm install ${packageName})`,
        error,
      );
    }
    throw new BackendUnavailableError(
      `the ${name} backend cannot be loaded from ${packageName}: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
  if (typeof module[exportName] !== 'function') {
    throw new BackendUnavailableError(
      `the installed ${packageName} has no ${exportName} export (it may be older than this @zerda/cli)`,
    );
  }
  return module;
}

function usable(name: BackendName, error: unknown): never {
  if (error instanceof BackendUnavailableError) throw error;
  throw new BackendUnavailableError(
    `the ${name} backend cannot be used: ${error instanceof Error ? error.message : String(error)}`,
    error,
  );
}

const faiss: BackendAdapter = {
  name: 'faiss',
  packageName: '@zerda/faiss',
  optionHelp: { indexType: "'flat' (exact, default) or 'hnsw' (approximate)" },
  persistence: 'local',
  async create({ embedder, options }) {
    const module = await importBackend('faiss', '@zerda/faiss', 'createFaissStore');
    try {
      const create = module.createFaissStore as (settings: object) => VectorDatabase;
      return create({
        embedder,
        metric: 'cosine',
        ...(options.indexType ? { indexType: options.indexType } : {}),
      });
    } catch (error) {
      return usable('faiss', error);
    }
  },
  async open({ embedder }, directory) {
    const module = await importBackend('faiss', '@zerda/faiss', 'createFaissStore');
    const FaissStore = module.FaissStore as
      | { load(directory: string, settings: object): Promise<VectorDatabase> }
      | undefined;
    if (typeof FaissStore?.load !== 'function') {
      throw new BackendUnavailableError(
        'the installed @zerda/faiss cannot load a saved store (no FaissStore.load)',
      );
    }
    return FaissStore.load(directory, { embedder });
  },
  async save(database, directory) {
    const saving = database as VectorDatabase & { save?(directory: string): Promise<void> };
    if (typeof saving.save !== 'function') {
      throw new BackendUnavailableError('this @zerda/faiss store cannot save itself (no save method)');
    }
    await saving.save(directory);
  },
};

const chroma: BackendAdapter = {
  name: 'chroma',
  packageName: '@zerda/chroma',
  optionHelp: {
    url: 'the Chroma server (default CHROMA_URL, else http://localhost:8000)',
    collection: "the collection (default: the store folder's name)",
    tenant: 'the tenant (default CHROMA_TENANT)',
    database: 'the database (default CHROMA_DATABASE)',
  },
  persistence: 'remote',
  async create(context) {
    return openChroma(context);
  },
  async open(context) {
    return openChroma(context);
  },
};

async function openChroma({ embedder, options, storeName }: BackendContext): Promise<VectorDatabase> {
  const module = await importBackend('chroma', '@zerda/chroma', 'createChromaStore');
  try {
    const create = module.createChromaStore as (settings: object) => VectorDatabase;
    return create({
      embedder,
      metric: 'cosine',
      collection: options.collection ?? storeName,
      ...(options.url ? { url: options.url } : {}),
      ...(options.tenant ? { tenant: options.tenant } : {}),
      ...(options.database ? { database: options.database } : {}),
    });
  } catch (error) {
    return usable('chroma', error);
  }
}

const pinecone: BackendAdapter = {
  name: 'pinecone',
  packageName: '@zerda/pinecone',
  optionHelp: {
    index: 'the index name (default PINECONE_INDEX); the key comes from PINECONE_API_KEY',
    host: "the index's data-plane host (skips the control plane)",
    namespace: "the namespace (default: the store folder's name)",
  },
  persistence: 'remote',
  async create(context) {
    return openPinecone(context);
  },
  async open(context) {
    return openPinecone(context);
  },
};

async function openPinecone({ embedder, options, storeName }: BackendContext): Promise<VectorDatabase> {
  const module = await importBackend('pinecone', '@zerda/pinecone', 'createPineconeStore');
  try {
    const create = module.createPineconeStore as (settings: object) => VectorDatabase;
    return create({
      embedder,
      metric: 'cosine',
      namespace: options.namespace ?? storeName,
      ...(options.index ? { indexName: options.index } : {}),
      ...(options.host ? { host: options.host } : {}),
    });
  } catch (error) {
    return usable('pinecone', error);
  }
}

const adapters: Record<BackendName, BackendAdapter> = { memory, chroma, faiss, pinecone };

/** The adapter of a backend by name; an unknown name is an error listing the known ones. */
export function backendAdapter(name: string): BackendAdapter {
  const adapter = (adapters as Record<string, BackendAdapter | undefined>)[name];
  if (adapter === undefined) {
    throw new BackendUnavailableError(
      `unknown backend '${name}': expected one of ${knownBackends.join(', ')}`,
    );
  }
  return adapter;
}

/** `--backend-option key=value` pairs, checked against the backend's options. */
export function readBackendOptions(name: BackendName, pairs: readonly string[]): BackendOptions {
  const adapter = backendAdapter(name);
  const options: BackendOptions = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    const key = equals < 0 ? pair : pair.slice(0, equals);
    if (equals < 0 || key === '') {
      throw new BackendUnavailableError(`--backend-option wants key=value, got '${pair}'`);
    }
    if (!(key in adapter.optionHelp)) {
      const known = Object.keys(adapter.optionHelp);
      throw new BackendUnavailableError(
        `the ${name} backend has no option '${key}'${known.length > 0 ? ` (it takes ${known.join(', ')})` : ' (it takes none)'}`,
      );
    }
    options[key] = pair.slice(equals + 1);
  }
  return options;
}
