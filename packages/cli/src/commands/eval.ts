/*
 * `zerda eval`: evaluates keyword, vector or hybrid retrieval (or scores a run file) on a BEIR
 * folder. Split by concern: eval/eval-run.ts runs an evaluation, eval/eval-args.ts reads the
 * command line, eval/eval-format.ts formats the report and holds the help.
 */
export * from './eval/eval-args.js';
export * from './eval/eval-format.js';
export * from './eval/eval-run.js';
