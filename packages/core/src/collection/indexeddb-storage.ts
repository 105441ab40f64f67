import { BackendError, InvalidArgumentError, StorageLockedError } from '../errors/index.js';
import { blobBuffer, type CollectionStorage, type SnapshotReadOptions, type StorageLock } from './storage.js';

/*
 * A collection storage in a browser's IndexedDB: one database per collection with two object
 * stores, `snapshot` (blob key -> bytes) and `log` (auto-increment key -> record bytes). A snapshot
 * commit is one read-write transaction over both (put the blobs, delete the old ones, clear the log),
 * and IndexedDB transactions are atomic: a crash, a closed tab or a quota error leaves the previous
 * snapshot and log whole. Every transaction asks for strict durability (flushed before it completes).
 * One writer at a time through the Web Locks API, so a second tab gets a StorageLockedError.
 */

export interface IndexedDbStorageSettings {
  /** The database's name (one per collection). */
  name: string;
  /** The IndexedDB factory (default: the global `indexedDB`). */
  indexedDB?: IDBFactory;
}

// The few IndexedDB and Web Locks shapes used here, declared locally so core needs no DOM typings.
interface IDBRequest<T = unknown> {
  result: T;
  error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
}
interface IDBOpenDBRequest extends IDBRequest<IDBDatabase> {
  onupgradeneeded: (() => void) | null;
  onblocked: (() => void) | null;
}
interface IDBObjectStore {
  getAll(): IDBRequest;
  put(value: unknown): IDBRequest;
  add(value: unknown): IDBRequest;
  clear(): IDBRequest;
}
type IDBTransactionMode = 'readonly' | 'readwrite';
interface IDBTransaction {
  objectStore(name: string): IDBObjectStore;
  abort(): void;
  error: unknown;
  oncomplete: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
}
interface IDBDatabase {
  transaction(
    stores: string[],
    mode: IDBTransactionMode,
    options?: { durability?: 'strict' | 'relaxed' | 'default' },
  ): IDBTransaction;
  createObjectStore(name: string, options?: { keyPath?: string; autoIncrement?: boolean }): IDBObjectStore;
  close(): void;
}
export interface IDBFactory {
  open(name: string, version?: number): IDBOpenDBRequest;
}
interface LockManager {
  request(
    name: string,
    options: { ifAvailable: boolean },
    callback: (lock: unknown) => Promise<void> | undefined,
  ): Promise<unknown>;
}
interface BrowserGlobals {
  indexedDB?: IDBFactory;
  navigator?: { locks?: LockManager };
}
const browser = globalThis as BrowserGlobals;

const SNAPSHOT = 'snapshot';
const LOG = 'log';

/** A collection storage in IndexedDB, for browsers and workers. */
export function createIndexedDbStorage(settings: IndexedDbStorageSettings | string): CollectionStorage {
  const name = typeof settings === 'string' ? settings : settings?.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidArgumentError({ argument: 'name', value: name, message: 'expected a database name' });
  }
  const factory = (typeof settings === 'object' ? settings.indexedDB : undefined) ?? browser.indexedDB;
  if (factory === undefined) {
    throw new InvalidArgumentError({
      argument: 'indexedDB',
      message: 'this runtime has no IndexedDB; use the file or memory storage',
    });
  }
  return new IndexedDbStorage(name, factory);
}

class IndexedDbStorage implements CollectionStorage {
  readonly location: string;
  #db: Promise<IDBDatabase> | undefined;

  constructor(
    readonly name: string,
    readonly factory: IDBFactory,
  ) {
    this.location = `indexeddb:${name}`;
  }

  async lock(): Promise<StorageLock> {
    const locks = browser.navigator?.locks;
    if (locks === undefined) return { release: async () => this.#close() };
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const granted = await new Promise<boolean>((resolve, reject) => {
      locks
        .request(`zerda-collection:${this.name}`, { ifAvailable: true }, (lock) => {
          resolve(lock !== null);
          return lock === null ? undefined : held;
        })
        .catch(reject);
    });
    if (!granted) {
      throw new StorageLockedError({
        location: this.location,
        holder: 'another tab, worker or collection of this origin',
      });
    }
    return {
      release: async () => {
        await this.#close();
        release();
      },
    };
  }

  async readSnapshot(options?: SnapshotReadOptions): Promise<Map<string, Uint8Array> | undefined> {
    const db = await this.#open();
    const entries = await this.#run(db, [SNAPSHOT], 'readonly', 'read', (tx) =>
      request<Array<{ key: string; bytes: Uint8Array }>>(tx.objectStore(SNAPSHOT).getAll()),
    );
    if (entries.length === 0) return undefined;
    return new Map(
      entries.map((entry) => {
        const target =
          options?.into === undefined ? entry.bytes : blobBuffer(options, entry.key, entry.bytes.byteLength);
        if (target !== entry.bytes) target.set(entry.bytes);
        return [entry.key, target];
      }),
    );
  }

  async commitSnapshot(blobs: ReadonlyMap<string, Uint8Array>): Promise<void> {
    const db = await this.#open();
    await this.#run(db, [SNAPSHOT, LOG], 'readwrite', 'commit', async (tx) => {
      const snapshot = tx.objectStore(SNAPSHOT);
      snapshot.clear();
      for (const [key, bytes] of blobs) snapshot.put({ key, bytes });
      tx.objectStore(LOG).clear();
    });
  }

  async appendLog(record: Uint8Array): Promise<void> {
    const db = await this.#open();
    await this.#run(db, [LOG], 'readwrite', 'append', async (tx) => {
      tx.objectStore(LOG).add(record.slice());
    });
  }

  async readLog(): Promise<Uint8Array[]> {
    const db = await this.#open();
    return this.#run(db, [LOG], 'readonly', 'read', (tx) =>
      request<Uint8Array[]>(tx.objectStore(LOG).getAll()),
    );
  }

  #open(): Promise<IDBDatabase> {
    this.#db ??= new Promise<IDBDatabase>((resolve, reject) => {
      const opening = this.factory.open(this.name, 1);
      opening.onupgradeneeded = () => {
        opening.result.createObjectStore(SNAPSHOT, { keyPath: 'key' });
        opening.result.createObjectStore(LOG, { autoIncrement: true });
      };
      opening.onsuccess = () => resolve(opening.result);
      opening.onerror = () => reject(this.#error('open', opening.error));
      opening.onblocked = () =>
        reject(this.#error('open', new Error('the database is blocked by another open connection')));
    }).catch((error: unknown) => {
      this.#db = undefined;
      throw error;
    });
    return this.#db;
  }

  async #close(): Promise<void> {
    const db = await this.#db?.catch(() => undefined);
    db?.close();
    this.#db = undefined;
  }

  /** Runs work in one transaction and resolves when it has completed (durably), with the work's value. */
  #run<T>(
    db: IDBDatabase,
    stores: string[],
    mode: IDBTransactionMode,
    operation: string,
    work: (tx: IDBTransaction) => Promise<T>,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let tx: IDBTransaction;
      try {
        tx = db.transaction(stores, mode, { durability: 'strict' });
      } catch (error) {
        reject(this.#error(operation, error));
        return;
      }
      let value: T;
      work(tx).then(
        (result) => {
          value = result;
        },
        (error: unknown) => {
          try {
            tx.abort();
          } catch {
            // already finished
          }
          reject(this.#error(operation, error));
        },
      );
      tx.oncomplete = () => resolve(value);
      tx.onerror = () => reject(this.#error(operation, tx.error));
      tx.onabort = () => reject(this.#error(operation, tx.error ?? new Error('the transaction was aborted')));
    });
  }

  #error(operation: string, cause: unknown): BackendError {
    const name = (cause as { name?: unknown } | null)?.name;
    const quota = name === 'QuotaExceededError';
    return new BackendError({
      backend: 'indexeddb',
      operation,
      message: quota
        ? `the browser refused to store more for ${this.location} (quota exceeded); the previous committed state is unchanged. Free space or ask for persistent storage (navigator.storage.persist()).`
        : `IndexedDB ${operation} failed for ${this.location}: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause,
      retryable: false,
    });
  }
}

function request<T>(req: IDBRequest<unknown>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    req.onsuccess = () => resolve(req.result as T);
    req.onerror = () => reject(req.error);
  });
}
