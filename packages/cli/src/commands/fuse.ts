import { basename } from 'node:path';
import {
  type FusedItem,
  type RankedList,
  type Run,
  type RunEntry,
  reciprocalRankFusion,
  scoreFusion,
} from '@zerda/core';
import { readTrecRun } from '@zerda/core/node';
import { parseCommandArgs, readNumber } from '../args.js';
import { preview, writeRunFile } from '../collection.js';
import { type CliIo, UsageError } from '../io.js';

/** How `zerda fuse` combines the runs. */
export type FuseMethod = 'rrf' | 'minmax';

export const fuseMethods: readonly FuseMethod[] = ['rrf', 'minmax'];

export interface FuseOptions {
  /** 'rrf': `Σ w_i / (k + rank_i)`; 'minmax': min-max normalised scores, weighted arithmetic mean. */
  method: FuseMethod;
  /** One weight per run (default 1 each). */
  weights?: readonly number[];
  /** RRF's k (default 60; rrf only). */
  k?: number;
  /** Use only the top `depth` documents of each run per query (default: all). */
  depth?: number;
  /** Keep at most this many fused documents per query (default: all). */
  top?: number;
  /** Names of the runs in contributions (default 'run1', 'run2', ...). */
  names?: readonly string[];
}

/** One fused document of a query, with how each run contributed. */
export interface FusedRunEntry extends RunEntry {
  contributions: FusedItem['contributions'];
}

/**
 * A query's documents in a run as a ranked list: by score, descending, equal scores by document
 * id, ascending (code-unit order), which is how Zerda's retrievers order their hits. (trec_eval
 * orders equal scores by id descending; the rank column of a run file is not used by either.)
 */
export function rankRun(entries: readonly RunEntry[], depth = Number.POSITIVE_INFINITY): RunEntry[] {
  const ranked = [...entries].sort(
    (a, b) => b.score - a.score || (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0),
  );
  return ranked.length > depth ? ranked.slice(0, depth) : ranked;
}

/**
 * Fuses runs query by query with Zerda's fusion functions: each run's documents for a query are
 * ranked (see `rankRun`), cut to `depth`, and fused by reciprocal rank fusion or by min-max score
 * fusion (a run that did not retrieve a document counts 0 for it). Queries come in the order they
 * first appear; a query missing from a run is fused with an empty list for it. Each query's fused
 * documents come best first, equal scores by id.
 */
export function fuseRuns(runs: readonly Run[], options: FuseOptions): Map<string, FusedRunEntry[]> {
  const { method } = options;
  const depth = options.depth ?? Number.POSITIVE_INFINITY;
  const top = options.top ?? Number.POSITIVE_INFINITY;
  const queryIds = new Set<string>();
  for (const run of runs) for (const queryId of run.keys()) queryIds.add(queryId);
  const fused = new Map<string, FusedRunEntry[]>();
  for (const queryId of queryIds) {
    const lists: RankedList[] = runs.map((run, index) => ({
      name: options.names?.[index] ?? `run${index + 1}`,
      items: rankRun(run.get(queryId) ?? [], depth).map((entry) => ({ id: entry.docId, score: entry.score })),
    }));
    const items =
      method === 'rrf'
        ? reciprocalRankFusion(lists, { k: options.k ?? 60, weights: options.weights })
        : scoreFusion(lists, {
            normalization: 'minmax',
            combination: 'arithmetic',
            weights: options.weights,
          });
    fused.set(
      queryId,
      items
        .slice(0, top)
        .map((item) => ({ docId: item.id, score: item.score, contributions: item.contributions })),
    );
  }
  return fused;
}

export interface FuseFilesOptions extends FuseOptions {
  /** The TREC run files to fuse (two for the command; any number here). */
  runs: readonly string[];
  /** Where to write the fused TREC run. */
  out: string;
  /** The tag of the fused run (default 'zerda-fuse-<method>'). */
  tag?: string;
}

/** What `zerda fuse` reports. */
export interface FuseReport {
  method: FuseMethod;
  k?: number;
  weights: number[];
  depth?: number;
  top?: number;
  inputs: Array<{ path: string; name: string; queries: number; documents: number }>;
  out: string;
  queries: number;
  documents: number;
  warnings: string[];
  /** The fused run, best first per query (not in the JSON output). */
  fused: Map<string, FusedRunEntry[]>;
}

/** Reads TREC run files, fuses them (see `fuseRuns`) and writes the fused run as a TREC run file. */
export async function runFuse(options: FuseFilesOptions): Promise<FuseReport> {
  const runs: Run[] = [];
  for (const path of options.runs) runs.push(await readTrecRun(path));
  const names = options.names ?? uniqueNames(options.runs);
  const weights = options.weights ? [...options.weights] : options.runs.map(() => 1);
  const fused = fuseRuns(runs, { ...options, names, weights });
  const warnings: string[] = [];
  runs.forEach((run, index) => {
    if (run.size === 0) warnings.push(`${options.runs[index]} holds no results`);
    const missing = [...fused.keys()].filter((queryId) => !run.has(queryId));
    if (run.size > 0 && missing.length > 0) {
      warnings.push(
        `${missing.length} query(ies) are not in ${options.runs[index]}; they were fused with nothing from it: ${preview(missing)}`,
      );
    }
  });
  const method = options.method;
  await writeRunFile(options.out, fused, { tag: options.tag ?? `zerda-fuse-${method}` });
  let documents = 0;
  for (const entries of fused.values()) documents += entries.length;
  return {
    method,
    ...(method === 'rrf' ? { k: options.k ?? 60 } : {}),
    weights,
    ...(options.depth === undefined ? {} : { depth: options.depth }),
    ...(options.top === undefined ? {} : { top: options.top }),
    inputs: runs.map((r, index) => ({
      path: options.runs[index] as string,
      name: names[index] as string,
      queries: r.size,
      documents: [...r.values()].reduce((sum, entries) => sum + entries.length, 0),
    })),
    out: options.out,
    queries: fused.size,
    documents,
    warnings,
    fused,
  };
}

/** Run names from file names, made unique. */
function uniqueNames(paths: readonly string[]): string[] {
  const names = paths.map((path) => basename(path));
  return names.map((name, index) => (names.indexOf(name) === index ? name : `${name}#${index + 1}`));
}

export const fuseHelp = `Usage: zerda fuse <runA> <runB> --method rrf|minmax --out <file> [options]

Fuses two TREC run files (qid Q0 docid rank score tag) query by query with Zerda's fusion
functions and writes the fused run as a TREC run file, so that Zerda's fusion can be checked
against another implementation, or used on runs from other systems.

Each run's documents for a query are ranked by score, descending; equal scores are ordered by
document id, ascending, as Zerda's retrievers order them (the rank column is not used, as in
trec_eval). A query missing from one run is fused with an empty list for that run.

Methods:
  rrf      reciprocal rank fusion: score = sum over runs of w / (k + rank), ranks from 1
  minmax   each run's scores min-max normalised per query to [0, 1], then the weighted
           arithmetic mean (a run that did not retrieve a document counts 0 for it)

Options:
  --method <m>        rrf | minmax (required)
  --out <file>        where to write the fused run (required)
  --weights <a,b>     one weight per run, >= 0 (default 1,1)
  --k <n>             RRF's k, >= 0 (default 60; rrf only)
  --depth <n>         use only the top n documents of each run per query (default: all)
  --top <n>           write at most n fused documents per query (default: all)
  --tag <name>        the run tag of the output (default zerda-fuse-<method>)
  --json              print the summary as JSON
  -h, --help          show this help

Exit codes: 0 success; 1 a run file is missing or malformed (the message names the file and
the line); 2 the command was called wrongly (bad flag or value).

Examples:
  pnpm zerda eval datasets/cisi --mode keyword --depth 200 --write-run bm25.run
  pnpm zerda eval datasets/cisi --mode vector --depth 200 --write-run vector.run
  pnpm zerda fuse bm25.run vector.run --method rrf --out fused.run
  pnpm zerda fuse bm25.run vector.run --method minmax --weights 0.7,0.3 --depth 100 --out fused.run
  pnpm zerda eval datasets/cisi --run fused.run
`;

/** `zerda fuse` from command-line arguments; returns the exit code. */
export async function fuseCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      method: { type: 'string' },
      out: { type: 'string' },
      weights: { type: 'string' },
      k: { type: 'string' },
      depth: { type: 'string' },
      top: { type: 'string' },
      tag: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    fuseHelp,
  );
  if (values.help) {
    io.stdout(fuseHelp);
    return 0;
  }
  if (positionals.length !== 2) {
    throw new UsageError(
      `expected two run files, got ${positionals.length === 0 ? 'none' : positionals.length}`,
      fuseHelp,
    );
  }
  const method = values.method;
  if (method === undefined) throw new UsageError('missing --method (rrf or minmax)', fuseHelp);
  if (!fuseMethods.includes(method as FuseMethod)) {
    throw new UsageError(`unknown method '${method}': expected rrf or minmax`, fuseHelp);
  }
  if (values.out === undefined || values.out.length === 0) {
    throw new UsageError('missing --out <file> for the fused run', fuseHelp);
  }
  if (values.k !== undefined && method !== 'rrf') {
    throw new UsageError("--k is RRF's constant; it applies to --method rrf only", fuseHelp);
  }
  if (values.tag !== undefined && (values.tag.length === 0 || /\s/u.test(values.tag))) {
    throw new UsageError(`--tag must be non-empty, without white space, got '${values.tag}'`, fuseHelp);
  }
  const report = await runFuse({
    runs: positionals,
    out: values.out,
    method: method as FuseMethod,
    weights: readWeights(values.weights, 2, 'run', fuseHelp),
    k: readNumber(values.k, 'k', fuseHelp, { min: 0 }),
    depth: readNumber(values.depth, 'depth', fuseHelp, { min: 1, integer: true }),
    top: readNumber(values.top, 'top', fuseHelp, { min: 1, integer: true }),
    tag: values.tag,
  });
  if (values.json) {
    const { fused: _fused, ...summary } = report;
    io.stdout(`${JSON.stringify(summary, null, 2)}\n`);
  } else {
    io.stdout(formatFuseReport(report));
  }
  return 0;
}

/** A short account of a fusion. */
export function formatFuseReport(report: FuseReport): string {
  const settings = [
    report.method === 'rrf' ? `RRF k=${report.k}` : 'min-max normalised scores, weighted arithmetic mean',
    `weights ${report.weights.join(',')}`,
    ...(report.depth === undefined ? [] : [`depth ${report.depth}`]),
    ...(report.top === undefined ? [] : [`top ${report.top}`]),
  ].join(', ');
  const lines = [
    ...report.inputs.map(
      (input, index) =>
        `  run ${index + 1}  ${input.path} (${input.queries} queries, ${input.documents.toLocaleString('en-US')} lines)`,
    ),
    `  fusion ${settings}`,
    `  wrote  ${report.out} (${report.queries} queries, ${report.documents.toLocaleString('en-US')} lines)`,
    ...report.warnings.map((warning) => `  warning: ${warning}`),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Weights from a flag: `count` comma-separated finite numbers >= 0, not all 0. Undefined when the
 * flag is absent.
 */
export function readWeights(
  value: string | undefined,
  count: number,
  what: string,
  help: string,
  flag = 'weights',
): number[] | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(',').map((part) => part.trim());
  const weights = parts.map((part) => (part === '' ? Number.NaN : Number(part)));
  if (parts.length !== count || weights.some((w) => !Number.isFinite(w) || w < 0)) {
    throw new UsageError(
      `--${flag} must be ${count} numbers >= 0 separated by a comma (one per ${what}), got '${value}'`,
      help,
    );
  }
  if (weights.every((w) => w === 0)) {
    throw new UsageError(`--${flag} cannot all be 0, got '${value}'`, help);
  }
  return weights;
}
