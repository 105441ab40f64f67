import { namedAnalyzers } from '../../analyzers.js';
import { parseCommandArgs, readNumber } from '../../args.js';
import { UsageError } from '../../io.js';
import { tuneHelp } from './tune-format.js';
import type { TuneOptions } from './tune-run.js';

/** `zerda tune`'s arguments as options, checked; `undefined` when help was asked for. */
export function parseTuneArgs(argv: string[]): { options: TuneOptions; json: boolean } | undefined {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      embeddings: { type: 'string' },
      'query-embeddings': { type: 'string' },
      dimension: { type: 'string' },
      k1: { type: 'string' },
      b: { type: 'string' },
      analyzer: { type: 'string' },
      depth: { type: 'string' },
      folds: { type: 'string' },
      seed: { type: 'string' },
      split: { type: 'string' },
      qrels: { type: 'string' },
      out: { type: 'string' },
      'tune-bm25': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    tuneHelp,
  );
  if (values.help) return undefined;
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'missing the collection folder'
        : `expected one folder, got ${positionals.length}`,
      tuneHelp,
    );
  }
  const analyzer = values.analyzer;
  if (analyzer !== undefined && !(analyzer in namedAnalyzers)) {
    throw new UsageError(
      `unknown analyzer '${analyzer}': expected ${Object.keys(namedAnalyzers).join(' or ')}`,
      tuneHelp,
    );
  }
  if (values['tune-bm25'] && (values.k1 !== undefined || values.b !== undefined)) {
    throw new UsageError('--tune-bm25 chooses k1 and b; --k1 and --b cannot go with it', tuneHelp);
  }
  if (values['query-embeddings'] !== undefined && values.embeddings === undefined) {
    throw new UsageError('--query-embeddings needs --embeddings (the document vectors)', tuneHelp);
  }
  if (values.dimension !== undefined && values.embeddings !== undefined) {
    throw new UsageError(
      "--dimension sets the hash embedder's; with --embeddings the vectors set it",
      tuneHelp,
    );
  }
  return {
    json: values.json === true,
    options: {
      folder: positionals[0] as string,
      embeddings: values.embeddings,
      queryEmbeddings: values['query-embeddings'],
      hashDimension: readNumber(values.dimension, 'dimension', tuneHelp, {
        min: 1,
        max: 65_536,
        integer: true,
      }),
      k1: readNumber(values.k1, 'k1', tuneHelp, { min: 0 }),
      b: readNumber(values.b, 'b', tuneHelp, { min: 0, max: 1 }),
      analyzer: analyzer as keyof typeof namedAnalyzers | undefined,
      depth: readNumber(values.depth, 'depth', tuneHelp, { min: 1, max: 10_000, integer: true }),
      folds: readNumber(values.folds, 'folds', tuneHelp, { min: 2, max: 100, integer: true }),
      seed: readNumber(values.seed, 'seed', tuneHelp, { min: 0, max: 2 ** 32 - 1, integer: true }),
      split: values.split,
      qrelsPath: values.qrels,
      out: values.out,
      tuneBm25: values['tune-bm25'] === true,
    },
  };
}
