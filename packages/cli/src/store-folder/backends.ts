import { type Embedder, InMemoryVectorStore, type VectorDatabase, ZerdaError } from '@zerda/core';

/** The vector backends `zerda index --backend` knows. */
export const knownBackends = ['memory', 'chroma', 'faiss', 'pinecone', 'postgres'] as const;
export type BackendName = (typeof knownBackends)[number];

/** Settings of a backend as written in the store folder's config (never a secret: keys come from the environment). */
export type BackendOptions = Record<string, string>;

/** What a backend needs to open its vector database. */
export interface BackendContext {
  embedder: Embedder;
  options: BackendOptions;
  /** The store folder's name: a default collection, namespace or table name comes from it. */
  storeName: string;
}

/** A backend's store, and what to release after the collection over it is closed. */
export interface OpenedBackend {
  store: VectorDatabase;
  /** Closes connections the CLI made for the store (a Postgres pool, a PGlite database). */
  dispose?: () => Promise<void>;
}

/** How `zerda` makes one backend's store: a factory from its package, loaded when used. */
export interface BackendAdapter {
  name: BackendName;
  /** The package that provides it ('@zerda/core' for memory). */
  packageName: string;
  /** Options `--backend-option key=value` accepts, with what each means. */
  optionHelp: Record<string, string>;
  open(context: BackendContext): Promise<OpenedBackend>;
}

/** A backend that is unknown, not installed or not usable here. */
export class BackendUnavailableError extends ZerdaError {
  constructor(message: string, cause?: unknown) {
    super({ message, cause }, 'BackendUnavailableError');
  }
}

type Module = Record<string, unknown>;

/**
 * Loads a package with a dynamic import, so that `zerda` runs without the backends a user does not
 * use; a package that is missing or lacks the export is a BackendUnavailableError saying so.
 */
async function importPackage(backend: BackendName, packageName: string, exportName: string): Promise<Module> {
  let module: Module;
  try {
    // A variable specifier: the package is optional, and resolved only when this backend is used.
    const specifier: string = packageName;
    module = (await import(specifier)) as Module;
  } catch (error) {
    if (isMissing(error, packageName)) {
      throw new BackendUnavailableError(
        `the ${backend} backend needs the ${packageName} package, which is not installed (install it beside @zerda/cli: npm install ${packageName})`,
        error,
      );
    }
    throw new BackendUnavailableError(
      `the ${backend} backend cannot be loaded from ${packageName}: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
  const found = module[exportName] ?? (module.default as Module | undefined)?.[exportName];
  if (found === undefined) {
    throw new BackendUnavailableError(
      `the installed ${packageName} has no ${exportName} export (it may be older than this @zerda/cli)`,
    );
  }
  return { ...module, [exportName]: found };
}

/** Whether an import failed because the package is not installed (Node's error, or a bundler's or Vite's). */
function isMissing(error: unknown, packageName: string): boolean {
  const code = error instanceof Error && 'code' in error ? String(error.code) : '';
  const message = error instanceof Error ? error.message : String(error);
  if (!message.includes(packageName)) return false;
  return (
    code === 'ERR_MODULE_NOT_FOUND' ||
    /Cannot find (module|package)|Could not resolve|Failed to (load url|resolve)/.test(message)
  );
}

/** Calls a backend's factory; what it throws becomes a BackendUnavailableError naming the backend. */
async function usable<T>(name: BackendName, make: () => T | Promise<T>): Promise<T> {
  try {
    return await make();
  } catch (error) {
    if (error instanceof BackendUnavailableError) throw error;
    throw new BackendUnavailableError(
      `the ${name} backend cannot be used: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
}

type Factory = (settings: object) => VectorDatabase;

/** A backend whose package exports `factory(settings)`, with settings made from the context. */
function packaged(
  name: BackendName,
  packageName: string,
  factory: string,
  optionHelp: Record<string, string>,
  settings: (context: BackendContext) => object,
): BackendAdapter {
  return {
    name,
    packageName,
    optionHelp,
    async open(context) {
      const module = await importPackage(name, packageName, factory);
      const create = module[factory] as Factory;
      return {
        store: await usable(name, () =>
          create({ embedder: context.embedder, metric: 'cosine', ...settings(context) }),
        ),
      };
    },
  };
}

/** Only the options given: `{ key: options[from] }` for each that is set. */
function given(options: BackendOptions, names: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(names).flatMap(([key, from]) => (options[from] ? [[key, options[from]]] : [])),
  );
}

const memory: BackendAdapter = {
  name: 'memory',
  packageName: '@zerda/core',
  optionHelp: {},
  async open({ embedder }) {
    return { store: new InMemoryVectorStore({ embedder, metric: 'cosine' }) };
  },
};

const faiss = packaged(
  'faiss',
  '@zerda/faiss',
  'createFaissStore',
  { indexType: "'flat' (exact, default) or 'hnsw' (approximate)" },
  ({ options }) => given(options, { indexType: 'indexType' }),
);

const chroma = packaged(
  'chroma',
  '@zerda/chroma',
  'createChromaStore',
  {
    url: 'the Chroma server (default CHROMA_URL, else http://localhost:8000)',
    collection: "the collection (default: the store folder's name)",
    tenant: 'the tenant (default CHROMA_TENANT)',
    database: 'the database (default CHROMA_DATABASE)',
  },
  ({ options, storeName }) => ({
    collection: options.collection ?? storeName,
    ...given(options, { url: 'url', tenant: 'tenant', database: 'database' }),
  }),
);

const pinecone = packaged(
  'pinecone',
  '@zerda/pinecone',
  'createPineconeStore',
  {
    index: 'the index name (default PINECONE_INDEX); the key comes from PINECONE_API_KEY',
    host: "the index's data-plane host (skips the control plane)",
    namespace: "the namespace (default: the store folder's name)",
  },
  ({ options, storeName }) => ({
    namespace: options.namespace ?? storeName,
    ...given(options, { indexName: 'index', host: 'host' }),
  }),
);

const postgres: BackendAdapter = {
  name: 'postgres',
  packageName: '@zerda/postgres',
  optionHelp: {
    url: 'a Postgres server with pgvector, postgres://... (default DATABASE_URL); needs the pg package',
    pglite: 'a PGlite database folder instead of a server; needs @electric-sql/pglite',
    table: "the table (default zerda_<the store folder's name>)",
  },
  async open({ embedder, options, storeName }) {
    const module = await importPackage('postgres', '@zerda/postgres', 'createPostgresStore');
    const create = module.createPostgresStore as Factory;
    const table = options.table ?? `zerda_${storeName.replace(/-/g, '_')}`;
    if (options.pglite !== undefined) {
      const { PGlite } = await importPackage('postgres', '@electric-sql/pglite', 'PGlite');
      const { vector } = await importPackage('postgres', '@electric-sql/pglite/vector', 'vector');
      const pglite = await usable('postgres', () =>
        (PGlite as { create(dir: string, options: object): Promise<{ close(): Promise<void> }> }).create(
          options.pglite as string,
          { extensions: { vector } },
        ),
      );
      return {
        store: await usable('postgres', () => create({ embedder, metric: 'cosine', pglite, table })),
        dispose: () => pglite.close(),
      };
    }
    const url = options.url ?? process.env.DATABASE_URL;
    if (url === undefined || url === '') {
      throw new BackendUnavailableError(
        'the postgres backend needs a server (--backend-option url=postgres://..., or DATABASE_URL) or a PGlite folder (--backend-option pglite=<folder>)',
      );
    }
    const { Pool } = await importPackage('postgres', 'pg', 'Pool');
    const pool = new (Pool as new (settings: object) => { end(): Promise<void> })({ connectionString: url });
    return {
      store: await usable('postgres', () => create({ embedder, metric: 'cosine', pool, table })),
      dispose: () => pool.end(),
    };
  },
};

const adapters: Record<BackendName, BackendAdapter> = { memory, chroma, faiss, pinecone, postgres };

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
    if (!Object.hasOwn(adapter.optionHelp, key)) {
      const known = Object.keys(adapter.optionHelp);
      throw new BackendUnavailableError(
        `the ${name} backend has no option '${key}'${known.length > 0 ? ` (it takes ${known.join(', ')})` : ' (it takes none)'}`,
      );
    }
    options[key] = pair.slice(equals + 1);
  }
  return options;
}
