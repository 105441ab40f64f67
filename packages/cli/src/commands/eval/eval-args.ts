import { basename } from 'node:path';
import type { HybridFusionMethod } from '@zerda/core';
import { parseCommandArgs, readNumber } from '../../args.js';
import { type CliIo, UsageError } from '../../io.js';
import { ProgressBar } from '../../progress.js';
import { readWeights } from '../fuse.js';
import { evalHelp, formatEvalReport } from './eval-format.js';
import {
  type DetailedEvaluation,
  EVAL_DEFAULTS,
  EVAL_PRESETS,
  type EvalAnalyzerName,
  type EvalMode,
  type EvalOptions,
  type EvalPresetName,
  type EvalReport,
  evalAnalyzers,
  evalFusions,
  evalModes,
  readFusionConfigFile,
  runEvalDetailed,
  scoreRunDetailed,
  writeEvalReport,
} from './eval-run.js';

/* `zerda eval`, arguments: the flags read, checked against each other, and dispatched. */

/** `zerda eval` from command-line arguments; returns the exit code. */
export async function evalCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      mode: { type: 'string' },
      preset: { type: 'string' },
      k1: { type: 'string' },
      b: { type: 'string' },
      analyzer: { type: 'string' },
      depth: { type: 'string' },
      embeddings: { type: 'string' },
      'query-embeddings': { type: 'string' },
      dimension: { type: 'string' },
      fusion: { type: 'string' },
      'branch-k': { type: 'string' },
      'rrf-k': { type: 'string' },
      weights: { type: 'string' },
      'fusion-config': { type: 'string' },
      split: { type: 'string' },
      qrels: { type: 'string' },
      'write-run': { type: 'string' },
      run: { type: 'string' },
      report: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    evalHelp,
  );
  if (values.help) {
    io.stdout(evalHelp);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'missing the collection folder'
        : `expected one folder, got ${positionals.length}`,
      evalHelp,
    );
  }
  const folder = positionals[0] as string;
  const print = (report: EvalReport) =>
    io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatEvalReport(report));

  if (values.run !== undefined) {
    const retrievalFlags = [
      'mode',
      'preset',
      'k1',
      'b',
      'analyzer',
      'depth',
      'embeddings',
      'query-embeddings',
      'dimension',
      'fusion',
      'branch-k',
      'rrf-k',
      'weights',
      'fusion-config',
      'write-run',
    ] as const;
    const extra = retrievalFlags.filter((flag) => values[flag] !== undefined);
    if (extra.length > 0) {
      throw new UsageError(
        `--run scores a given run file; ${extra.map((flag) => `--${flag}`).join(', ')} cannot go with it (use --write-run to write the run Zerda produces)`,
        evalHelp,
      );
    }
    const bar = new ProgressBar(io);
    const scored = await scoreRunDetailed({
      folder,
      runPath: values.run,
      split: values.split,
      qrelsPath: values.qrels,
    });
    print(scored.report);
    if (values.report !== undefined) {
      await writeEvalReport(values.report, [{ ...scored, name: basename(values.run) }], scored.dataset, argv);
      bar.log(`report written to ${values.report}`);
    }
    return 0;
  }

  const mode = values.mode ?? EVAL_DEFAULTS.mode;
  if (!evalModes.includes(mode as EvalMode)) {
    throw new UsageError(`unknown mode '${mode}': expected ${evalModes.join(', ')}`, evalHelp);
  }
  const preset = values.preset ?? EVAL_DEFAULTS.preset;
  if (!Object.hasOwn(EVAL_PRESETS, preset)) {
    throw new UsageError(
      `unknown preset '${preset}': expected ${Object.keys(EVAL_PRESETS).join(' or ')}`,
      evalHelp,
    );
  }
  const analyzer = values.analyzer ?? EVAL_PRESETS[preset as EvalPresetName].analyzer;
  if (!(analyzer in evalAnalyzers)) {
    throw new UsageError(
      `unknown analyzer '${analyzer}': expected ${Object.keys(evalAnalyzers).join(' or ')}`,
      evalHelp,
    );
  }
  const fusion = values.fusion;
  if (fusion !== undefined && !evalFusions.includes(fusion as HybridFusionMethod)) {
    throw new UsageError(`unknown fusion '${fusion}': expected ${evalFusions.join(', ')}`, evalHelp);
  }
  const only = (flags: ReadonlyArray<keyof typeof values>, modes: readonly EvalMode[]) => {
    for (const flag of flags) {
      if (values[flag] !== undefined && !modes.includes(mode as EvalMode)) {
        throw new UsageError(`--${flag} applies to --mode ${modes.join(' or ')}, not ${mode}`, evalHelp);
      }
    }
  };
  // With --report every mode runs, so every mode's flags apply.
  if (values.report === undefined) {
    only(['k1', 'b'], ['keyword', 'hybrid']);
    only(['embeddings', 'query-embeddings', 'dimension'], ['vector', 'hybrid']);
    only(['fusion', 'branch-k', 'rrf-k', 'weights', 'fusion-config'], ['hybrid']);
  }
  if (values['fusion-config'] !== undefined) {
    const extra = (['fusion', 'branch-k', 'rrf-k', 'weights'] as const).filter(
      (flag) => values[flag] !== undefined,
    );
    if (extra.length > 0) {
      throw new UsageError(
        `--fusion-config sets the fusion; ${extra.map((flag) => `--${flag}`).join(', ')} cannot go with it (edit the file instead)`,
        evalHelp,
      );
    }
  }
  const fusionConfig =
    values['fusion-config'] === undefined ? undefined : await readFusionConfigFile(values['fusion-config']);
  if (values['query-embeddings'] !== undefined && values.embeddings === undefined) {
    throw new UsageError('--query-embeddings needs --embeddings (the document vectors)', evalHelp);
  }
  if (values.dimension !== undefined && values.embeddings !== undefined) {
    throw new UsageError(
      "--dimension sets the hash embedder's; with --embeddings the vectors set it",
      evalHelp,
    );
  }
  if (values['rrf-k'] !== undefined && fusion === 'weighted') {
    throw new UsageError('--rrf-k does not apply to --fusion weighted', evalHelp);
  }
  const depth = readNumber(values.depth, 'depth', evalHelp, { min: 1, integer: true });
  const branchK = readNumber(values['branch-k'], 'branch-k', evalHelp, { min: 1, integer: true });
  if (branchK !== undefined && branchK < (depth ?? EVAL_DEFAULTS.depth)) {
    throw new UsageError(
      `--branch-k must be at least the depth (${depth ?? EVAL_DEFAULTS.depth}), got ${branchK}`,
      evalHelp,
    );
  }
  const weights = readWeights(values.weights, 2, 'branch: keyword,vector', evalHelp);
  const options: EvalOptions = {
    folder,
    mode: mode as EvalMode,
    preset: preset as EvalPresetName,
    k1: readNumber(values.k1, 'k1', evalHelp, { min: 0 }),
    b: readNumber(values.b, 'b', evalHelp, { min: 0, max: 1 }),
    depth,
    analyzer: analyzer as EvalAnalyzerName,
    fusion: fusion as HybridFusionMethod | undefined,
    branchK,
    rrfK: readNumber(values['rrf-k'], 'rrf-k', evalHelp, { min: 0 }),
    weights: weights && { keyword: weights[0] as number, vector: weights[1] as number },
    ...(fusionConfig === undefined ? {} : { fusionConfig, fusionConfigPath: values['fusion-config'] }),
    embeddings: values.embeddings,
    queryEmbeddings: values['query-embeddings'],
    hashDimension: readNumber(values.dimension, 'dimension', evalHelp, {
      min: 1,
      max: 65_536,
      integer: true,
    }),
    split: values.split,
    qrelsPath: values.qrels,
    writeRunPath: values['write-run'],
  };
  const bar = new ProgressBar(io);
  const onQuery = (label: string) => (done: number, total: number) =>
    bar.update(
      `evaluating ${label}`,
      total > 0 ? done / total : undefined,
      `${done}/${total} queries`,
      done === total,
    );
  let detailed: DetailedEvaluation;
  try {
    detailed = await runEvalDetailed(options, { onQuery: onQuery(mode) });
  } finally {
    bar.clear();
  }
  print(detailed.report);
  if (values.report !== undefined) {
    // The report compares the three modes: run the two not run yet on the same collection.
    const results = new Map<EvalMode, DetailedEvaluation>([[mode as EvalMode, detailed]]);
    try {
      for (const other of evalModes) {
        if (results.has(other)) continue;
        const { writeRunPath: _, ...rest } = options;
        results.set(
          other,
          await runEvalDetailed(
            { ...rest, mode: other },
            { dataset: detailed.dataset, onQuery: onQuery(other) },
          ),
        );
      }
    } finally {
      bar.clear();
    }
    await writeEvalReport(
      values.report,
      evalModes.map((m) => ({ ...(results.get(m) as DetailedEvaluation), name: m })),
      detailed.dataset,
      argv,
    );
    bar.log(`report written to ${values.report}`);
  }
  return 0;
}
