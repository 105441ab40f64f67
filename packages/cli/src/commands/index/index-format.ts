import type { SourceProblem } from '../../ingest/sources.js';
import type { CliIo } from '../../io.js';
import { formatCount, formatDuration, type ProgressBar } from '../../progress.js';
import type { IndexEvent, IndexSummary } from './index-run.js';

/** The summary of a run, as text. */
export function formatIndexSummary(summary: IndexSummary): string {
  const seconds = summary.elapsedMs / 1000;
  const rate = seconds > 0 ? summary.chunks / seconds : 0;
  const settings = summary.settings;
  const lines: string[] = [];
  if (summary.interrupted) {
    lines.push(
      `Interrupted: ${formatCount(summary.documents)} documents (${formatCount(summary.chunks)} chunks) of this run were stored, in whole batches; documents read after the last whole batch were not.`,
      'Run the same command again to add the rest: documents already stored are replaced, not duplicated.',
    );
  } else {
    lines.push(
      `Indexed ${formatCount(summary.documents)} documents (${formatCount(summary.chunks)} chunks) from ${formatCount(summary.files)} file${summary.files === 1 ? '' : 's'} in ${seconds.toFixed(1)} s (${formatCount(rate)} chunks/s).`,
    );
  }
  lines.push(
    `The store ${summary.store} holds ${formatCount(summary.totals.documents)} documents, ${formatCount(summary.totals.chunks)} chunks: backend ${settings.backend.name}, hash embedder (${settings.embedder.dimension} dimensions), analyzer ${settings.analyzer.name}, BM25 k1=${settings.keyword.k1} b=${settings.keyword.b}, chunks of at most ${settings.chunking.size} words with ${settings.chunking.overlap} words of overlap.`,
  );
  const notes: string[] = [];
  if (summary.emptyDocuments > 0)
    notes.push(`${formatCount(summary.emptyDocuments)} empty documents skipped`);
  if (summary.duplicateDocuments > 0)
    notes.push(
      `${formatCount(summary.duplicateDocuments)} documents repeated an id in the same batch (the later kept)`,
    );
  if (summary.ignoredFiles > 0)
    notes.push(`${formatCount(summary.ignoredFiles)} files of other types in the folders ignored`);
  if (notes.length > 0) lines.push(`Note: ${notes.join('; ')}.`);
  if (summary.problems.length > 0) {
    const files = summary.problems.filter((p) => p.line === undefined).length;
    const lineProblems = summary.problems.length - files;
    lines.push(
      `${summary.problems.length} problem${summary.problems.length === 1 ? '' : 's'} (${files} file${files === 1 ? '' : 's'} not read, ${lineProblems} line${lineProblems === 1 ? '' : 's'} skipped):`,
    );
    for (const problem of summary.problems.slice(0, 20)) lines.push(`  ${describeProblem(problem)}`);
    if (summary.problems.length > 20) lines.push(`  and ${summary.problems.length - 20} more`);
  }
  if (summary.totals.chunks > 0) lines.push(`Search it: zerda search "<query>" --store ${summary.store}`);
  return `${lines.join('\n')}\n`;
}

export function describeProblem(problem: SourceProblem): string {
  return `${problem.path}${problem.line === undefined ? '' : ` line ${problem.line}`}: ${problem.message}`;
}

/**
 * Progress on standard error: on a terminal, a bar with documents, chunks per second and the time
 * left (from the bytes read of the total); otherwise a line per batch stored. Problems are named
 * as they happen, either way.
 */
export function progressReporter(io: CliIo, bar: ProgressBar): (event: IndexEvent) => void {
  let started = performance.now();
  let totalBytes = 0;
  let last: Extract<IndexEvent, { type: 'progress' }> | undefined;
  const rate = (chunks: number, ms: number) => (ms > 0 ? (chunks * 1000) / ms : 0);
  const eta = (bytes: number, elapsedMs: number) =>
    totalBytes > 0 && bytes > 0 ? ((elapsedMs / 1000) * (totalBytes - bytes)) / bytes : undefined;
  return (event) => {
    switch (event.type) {
      case 'start': {
        started = performance.now();
        totalBytes = event.totalBytes;
        const existing = event.existing;
        const line = `indexing ${event.files} file${event.files === 1 ? '' : 's'}${totalBytes > 0 ? ` (${formatBytes(totalBytes)})` : ''} into ${event.store.backend.name} store${existing.chunks > 0 ? ` holding ${formatCount(existing.documents)} documents` : ''}`;
        bar.log(line);
        return;
      }
      case 'problem':
        bar.log(`warning: ${describeProblem(event.problem)} (skipped)`);
        return;
      case 'progress': {
        last = event;
        const left = eta(event.bytes, event.elapsedMs);
        bar.update(
          'indexing',
          totalBytes > 0 ? event.bytes / totalBytes : undefined,
          `${formatCount(event.documents)} docs  ${formatCount(event.chunks)} chunks  ${formatCount(rate(event.chunks, event.elapsedMs))} chunks/s${left === undefined ? '' : `  ETA ${formatDuration(left)}`}`,
        );
        return;
      }
      case 'commit': {
        if (bar.enabled) return;
        const elapsed = performance.now() - started;
        const left = last ? eta(last.bytes, last.elapsedMs) : undefined;
        const percent = totalBytes > 0 && last ? ` ${Math.floor((100 * last.bytes) / totalBytes)}%,` : '';
        io.stderr(
          `committed batch ${event.batches}: ${formatCount(event.documents)} documents, ${formatCount(event.chunks)} chunks stored by this run (store: ${formatCount(event.store.documents)} documents);${percent} ${formatCount(rate(event.chunks, elapsed))} chunks/s${left === undefined ? '' : `, about ${formatDuration(left)} left`}\n`,
        );
        return;
      }
    }
  };
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}
