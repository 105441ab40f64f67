export { AbortedError, throwIfAborted } from './aborted-error.js';
export { BackendError } from './backend-error.js';
export { BatchWriteError } from './batch-write-error.js';
export { type ChunkProblem, ChunkValidationError } from './chunk-validation-error.js';
export { FilterError } from './filter-error.js';
export { IndexFormatError } from './index-format-error.js';
export { InvalidArgumentError } from './invalid-argument-error.js';
export { RetrievalError } from './retrieval-error.js';
export { ZerdaError, type ZerdaErrorOptions } from './zerda-error.js';
