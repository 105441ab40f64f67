import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { BeirDataset, BeirDocument, BeirQuery, LoadBeirOptions } from './beir-types.js';
import { DatasetError } from './dataset-error.js';
import { readLines } from './lines.js';
import { countRelevant } from './metrics.js';
import { QrelsBuilder } from './trec.js';

/**
 * Loads a folder in BEIR layout: `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl`
 * (`_id`, `text`) and judgments from `qrels/<split>.tsv` or `qrels.tsv`
 * (`query-id<TAB>corpus-id<TAB>score` with a header line). Files are read line by line; a
 * malformed line is a DatasetError naming the file and the line.
 */
export async function loadBeirFolder(folder: string, options: LoadBeirOptions = {}): Promise<BeirDataset> {
  const root = resolve(folder);
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(root);
  } catch (error) {
    throw new DatasetError({ message: 'folder not found', path: root, cause: error });
  }
  if (!info.isDirectory()) throw new DatasetError({ message: 'is not a folder', path: root });

  const split = options.split ?? 'test';
  const qrelsPath = options.qrelsPath
    ? resolve(options.qrelsPath)
    : await firstExisting([join(root, 'qrels', `${split}.tsv`), join(root, 'qrels.tsv')], root, split);
  const files = {
    corpus: join(root, 'corpus.jsonl'),
    queries: join(root, 'queries.jsonl'),
    qrels: qrelsPath,
  };

  const warnings: string[] = [];
  const corpus = await readBeirCorpus(files.corpus);
  const queries = await readBeirQueries(files.queries);
  const builder = new QrelsBuilder(files.qrels);
  for await (const { line, text } of readLines(files.qrels)) builder.add(text, line);
  const qrels = builder.qrels;
  if (builder.duplicates > 0) {
    warnings.push(
      `${builder.duplicates} repeated judgment(s) in ${files.qrels}; the last grade of each was kept`,
    );
  }

  const queryIds = new Set(queries.map((q) => q.id));
  const judgedQueries = queries.filter((q) => {
    const judgments = qrels.get(q.id);
    return judgments !== undefined && countRelevant(judgments) > 0;
  });
  const missingQueries = [...qrels.keys()].filter(
    (id) => !queryIds.has(id) && countRelevant(qrels.get(id) as Map<string, number>) > 0,
  );
  if (missingQueries.length > 0) {
    warnings.push(
      `${missingQueries.length} judged query id(s) are not in queries.jsonl and cannot be run: ${preview(missingQueries)}`,
    );
  }
  const documentIds = new Set(corpus.map((d) => d.id));
  let unknownDocuments = 0;
  for (const judgments of qrels.values()) {
    for (const [docId, grade] of judgments) if (grade > 0 && !documentIds.has(docId)) unknownDocuments++;
  }
  if (unknownDocuments > 0) {
    warnings.push(
      `${unknownDocuments} relevant judgment(s) name documents that are not in the corpus (they still count as relevant)`,
    );
  }
  return { name: basename(root), folder: root, files, corpus, queries, judgedQueries, qrels, warnings };
}

/** Reads a BEIR corpus.jsonl: one `{"_id", "title", "text"}` object a line; ids must be unique. */
export async function readBeirCorpus(path: string): Promise<BeirDocument[]> {
  const documents: BeirDocument[] = [];
  const lines = new Map<string, number>();
  for await (const { line, text } of readLines(path)) {
    const record = parseRecord(text, path, line);
    const id = readId(record, path, line);
    const title = record.title ?? '';
    if (typeof title !== 'string') {
      throw new DatasetError({ message: `'title' must be a string, got ${typeName(title)}`, path, line });
    }
    const body = record.text ?? (title.length > 0 ? '' : undefined);
    if (typeof body !== 'string') {
      throw new DatasetError({ message: `'text' must be a string, got ${typeName(body)}`, path, line });
    }
    const previous = lines.get(id);
    if (previous !== undefined) {
      throw new DatasetError({
        message: `duplicate document id '${id}' (first on line ${previous})`,
        path,
        line,
      });
    }
    lines.set(id, line);
    documents.push({ id, title, text: body });
  }
  return documents;
}

/** Reads a BEIR queries.jsonl: one `{"_id", "text"}` object a line; ids must be unique. */
export async function readBeirQueries(path: string): Promise<BeirQuery[]> {
  const queries: BeirQuery[] = [];
  const lines = new Map<string, number>();
  for await (const { line, text } of readLines(path)) {
    const record = parseRecord(text, path, line);
    const id = readId(record, path, line);
    if (typeof record.text !== 'string') {
      throw new DatasetError({
        message: `'text' must be a string, got ${typeName(record.text)}`,
        path,
        line,
      });
    }
    const previous = lines.get(id);
    if (previous !== undefined) {
      throw new DatasetError({
        message: `duplicate query id '${id}' (first on line ${previous})`,
        path,
        line,
      });
    }
    lines.set(id, line);
    queries.push({ id, text: record.text });
  }
  return queries;
}

function parseRecord(text: string, path: string, line: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DatasetError({
      message: `not valid JSON (${error instanceof Error ? error.message : String(error)})`,
      path,
      line,
      cause: error,
    });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new DatasetError({ message: `expected a JSON object, got ${typeName(value)}`, path, line });
  }
  return value as Record<string, unknown>;
}

function readId(record: Record<string, unknown>, path: string, line: number): string {
  const raw = record._id;
  const id = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : raw;
  if (typeof id !== 'string' || id.length === 0) {
    throw new DatasetError({ message: `missing or empty '_id' (got ${typeName(raw)})`, path, line });
  }
  return id;
}

async function firstExisting(candidates: string[], folder: string, split: string): Promise<string> {
  for (const candidate of candidates) {
    try {
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // try the next one
    }
  }
  throw new DatasetError({
    message: `no judgments: expected qrels/${split}.tsv or qrels.tsv in the folder`,
    path: folder,
  });
}

function preview(ids: string[]): string {
  return ids.length <= 5 ? ids.join(', ') : `${ids.slice(0, 5).join(', ')} and ${ids.length - 5} more`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
