import { InvalidArgumentError } from '../errors/index.js';
import { DatasetError } from './dataset-error.js';
import { compareRunEntries } from './metrics.js';
import type { Qrels, Run, RunEntry } from './types.js';

/**
 * Accumulates the lines of a TREC run file (`qid Q0 docid rank score tag`, white-space
 * separated). The rank column is checked but not used: order comes from the scores, as in
 * trec_eval. A document listed twice for one query is an error, as in trec_eval.
 */
export class RunBuilder {
  readonly run: Run = new Map();
  private readonly seen = new Map<string, Set<string>>();
  readonly tags = new Set<string>();

  constructor(private readonly source: string) {}

  add(text: string, line: number): void {
    const fields = text.trim().split(/\s+/u);
    if (fields.length !== 6) {
      throw new DatasetError({
        message: `expected 6 fields 'qid Q0 docid rank score tag', found ${fields.length}`,
        path: this.source,
        line,
      });
    }
    const [queryId, , docId, rank, scoreText, tag] = fields as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    if (!/^-?\d+$/u.test(rank)) {
      throw new DatasetError({ message: `rank '${rank}' is not an integer`, path: this.source, line });
    }
    const score = Number(scoreText);
    if (scoreText.length === 0 || !Number.isFinite(score)) {
      throw new DatasetError({
        message: `score '${scoreText}' is not a finite number`,
        path: this.source,
        line,
      });
    }
    let docs = this.seen.get(queryId);
    if (!docs) {
      docs = new Set();
      this.seen.set(queryId, docs);
      this.run.set(queryId, []);
    }
    if (docs.has(docId)) {
      throw new DatasetError({
        message: `document '${docId}' is listed twice for query '${queryId}'`,
        path: this.source,
        line,
      });
    }
    docs.add(docId);
    (this.run.get(queryId) as RunEntry[]).push({ docId, score });
    this.tags.add(tag);
  }
}

/** Parses the text of a TREC run file; `source` names it in error messages. */
export function parseTrecRun(text: string, source = '<run>'): Run {
  const builder = new RunBuilder(source);
  forEachLine(text, (line, number) => builder.add(line, number));
  return builder.run;
}

export interface FormatTrecRunOptions {
  /** The run's name in the last column (default 'zerda'); no white space. */
  tag?: string;
  /** Keep at most this many documents per query. */
  depth?: number;
}

/**
 * Formats a run as TREC lines `qid Q0 docid rank score tag`, each query's documents sorted as
 * trec_eval sorts them (score descending, then document id descending), ranks from 1.
 * Scores are written at full precision so that reading the file back gives the same order.
 */
export function formatTrecRun(run: Run, options: FormatTrecRunOptions = {}): string {
  const tag = options.tag ?? 'zerda';
  if (tag.length === 0 || /\s/u.test(tag)) {
    throw new InvalidArgumentError({
      argument: 'tag',
      value: tag,
      message: 'must be non-empty, without white space',
    });
  }
  const depth = options.depth ?? Number.POSITIVE_INFINITY;
  const lines: string[] = [];
  for (const [queryId, entries] of run) {
    checkField(queryId, 'query id');
    const sorted = [...entries].sort(compareRunEntries);
    const seen = new Set<string>();
    let rank = 0;
    for (const entry of sorted) {
      if (rank >= depth) break;
      if (seen.has(entry.docId)) continue;
      seen.add(entry.docId);
      checkField(entry.docId, 'document id');
      if (!Number.isFinite(entry.score)) {
        throw new InvalidArgumentError({
          argument: 'run',
          value: entry.score,
          message: `score of '${entry.docId}' for query '${queryId}' is not finite`,
        });
      }
      rank++;
      lines.push(`${queryId} Q0 ${entry.docId} ${rank} ${String(entry.score)} ${tag}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * Accumulates judgments from TREC qrels lines (`qid iteration docid grade`) or BEIR TSV lines
 * (`query-id<TAB>corpus-id<TAB>score`). The first line may be a header (its grade column is
 * not a number). A repeated (query, document) pair keeps the last grade and is counted.
 */
export class QrelsBuilder {
  readonly qrels: Qrels = new Map();
  /** Pairs judged more than once (the last grade was kept). */
  duplicates = 0;
  private first = true;

  constructor(private readonly source: string) {}

  add(text: string, line: number): void {
    const isFirst = this.first;
    this.first = false;
    const fields = text.includes('\t') ? text.split('\t').map((f) => f.trim()) : text.trim().split(/\s+/u);
    let queryId: string | undefined;
    let docId: string | undefined;
    let gradeText: string | undefined;
    if (fields.length === 3) [queryId, docId, gradeText] = fields;
    else if (fields.length === 4) [queryId, , docId, gradeText] = fields;
    else {
      throw new DatasetError({
        message: `expected 3 fields 'query-id<TAB>corpus-id<TAB>score' (or TREC's 4), found ${fields.length}`,
        path: this.source,
        line,
      });
    }
    if (gradeText === undefined || !/^[-+]?\d+$/u.test(gradeText)) {
      if (isFirst) return; // header line
      throw new DatasetError({
        message: `relevance grade '${gradeText ?? ''}' is not an integer`,
        path: this.source,
        line,
      });
    }
    if (!queryId || !docId) {
      throw new DatasetError({ message: 'empty query id or document id', path: this.source, line });
    }
    let judgments = this.qrels.get(queryId);
    if (!judgments) {
      judgments = new Map();
      this.qrels.set(queryId, judgments);
    }
    if (judgments.has(docId)) this.duplicates++;
    judgments.set(docId, Number(gradeText));
  }
}

/** Parses judgments in TREC or BEIR TSV form (see `QrelsBuilder`). */
export function parseQrels(text: string, source = '<qrels>'): Qrels {
  const builder = new QrelsBuilder(source);
  forEachLine(text, (line, number) => builder.add(line, number));
  return builder.qrels;
}

function forEachLine(text: string, visit: (line: string, number: number) => void): void {
  const lines = text.split(/\r?\n/u);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] as string;
    if (i === 0 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    if (line.trim().length > 0) visit(line, i + 1);
  }
}

function checkField(value: string, what: string): void {
  if (value.length === 0 || /\s/u.test(value)) {
    throw new InvalidArgumentError({
      argument: 'run',
      value,
      message: `${what} '${value}' cannot be written to a TREC run file (empty or contains white space)`,
    });
  }
}
