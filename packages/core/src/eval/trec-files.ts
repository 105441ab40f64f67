// Evaluation files (Node only: `@zerda/core/node`): TREC runs and qrels read line by line, runs written.
import { writeFile } from 'node:fs/promises';
import { readLines } from './lines.js';
import { type FormatTrecRunOptions, formatTrecRun, QrelsBuilder, RunBuilder } from './trec.js';
import type { Qrels, Run } from './types.js';

/** Reads a TREC run file line by line (see `parseTrecRun`). */
export async function readTrecRun(path: string): Promise<Run> {
  const builder = new RunBuilder(path);
  for await (const { line, text } of readLines(path)) builder.add(text, line);
  return builder.run;
}

/** Writes a run as a TREC run file (see `formatTrecRun`). */
export async function writeTrecRun(
  path: string,
  run: Run,
  options: FormatTrecRunOptions = {},
): Promise<void> {
  await writeFile(path, formatTrecRun(run, options), 'utf8');
}

/** Reads judgments in TREC or BEIR TSV form, line by line (see `QrelsBuilder`). */
export async function readQrels(path: string): Promise<Qrels> {
  const builder = new QrelsBuilder(path);
  for await (const { line, text } of readLines(path)) builder.add(text, line);
  return builder.qrels;
}
