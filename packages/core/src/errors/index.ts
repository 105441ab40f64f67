export { ZerdaError, type ZerdaErrorOptions } from './zerda-error.js';
export { InvalidArgumentError } from './invalid-argument-error.js';
export { ChunkValidationError, type ChunkProblem } from './chunk-validation-error.js';
export { IndexFormatError } from './index-format-error.js';
export { AbortedError, throwIfAborted } from './aborted-error.js';
