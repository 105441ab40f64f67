import type { Chunk } from '../../model/index.js';

/** Chunk `i` of writer run `run` in the crash harness: what the writer adds, and what a reopen must give back. */
export function crashChunk(run: number, i: number): Chunk {
  return {
    id: `r${run}-${i}`,
    text: `chunk ${i} of run ${run} about ${['solar', 'wind', 'river'][i % 3]} power`,
    metadata: { run, i },
  };
}

/** The chunk an id of the crash harness names (undefined for an id it never writes). */
export function crashChunkOf(id: string): Chunk | undefined {
  const match = /^r(\d+)-(\d+)$/.exec(id);
  return match ? crashChunk(Number(match[1]), Number(match[2])) : undefined;
}
