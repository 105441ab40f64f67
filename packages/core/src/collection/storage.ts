import { StorageLockedError } from '../errors/index.js';
import { crc32 } from '../util/crc32.js';

/**
 * Where a collection keeps its local state: a snapshot (named blobs of bytes, replaced whole by one
 * atomic commit) and a log of records appended since that snapshot. Implementations: the in-memory
 * storage here, a file storage for Node (`@zerda/core/node`), and a browser one. A storage is held
 * by one writer at a time (`lock`).
 */
export interface CollectionStorage {
  /** Says where, in messages: a folder path, 'memory', ... */
  readonly location: string;
  /**
   * True when the state lasts only as long as this object (the memory storage): nothing stored
   * here outlives the process, so there is no crash to recover from. A collection over such a
   * storage and a store that keeps nothing either logs nothing (the store already holds what a
   * log would repeat) and snapshots on close. Absent or false: the storage is durable.
   */
  readonly volatile?: boolean;
  /** Takes the one-writer lock; a StorageLockedError names the holder when another writer has it. */
  lock(): Promise<StorageLock>;
  /**
   * True when `readSnapshot` returns only bytes checked against checksums taken when they were
   * committed (or that cannot have changed since), failing otherwise: the collection's formats then
   * skip checksums of their own. Absent or false: they check theirs.
   */
  readonly verified?: boolean;
  /**
   * True once `readSnapshot` has read a snapshot stored in an older format than `commitSnapshot`
   * writes: the collection commits its snapshot again on close, even unchanged, to upgrade it.
   */
  readonly outdated?: boolean;
  /**
   * The committed snapshot, or undefined when nothing was ever committed here. The bytes belong to
   * the caller, which may keep views into them and change them: the storage keeps none of them.
   * `into` may name, per blob, where its bytes go (exactly `byteLength` of them): a vector store
   * reads its image straight into its scan memory that way.
   */
  readSnapshot(options?: SnapshotReadOptions): Promise<Map<string, Uint8Array> | undefined>;
  /**
   * Replaces the snapshot and empties the log in one atomic step: a reader (or a crash) sees the old
   * snapshot with its log, or the new snapshot with an empty log, never a mix.
   */
  commitSnapshot(blobs: ReadonlyMap<string, Uint8Array>): Promise<void>;
  /** Appends one record to the log; durable when the promise resolves. */
  appendLog(record: Uint8Array): Promise<void>;
  /** The log's records since the snapshot, in order. A torn last record (a crash mid-append) is left out and cut off. */
  readLog(): Promise<Uint8Array[]>;
}

export interface SnapshotReadOptions {
  /** The buffer a blob is read into (`byteLength` bytes), or undefined for a new one. */
  into?: (key: string, byteLength: number) => Uint8Array | undefined;
  /**
   * Per blob, a consumer that reads it a range at a time when it needs to, rather than now
   * (undefined: read now). A storage that can read ranges synchronously hands such a blob to the
   * consumer as a source, unread and left out of the returned map; the blob stays readable for as
   * long as the source is reachable, whatever later snapshots do. No checksum over the whole blob
   * is taken then: checking what it reads is the consumer's job. A storage may ignore this and
   * return every blob whole.
   */
  defer?: (key: string, byteLength: number) => ((source: BlobSource) => void) | undefined;
  /**
   * Called with each blob once it is read and checked, before `readSnapshot` resolves, so a
   * caller can decode it while others are still being read (the file storage reads the smallest
   * first). A storage may not call it at all; the returned map holds every blob either way.
   */
  onRead?: (key: string, bytes: Uint8Array) => void;
}

/** A blob read a range at a time (see `SnapshotReadOptions.defer`). */
export interface BlobSource {
  readonly byteLength: number;
  /**
   * `length` bytes from `offset`, read now: a view the caller must not keep past its next read.
   * An IndexFormatError when the blob cannot be read or ends early.
   */
  read(offset: number, length: number): Uint8Array;
}

/** A blob already in memory as a source. */
export function bytesSource(bytes: Uint8Array): BlobSource {
  return {
    byteLength: bytes.byteLength,
    read: (offset, length) => bytes.subarray(offset, offset + length),
  };
}

/** The buffer for a blob: the one `into` names when it has the blob's length, else a new one. */
export function blobBuffer(
  options: SnapshotReadOptions | undefined,
  key: string,
  byteLength: number,
): Uint8Array {
  const target = options?.into?.(key, byteLength);
  return target !== undefined && target.byteLength === byteLength ? target : new Uint8Array(byteLength);
}

export interface StorageLock {
  release(): Promise<void>;
}

/**
 * A storage in memory: the collection's state lasts as long as the object (tests, throwaway
 * indexes). It is `volatile`: a collection over it and a store that keeps nothing appends no log
 * (so no second copy of the vectors) and leaves its snapshot here when it closes.
 */
export function createMemoryStorage(): CollectionStorage {
  let snapshot: Map<string, Uint8Array> | undefined;
  let log: Uint8Array[] = [];
  let locked = false;
  return {
    location: 'memory',
    volatile: true,
    verified: true,
    async lock() {
      if (locked) {
        throw new StorageLockedError({ location: 'memory', holder: 'another collection in this process' });
      }
      locked = true;
      return {
        async release() {
          locked = false;
        },
      };
    },
    async readSnapshot(options) {
      if (snapshot === undefined) return undefined;
      // Copies: the reader may change what it is given, and the snapshot stays as committed.
      return new Map(
        [...snapshot].map(([key, bytes]) => {
          const copy = blobBuffer(options, key, bytes.byteLength);
          copy.set(bytes);
          return [key, copy];
        }),
      );
    },
    async commitSnapshot(blobs) {
      snapshot = new Map(blobs);
      log = [];
    },
    async appendLog(record) {
      log.push(record.slice());
    },
    async readLog() {
      return log.slice();
    },
  };
}

/** One log record as stored: length, CRC-32, bytes (little-endian), so a torn or damaged tail is detected. */
export function frameRecord(record: Uint8Array): Uint8Array {
  const framed = new Uint8Array(record.byteLength + 8);
  const view = new DataView(framed.buffer);
  view.setUint32(0, record.byteLength, true);
  view.setUint32(4, crc32(record), true);
  framed.set(record, 8);
  return framed;
}

/** The whole records of a framed log and the length they cover (the rest is a torn tail). */
export function unframeRecords(bytes: Uint8Array): { records: Uint8Array[]; validLength: number } {
  const records: Uint8Array[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  while (offset + 8 <= bytes.byteLength) {
    const length = view.getUint32(offset, true);
    const checksum = view.getUint32(offset + 4, true);
    const end = offset + 8 + length;
    if (end > bytes.byteLength) break;
    const record = bytes.subarray(offset + 8, end);
    if (crc32(record) !== checksum) break;
    records.push(record);
    offset = end;
  }
  return { records, validLength: offset };
}
