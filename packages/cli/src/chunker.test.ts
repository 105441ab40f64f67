import { describe, expect, it } from 'vitest';
import { checkChunking, splitIntoChunks } from './ingest/chunker.js';
import { describeJsonProblem, findJsonSyntaxError } from './json-position.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

describe('splitIntoChunks', () => {
  it('keeps a short document whole, and gives nothing for an empty one', () => {
    expect(splitIntoChunks('  One short text.  ', { size: 10, overlap: 2 })).toEqual([
      { text: 'One short text.', start: 2, end: 17, words: 3 },
    ]);
    expect(splitIntoChunks(' \n\t ', { size: 10, overlap: 2 })).toEqual([]);
  });

  it('cuts at a paragraph break rather than inside a sentence', () => {
    const first = 'Alpha beta gamma delta. Epsilon zeta eta theta.';
    const second = 'Iota kappa lambda mu. Nu xi omicron pi.';
    const chunks = splitIntoChunks(`${first}\n\n${second}`, { size: 12, overlap: 0 });
    expect(chunks.map((c) => c.text)).toEqual([first, second]);
  });

  it('cuts at a sentence end when there is no paragraph break in reach, not after an abbreviation', () => {
    const text = 'One two three four five six. Seven eight e.g. nine ten eleven twelve. Thirteen fourteen.';
    const chunks = splitIntoChunks(text, { size: 12, overlap: 0 });
    expect(chunks[0]?.text).toBe('One two three four five six.');
    expect(chunks.map((c) => c.text).join(' ')).toBe(text);
  });

  it('splits a long run without boundaries by words, each chunk at most the size', () => {
    const text = Array.from({ length: 95 }, (_, i) => `w${i}`).join(' ');
    const chunks = splitIntoChunks(text, { size: 20, overlap: 0 });
    expect(chunks.map((c) => c.words)).toEqual([20, 20, 20, 20, 15]);
    expect(chunks.map((c) => c.text).join(' ')).toBe(text);
  });

  it('repeats the overlap, starting the next chunk on a sentence where it can', () => {
    const sentences = Array.from({ length: 12 }, (_, i) => `Sentence ${i} has five words.`);
    const text = sentences.join(' ');
    const chunks = splitIntoChunks(text, { size: 20, overlap: 6 });
    for (const chunk of chunks) {
      expect(chunk.words).toBeLessThanOrEqual(20);
      expect(text.slice(chunk.start, chunk.end)).toBe(chunk.text);
      expect(chunk.text).toMatch(/^Sentence \d+/);
      expect(chunk.text).toMatch(/words\.$/);
    }
    // Consecutive chunks share the last sentence (5 words <= overlap 6).
    expect(chunks[1]?.text.startsWith('Sentence 3 ')).toBe(true);
    expect(chunks[0]?.text.endsWith('Sentence 3 has five words.')).toBe(true);
    // Every sentence is in some chunk.
    for (const sentence of sentences) expect(chunks.some((c) => c.text.includes(sentence))).toBe(true);
  });

  it('treats a Markdown heading as a paragraph start', () => {
    const text = `intro words here and more words\n# Heading\nbody text goes on and on for a while`;
    const chunks = splitIntoChunks(text, { size: 10, overlap: 0 });
    expect(chunks[0]?.text).toBe('intro words here and more words');
    expect(chunks[1]?.text.startsWith('# Heading')).toBe(true);
    expect(words(chunks[1]?.text ?? '')).toBeLessThanOrEqual(10);
  });

  it('refuses an overlap above half the size', () => {
    expect(() => checkChunking({ size: 10, overlap: 6 })).toThrow(/at most|from 0 to half/);
    expect(() => checkChunking({ size: 0, overlap: 0 })).toThrow(/positive integer/);
  });
});

describe('findJsonSyntaxError', () => {
  it('accepts valid JSON and finds the first bad character', () => {
    expect(findJsonSyntaxError('{"a": [1, 2.5e3, true, null, "x\\n"]}')).toBeUndefined();
    expect(findJsonSyntaxError('{"year": }')).toMatchObject({
      offset: 9,
      line: 1,
      column: 10,
      message: expect.stringMatching(/expected a value.*found '}'/),
    });
    expect(findJsonSyntaxError("{'a': 1}")?.message).toMatch(/property name in double quotes/);
    expect(findJsonSyntaxError('{"a": 1,}')?.offset).toBe(8);
    expect(findJsonSyntaxError('{"a": 1')?.message).toMatch(/found the end of the text/);
    expect(findJsonSyntaxError('{"a":\n  tru}')).toMatchObject({ line: 2, column: 6 });
  });

  it('describes the problem with a caret under the position', () => {
    const text = '{"year": }';
    const problem = findJsonSyntaxError(text);
    expect(problem).toBeDefined();
    expect(describeJsonProblem(text, problem as NonNullable<typeof problem>)).toBe(
      `position 9: expected a value (an object, array, string, number, true, false or null), found '}'\n  {"year": }\n           ^`,
    );
  });
});
