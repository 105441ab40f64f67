export enum QueryIntent {
  Factual = 'factual',
  Reasoning = 'reasoning',
  Comparative = 'comparative',
  Procedural = 'procedural',
  Code = 'code',
  Summarize = 'summarize',
  Unknown = 'unknown',
}

export enum QueryComplexity {
  Low = 'low',
  Medium = 'medium',
  High = 'high',
}

export enum RetrievalMethod {
  Vector = 'vector',
  Keyword = 'keyword',
  Metadata = 'metadata',
  Hybrid = 'hybrid',
}

/** How trustworthy a source is; higher is better. */
export enum SourceQuality {
  High = 3,
  Medium = 2,
  Low = 1,
  Unknown = 0,
}
