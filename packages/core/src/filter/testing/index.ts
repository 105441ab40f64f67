// Test helpers for filter conventions, meant for the backend conformance suite as well:
// native-semantics evaluators (no dependencies) and fast-check generators (need fast-check).

export * from './arbitraries.js';
export * from './native-evaluators.js';
