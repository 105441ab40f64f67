import type { Chunk } from '@zerda/core';
import { describe, expect, it } from 'vitest';
import { fromChromaRecord, toChromaMetadata } from './chroma-metadata.js';

function roundTrip(chunk: Chunk, docIdKey = 'docId'): Chunk {
  const encoded = toChromaMetadata(chunk, docIdKey);
  if (!('metadata' in encoded)) throw new Error(encoded.problem);
  // Through JSON, as the metadata travels to the server and back.
  const stored = JSON.parse(JSON.stringify(encoded.metadata)) as Record<string, unknown> | null;
  return fromChromaRecord(chunk.id, chunk.text, stored, docIdKey);
}

describe('Chroma metadata', () => {
  it('stores the docId pseudo-field under docIdKey, where filters on docId read it', () => {
    expect(toChromaMetadata({ id: 'a', text: '', docId: 'd1', metadata: { x: 1 } }, 'docId')).toEqual({
      metadata: { x: 1, docId: 'd1' },
    });
    expect(toChromaMetadata({ id: 'a', text: '', metadata: { docId: 'd2' } }, 'docId')).toEqual({
      metadata: { docId: 'd2', 'zerda:docIdSource': 'metadata' },
    });
    expect(toChromaMetadata({ id: 'a', text: '', docId: 'd1' }, 'source')).toEqual({
      metadata: { source: 'd1' },
    });
  });

  it('gives Chroma null, not an empty object, for no metadata', () => {
    expect(toChromaMetadata({ id: 'a', text: 't' }, 'docId')).toEqual({ metadata: null });
    expect(toChromaMetadata({ id: 'a', text: 't', metadata: {} }, 'docId')).toEqual({ metadata: null });
  });

  it('brings every chunk back exactly, wherever its docId was', () => {
    const chunks: Chunk[] = [
      { id: 'a', text: 'plain' },
      { id: 'b', text: 'own docId', docId: 'd1' },
      { id: 'c', text: 'metadata docId', metadata: { docId: 'd2', n: 1 } },
      { id: 'd', text: 'both', docId: 'd3', metadata: { docId: 'd4' } },
      { id: 'e', text: 'both, equal', docId: 'd5', metadata: { docId: 'd5' } },
      { id: 'f', text: 'numeric metadata docId', metadata: { docId: 7 } },
      { id: 'g', text: 'types', metadata: { s: 'x', i: 3, f: 0.5, t: true, u: false, e: '' } },
    ];
    for (const docIdKey of ['docId', 'source']) {
      for (const chunk of chunks)
        expect(roundTrip(chunk, docIdKey), `${chunk.id} via ${docIdKey}`).toEqual(chunk);
    }
  });

  it('refuses what Chroma cannot store, saying why', () => {
    const problem = (chunk: Chunk, docIdKey = 'docId') => {
      const encoded = toChromaMetadata(chunk, docIdKey);
      return 'problem' in encoded ? encoded.problem : undefined;
    };
    expect(problem({ id: 'a', text: '', metadata: { tags: ['x'] } })).toMatch(/'tags' is a list/);
    expect(problem({ id: 'a', text: '', metadata: { 'chroma:x': 1 } })).toMatch(/reserved by Chroma/);
    expect(problem({ id: 'a', text: '', metadata: { 'zerda:x': 1 } })).toMatch(/reserved by this store/);
    expect(problem({ id: 'a', text: '', metadata: { source: 'x' } }, 'source')).toMatch(/docIdKey/);
  });

  it('reads records written by other tools as they are', () => {
    expect(fromChromaRecord('x', null, { docId: 5, page: 2, nothing: null }, 'docId')).toEqual({
      id: 'x',
      text: '',
      metadata: { docId: 5, page: 2 },
    });
    expect(fromChromaRecord('y', 'text', null, 'docId')).toEqual({ id: 'y', text: 'text' });
  });
});
