export type { Chunk, Metadata, MetadataValue } from './chunk.js';
export { contentHash } from './content-hash.js';
export type { ContextResult, ConversationHistory, ConversationTurn, QueryAnalysis } from './context.js';
export { QueryComplexity, QueryIntent, RetrievalMethod, SourceQuality } from './enums.js';
export { normalizeChunk, normalizeChunks, readMetadataValue } from './normalize-chunk.js';
export type { ScoredChunk, ScoreExplanation, SearchResult, SignalValues, Warning } from './scored-chunk.js';
