import { describe, expect, it } from 'vitest';
import { ChunkValidationError, ZerdaError } from '../errors/index.js';
import { contentHash } from './content-hash.js';
import { normalizeChunk, normalizeChunks } from './normalize-chunk.js';

class Meta {
  constructor(
    public source: string,
    public page: number,
  ) {}
}

describe('normalizeChunk', () => {
  it('reads Zerda chunks, LangChain documents and content objects', () => {
    expect(normalizeChunk({ id: 'a', text: 't', docId: 'd', metadata: { x: 1 } })).toEqual({
      id: 'a',
      text: 't',
      docId: 'd',
      metadata: { x: 1 },
    });
    expect(normalizeChunk({ id: 'b', pageContent: 'p', metadata: new Meta('s', 2) })).toEqual({
      id: 'b',
      text: 'p',
      metadata: { source: 's', page: 2 },
    });
    expect(
      normalizeChunk({ id: 7, content: 'c', metadata: { tags: ['x', 'y'], ok: true, gone: undefined } }),
    ).toEqual({ id: '7', text: 'c', metadata: { tags: ['x', 'y'], ok: true } });
  });

  it('rejects what it cannot read, saying which chunk and why', () => {
    const cases: Array<[unknown, RegExp]> = [
      [null, /expected an object, got null/],
      ['text', /expected an object, got string/],
      [{ text: 'no id' }, /missing or empty 'id'/],
      [{ id: 'x', text: 3 }, /'text' must be a string, got number/],
      [{ id: 'x', pageContent: null }, /'pageContent' must be a string, got null/],
      [{ id: 'x', text: 't', docId: 5 }, /'docId' must be a string/],
      [{ id: 'x', text: 't', metadata: [] }, /'metadata' must be an object/],
      [{ id: 'x', text: 't', metadata: { n: Number.NaN } }, /field 'n'.*NaN/],
      [{ id: 'x', text: 't', metadata: { o: { deep: 1 } } }, /field 'o'.*object/],
      [{ id: 'x', text: 't', metadata: { l: [1, 2] } }, /field 'l'.*array/],
      [{ id: 'x', text: 't', metadata: { z: null } }, /field 'z'.*null/],
    ];
    for (const [input, message] of cases) {
      expect(() => normalizeChunk(input, 4)).toThrow(message);
      try {
        normalizeChunk(input, 4);
      } catch (error) {
        expect(ChunkValidationError.isInstance(error)).toBe(true);
        expect(ZerdaError.isInstance(error)).toBe(true);
        expect((error as ChunkValidationError).problems[0]?.index).toBe(4);
      }
    }
  });

  it('reports every bad chunk of a batch, duplicates included', () => {
    try {
      normalizeChunks([
        { id: 'a', text: '' },
        { id: 'a', text: 'again' },
        { text: 'x' },
        { id: 'c', text: 'fine' },
      ]);
      expect.unreachable();
    } catch (error) {
      const problems = (error as ChunkValidationError).problems;
      expect(problems.map((p) => p.index)).toEqual([1, 2]);
      expect(problems[0]?.reason).toMatch(/duplicate id, already used by chunk #0/);
      expect((error as Error).message).toMatch(/2 invalid chunk\(s\), nothing was written/);
    }
  });
});

describe('errors', () => {
  it('are recognised by brand across copies, not only by instanceof', () => {
    const foreign = Object.assign(new Error('x'), { [Symbol.for('zerda.error')]: true });
    expect(ZerdaError.isInstance(foreign)).toBe(true);
    expect(ChunkValidationError.isInstance(foreign)).toBe(false);
    expect(ZerdaError.isInstance(new Error('plain'))).toBe(false);
    const cause = new Error('root');
    const error = new ChunkValidationError({ problems: [{ index: 0, reason: 'r' }], cause });
    expect(error.cause).toBe(cause);
    expect(error.name).toBe('ChunkValidationError');
  });
});

describe('contentHash', () => {
  it('ignores case and white space differences, and nothing else', () => {
    expect(contentHash('Hello   World\n')).toBe(contentHash('hello world'));
    expect(contentHash('hello world')).not.toBe(contentHash('hello worlds'));
    expect(contentHash('')).toMatch(/^[0-9a-f]{64}$/);
  });
});
