import type { Qrels } from './types.js';

/** A document of a BEIR corpus. */
export interface BeirDocument {
  id: string;
  title: string;
  text: string;
}

/** A query of a BEIR collection. */
export interface BeirQuery {
  id: string;
  text: string;
}

/** A BEIR-layout collection, loaded. */
export interface BeirDataset {
  /** The folder's name (for example 'cisi'). */
  name: string;
  /** The folder, resolved. */
  folder: string;
  files: { corpus: string; queries: string; qrels: string };
  corpus: BeirDocument[];
  /** Every query of queries.jsonl, in file order. */
  queries: BeirQuery[];
  /** The queries to evaluate: those with at least one relevant judgment (grade > 0), in file order. */
  judgedQueries: BeirQuery[];
  qrels: Qrels;
  /** Things that did not stop loading but that a user may want to know. */
  warnings: string[];
}

export interface LoadBeirOptions {
  /** Which judgments to read: `qrels/<split>.tsv`, falling back to `qrels.tsv` (default 'test'). */
  split?: string;
  /** An explicit judgments file, overriding `split`. */
  qrelsPath?: string;
}

/**
 * The text BEIR's flat setting indexes for a document: title and text as one field
 * (`title + ' ' + text`, or the text alone when there is no title).
 */
export function beirDocumentText(document: { title?: string; text: string }): string {
  const title = document.title?.trim() ?? '';
  return title.length > 0 ? `${title} ${document.text}` : document.text;
}
