/** Relevance judgments: query id -> document id -> grade (> 0 is relevant; higher is more relevant). */
export type Qrels = Map<string, Map<string, number>>;

/** One retrieved document of a run. */
export interface RunEntry {
  docId: string;
  score: number;
}

/** A run: query id -> the retrieved documents (in any order; metrics sort them as trec_eval does). */
export type Run = Map<string, RunEntry[]>;
