import type { Chunk, Metadata } from '@zerda/core';
import { splitIntoChunks } from './chunker.js';
import type { SourceDocument } from './sources.js';

/**
 * A batch of documents as chunks. A document of one chunk keeps its id; a longer one becomes
 * `<id>#1`, `<id>#2`, ... Each chunk's `docId` is the document's (or a Zerda chunk line's own
 * `docId`); its metadata holds `source`, `title` when known, and for a split document `chunk`
 * and `chunks`, then the document's own metadata (which wins on a shared key).
 */
export function chunkDocuments(
  documents: readonly SourceDocument[],
  chunking: { size: number; overlap: number },
): { chunks: Chunk[]; documentIds: string[]; empty: number; duplicates: number } {
  const byId = new Map<string, SourceDocument>();
  let duplicates = 0;
  for (const document of documents) {
    if (byId.has(document.id)) {
      duplicates++;
      byId.delete(document.id);
    }
    byId.set(document.id, document);
  }
  const chunksById = new Map<string, Chunk>();
  const documentIds: string[] = [];
  let empty = 0;
  for (const document of byId.values()) {
    const pieces = splitIntoChunks(document.text, chunking);
    if (pieces.length === 0) {
      empty++;
      continue;
    }
    documentIds.push(document.id);
    pieces.forEach((piece, index) => {
      const id = pieces.length === 1 ? document.id : `${document.id}#${index + 1}`;
      const metadata: Metadata = {
        source: document.source,
        ...(document.title === undefined ? {} : { title: document.title }),
        ...(pieces.length === 1 ? {} : { chunk: index + 1, chunks: pieces.length }),
        ...document.metadata,
      };
      chunksById.delete(id);
      chunksById.set(id, { id, text: piece.text, docId: document.docId ?? document.id, metadata });
    });
  }
  return { chunks: [...chunksById.values()], documentIds, empty, duplicates };
}
