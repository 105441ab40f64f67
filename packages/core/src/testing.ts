// `@zerda/core/testing`: test helpers for backend authors (fast-check generators of filters and
// records, and evaluators of each backend's native filter semantics). Needs fast-check installed.
export * from './filter/testing/index.js';
