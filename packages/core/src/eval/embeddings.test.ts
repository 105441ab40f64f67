import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatasetError } from './dataset-error.js';
import { readEmbeddings } from './embeddings.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'zerda-embeddings-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let files = 0;
async function file(lines: string[]): Promise<string> {
  const path = join(root, `e${files++}.jsonl`);
  await writeFile(path, `\ufeff${lines.join('\r\n')}\n\n`);
  return path;
}

describe('readEmbeddings', () => {
  it('reads document and query vectors that share ids, told apart by "type"', async () => {
    const path = await file([
      '{"_id": "1", "type": "doc", "vector": [0.5, -1, 2]}',
      '{"_id": 1, "type": "query", "vector": [1, 0, 0]}',
      '{"_id": "2", "type": "doc", "vector": [0, 0, 0]}',
    ]);
    const read = await readEmbeddings(path);
    expect(read.dimension).toBe(3);
    expect([...read.documents.keys()]).toEqual(['1', '2']);
    expect(read.documents.get('1')).toEqual(new Float32Array([0.5, -1, 2]));
    expect(read.queries.get('1')).toEqual(new Float32Array([1, 0, 0]));
    expect(read.sources.queries.get('1')).toBe(`${path}:2`);
  });

  it('reads a file of one kind, and adds a second file to the first', async () => {
    const docs = await readEmbeddings(await file(['{"_id": "a", "vector": [1, 2]}']), { kind: 'doc' });
    const queries = await file([
      '{"_id": "a", "vector": [3, 4]}',
      '{"_id": "b", "type": "query", "vector": [5, 6]}',
    ]);
    const both = await readEmbeddings(queries, { kind: 'query', into: docs });
    expect(both).toBe(docs);
    expect(both.documents.size).toBe(1);
    expect([...both.queries.keys()]).toEqual(['a', 'b']);
    await expect(
      readEmbeddings(await file(['{"_id": "c", "vector": [1]}']), { kind: 'query', into: docs }),
    ).rejects.toThrow(
      /:1: the vector of query 'c' has 1 numbers, expected 2 \(as the vectors of .*e\d+\.jsonl\)/,
    );
  });

  it.each([
    [
      '{"_id": "1", "type": "doc", "vector": [1, 2, 3]}',
      /:2: the vector of document '1' has 3 numbers, expected 2 \(as the first vector, line 1\)/,
    ],
    [
      '{"_id": "1", "type": "doc", "vector": [1, null]}',
      /:2: the vector of document '1' holds null at position 1; every value must be a finite number$/,
    ],
    [
      '{"_id": "1", "type": "doc", "vector": [1, 1e39]}',
      /:2: the vector of document '1' holds 1e\+39 at position 1; .* within float32 range/,
    ],
    ['{"_id": "1", "type": "doc", "vector": [1, 1e999]}', /holds Infinity at position 1/],
    ['{"_id": "1", "type": "doc", "vector": []}', /:2: the vector of document '1' is empty/],
    [
      '{"_id": "1", "type": "doc"}',
      /:2: the vector of document '1' is missing or not an array \(got nothing\)/,
    ],
    ['{"_id": "", "type": "doc", "vector": [1, 2]}', /:2: missing or empty '_id' \(got the string ""\)/],
    ['{"type": "doc", "vector": [1, 2]}', /:2: missing or empty '_id' \(got nothing\)/],
    ['{"_id": "1", "vector": [1, 2]}', /:2: '1' has no "type"/],
    ['{"_id": "1", "type": "Doc", "vector": [1, 2]}', /:2: '1' has "type" "Doc"; expected "doc" or "query"/],
    ['{"_id": "0", "type": "doc", "vector": [1, 2]}', /:2: document '0' has a vector already \(.*:1\)/],
    ['[1, 2]', /:2: expected a JSON object \{"_id", "vector"\}, got an array/],
    ['{"_id": "1",', /:2: not valid JSON/],
  ])('refuses %s, naming the file and the line', async (bad, message) => {
    const path = await file(['{"_id": "0", "type": "doc", "vector": [0.1, 0.2]}', bad]);
    const error = await readEmbeddings(path).catch((e: unknown) => e);
    expect(DatasetError.isInstance(error)).toBe(true);
    expect((error as DatasetError).line).toBe(2);
    expect((error as DatasetError).message).toMatch(message);
  });

  it('checks the expected dimension and the kind of a one-kind file', async () => {
    await expect(
      readEmbeddings(await file(['{"_id": "a", "vector": [1, 2]}']), { kind: 'doc', dimension: 3 }),
    ).rejects.toThrow(/has 2 numbers, expected 3 \(the expected dimension\)/);
    await expect(
      readEmbeddings(await file(['{"_id": "a", "type": "query", "vector": [1]}']), { kind: 'doc' }),
    ).rejects.toThrow(/'a' has "type": "query" in a file of document vectors/);
    await expect(readEmbeddings(join(root, 'missing.jsonl'))).rejects.toThrow(
      /missing\.jsonl: file not found/,
    );
  });
});
