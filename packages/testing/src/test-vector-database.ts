import type { VectorDatabase } from '@zerda/core';
import { describe } from 'vitest';
import { createSuiteContext } from './context.js';
import { filterTests } from './filter-tests.js';
import { inputTests } from './input-tests.js';
import { scoreTests } from './score-tests.js';
import { sparseTests } from './sparse-tests.js';
import { storageTests } from './storage-tests.js';
import type { TestVectorDatabaseOptions } from './types.js';

/**
 * Declares the backend conformance suite (vitest `describe` / `it` blocks) for a VectorDatabase:
 * the bar every Zerda backend passes against its real database. Call it at the top level of a
 * test file. See the package README for what it checks.
 */
export function testVectorDatabase<Store extends VectorDatabase>(
  options: TestVectorDatabaseOptions<Store>,
): void {
  if (options === null || typeof options !== 'object' || typeof options.create !== 'function') {
    throw new TypeError('testVectorDatabase: expected options with a `create` function');
  }
  if (typeof options.name !== 'string' || options.name.length === 0) {
    throw new TypeError('testVectorDatabase: expected a non-empty `name`');
  }
  describe(`VectorDatabase conformance: ${options.name}`, () => {
    const ctx = createSuiteContext(options);
    storageTests(ctx);
    scoreTests(ctx);
    filterTests(ctx);
    inputTests(ctx);
    sparseTests(ctx);
    if (options.additionalTests) describe('additional tests', options.additionalTests);
  });
}
