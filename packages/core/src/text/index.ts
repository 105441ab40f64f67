export type { Analyzer } from './analyzer.js';
