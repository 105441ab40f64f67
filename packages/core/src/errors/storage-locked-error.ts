import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.StorageLockedError';
const symbol = Symbol.for(marker);

/** A collection's storage is held by another writer (a process, or another collection object). */
export class StorageLockedError extends ZerdaError {
  private readonly [symbol] = true;
  /** Where the storage is. */
  readonly location: string;
  /** Who holds it, for example 'process 4242 on host a1'. */
  readonly holder: string;
  /** The holder's process id, where known. */
  readonly pid: number | undefined;

  constructor({ location, holder, pid }: { location: string; holder: string; pid?: number }) {
    super(
      {
        message: `The collection storage at ${location} is locked by ${holder}: one writer at a time. Close that collection first (a lock held by a process that has died is taken over automatically).`,
      },
      'StorageLockedError',
    );
    this.location = location;
    this.holder = holder;
    this.pid = pid;
  }

  static override isInstance(error: unknown): error is StorageLockedError {
    return hasMarker(error, marker);
  }
}
