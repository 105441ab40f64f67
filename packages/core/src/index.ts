export * from './errors/index.js';
export * from './model/index.js';
export * from './text/index.js';
export * from './filter/index.js';
export * from './retriever/index.js';
export * from './vector/index.js';
