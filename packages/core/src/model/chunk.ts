/** A metadata value: what every backend can store and every filter can compare. */
export type MetadataValue = string | number | boolean | string[];

/** Structured data about a chunk, used by filters and ranking. */
export type Metadata = Record<string, MetadataValue>;

/** The unit Zerda indexes and returns: a passage of text with a stable id. */
export interface Chunk {
  /** Unique, non-empty; the identity used by every index, fusion and deduplication. */
  id: string;
  text: string;
  /** The source document this chunk belongs to (several chunks may share one). */
  docId?: string;
  metadata?: Metadata;
}
