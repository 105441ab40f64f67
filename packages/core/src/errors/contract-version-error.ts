import { hasMarker, ZerdaError } from './zerda-error.js';

const marker = 'zerda.error.ContractVersionError';
const symbol = Symbol.for(marker);

/**
 * Something implementing a Zerda contract was handed over at a version this core does not take
 * (for example a v1 `VectorDatabase` where a v2 driver or store is needed).
 */
export class ContractVersionError extends ZerdaError {
  private readonly [symbol] = true;
  /** The contract, for example 'vector database'. */
  readonly contract: string;
  /** The version found (`specificationVersion`), or undefined when there was none. */
  readonly found: unknown;
  /** The version this core takes. */
  readonly expected: string;

  constructor({
    contract,
    found,
    expected,
    message,
  }: { contract: string; found: unknown; expected: string; message: string }) {
    super({ message }, 'ContractVersionError');
    this.contract = contract;
    this.found = found;
    this.expected = expected;
  }

  static override isInstance(error: unknown): error is ContractVersionError {
    return hasMarker(error, marker);
  }
}
