import { describe, expect, it } from 'vitest';
import { FilterError } from '../errors/index.js';
import {
  chromaFilterConvention,
  createChromaFilterConvention,
  createPineconeFilterConvention,
  type FilterConvention,
  faissFilterConvention,
  matchesDocIdFilter,
  parseFilter,
  pineconeFilterConvention,
  zerdaFilterConvention,
} from './index.js';

const translate = (convention: FilterConvention, filter: object) => convention.translate(parseFilter(filter));
const pushable = (convention: FilterConvention, filter: object) =>
  convention.canPushDown(parseFilter(filter));

describe('zerdaFilterConvention', () => {
  it('takes the whole language as canonical filter JSON', () => {
    expect(zerdaFilterConvention.option).toBe('filter');
    const filter = { a: 1, $not: { id: { $exists: true } }, tags: [] };
    expect(pushable(zerdaFilterConvention, filter)).toBe(true);
    expect(translate(zerdaFilterConvention, filter)).toEqual({
      $and: [{ a: { $eq: 1 } }, { $not: { id: { $exists: true } } }, { tags: { $in: [] } }],
    });
  });
});

describe('chromaFilterConvention', () => {
  const chroma = chromaFilterConvention;

  it('writes one key per object, explicit $eq, and $and for several fields', () => {
    expect(chroma.option).toBe('where');
    expect(translate(chroma, { color: 'red' })).toEqual({ color: { $eq: 'red' } });
    expect(translate(chroma, { color: 'red', n: { $gte: 2, $lt: 5 } })).toEqual({
      $and: [{ color: { $eq: 'red' } }, { n: { $gte: 2 } }, { n: { $lt: 5 } }],
    });
    expect(translate(chroma, { $or: [{ a: true }, { b: { $ne: 'x' } }] })).toEqual({
      $or: [{ a: { $eq: true } }, { b: { $ne: 'x' } }],
    });
  });

  it('unwraps $and / $or of one child (Chroma wants two or more)', () => {
    expect(translate(chroma, { $and: [{ a: 1 }] })).toEqual({ a: { $eq: 1 } });
    expect(translate(chroma, { $or: [{ $and: [{ a: 1 }] }] })).toEqual({ a: { $eq: 1 } });
  });

  it('splits $in / $nin lists by type (Chroma wants one type per list)', () => {
    expect(translate(chroma, { a: ['x', 1, true, 'y', 2] })).toEqual({
      $or: [{ a: { $in: ['x', 'y'] } }, { a: { $in: [true] } }, { a: { $in: [1, 2] } }],
    });
    expect(translate(chroma, { a: { $nin: ['x', 1] } })).toEqual({
      $and: [{ a: { $nin: ['x'] } }, { a: { $nin: [1] } }],
    });
  });

  it('guards non-integral bounds against the int/float truncation of local Chroma', () => {
    expect(translate(chroma, { n: 2.5 })).toEqual({ $and: [{ n: { $eq: 2.5 } }, { n: { $ne: 2 } }] });
    expect(translate(chroma, { n: { $ne: -2.5 } })).toEqual({
      $or: [{ n: { $ne: -2.5 } }, { n: { $eq: -2 } }],
    });
    expect(translate(chroma, { n: { $gt: 2.5 } })).toEqual({
      $or: [{ n: { $gt: 2.5 } }, { n: { $gte: 3 } }],
    });
    expect(translate(chroma, { n: { $gte: 2.5 } })).toEqual({
      $and: [{ n: { $gte: 2.5 } }, { n: { $ne: 2 } }],
    });
    expect(translate(chroma, { n: { $lt: -0.5 } })).toEqual({
      $or: [{ n: { $lt: -0.5 } }, { n: { $lte: -1 } }],
    });
    expect(translate(chroma, { n: { $lte: -2.5 } })).toEqual({
      $and: [{ n: { $lte: -2.5 } }, { n: { $ne: -2 } }],
    });
    expect(translate(chroma, { n: [1.5, 3] })).toEqual({
      $or: [{ n: { $in: [3] } }, { $and: [{ n: { $in: [1.5] } }, { n: { $nin: [1] } }] }],
    });
    expect(translate(chroma, { n: { $nin: [1.5] } })).toEqual({
      $or: [{ n: { $nin: [1.5] } }, { n: { $in: [1] } }],
    });
    // Integral bounds are exact and stay as written.
    expect(translate(chroma, { n: { $gt: 2 } })).toEqual({ n: { $gt: 2 } });
  });

  it('pushes negations down (De Morgan), as Chroma has no $not', () => {
    expect(translate(chroma, { $not: { $or: [{ a: 1 }, { b: ['x'] }] } })).toEqual({
      $and: [{ a: { $ne: 1 } }, { b: { $nin: ['x'] } }],
    });
    expect(translate(chroma, { $not: { a: 'x', b: { $ne: 'y' } } })).toEqual({
      $or: [{ a: { $ne: 'x' } }, { b: { $eq: 'y' } }],
    });
  });

  it('leaves client-side what Chroma cannot say with Zerda semantics', () => {
    expect(pushable(chroma, { a: { $exists: true } })).toBe(false);
    expect(pushable(chroma, { $not: { a: { $gt: 1 } } })).toBe(false);
    expect(pushable(chroma, { id: 'r1' })).toBe(false);
    expect(pushable(chroma, { a: { $in: [] } })).toBe(false);
    expect(pushable(chroma, { a: { $nin: [] } })).toBe(false);
    expect(pushable(chroma, { a: 2 ** 60 })).toBe(false);
    expect(pushable(chroma, { $or: [{ a: 1 }, { b: { $exists: false } }] })).toBe(false);
    expect(() => translate(chroma, { a: { $exists: true } })).toThrow(FilterError);
  });

  it('maps docId to the configured metadata key', () => {
    expect(translate(chroma, { docId: ['d1', 'd2'] })).toEqual({ docId: { $in: ['d1', 'd2'] } });
    const custom = createChromaFilterConvention({ docIdKey: '_docId' });
    expect(translate(custom, { docId: 'd1' })).toEqual({ _docId: { $eq: 'd1' } });
  });

  it('with arrayMetadata, string equality also tests $contains', () => {
    const arrays = createChromaFilterConvention({ arrayMetadata: true });
    expect(translate(arrays, { tags: 'a' })).toEqual({
      $or: [{ tags: { $eq: 'a' } }, { tags: { $contains: 'a' } }],
    });
    expect(translate(arrays, { tags: { $ne: 'a' } })).toEqual({
      $and: [{ tags: { $ne: 'a' } }, { tags: { $not_contains: 'a' } }],
    });
    expect(translate(arrays, { tags: ['a', 'b'] })).toEqual({
      $or: [{ tags: { $in: ['a', 'b'] } }, { tags: { $contains: 'a' } }, { tags: { $contains: 'b' } }],
    });
    expect(translate(arrays, { tags: { $nin: ['a'] } })).toEqual({
      $and: [{ tags: { $nin: ['a'] } }, { tags: { $not_contains: 'a' } }],
    });
    expect(translate(arrays, { n: 1 })).toEqual({ n: { $eq: 1 } });
  });
});

describe('pineconeFilterConvention', () => {
  const pinecone = pineconeFilterConvention;

  it('translates comparisons, ranges and $exists directly', () => {
    expect(pinecone.option).toBe('filter');
    expect(translate(pinecone, { genre: 'drama', year: { $gte: 2020, $lt: 2024.5 } })).toEqual({
      $and: [{ genre: { $eq: 'drama' } }, { year: { $gte: 2020 } }, { year: { $lt: 2024.5 } }],
    });
    expect(translate(pinecone, { a: { $exists: false } })).toEqual({ a: { $exists: false } });
    expect(translate(pinecone, { a: ['x', 'y'] })).toEqual({ a: { $in: ['x', 'y'] } });
  });

  it('makes $ne and $nin match a missing field, as Zerda does', () => {
    expect(translate(pinecone, { a: { $ne: 'x' } })).toEqual({
      $or: [{ a: { $ne: 'x' } }, { a: { $exists: false } }],
    });
    expect(translate(pinecone, { a: { $nin: ['x', 2] } })).toEqual({
      $or: [{ $and: [{ a: { $nin: ['x'] } }, { a: { $nin: [2] } }] }, { a: { $exists: false } }],
    });
  });

  it('writes boolean membership as $eq / $ne ($in takes strings and numbers)', () => {
    expect(translate(pinecone, { a: [true, 'x'] })).toEqual({
      $or: [{ a: { $in: ['x'] } }, { a: { $eq: true } }],
    });
    expect(translate(pinecone, { a: { $nin: [false] } })).toEqual({
      $or: [{ a: { $ne: false } }, { a: { $exists: false } }],
    });
  });

  it('pushes negations down; $not of a range and id stay client-side', () => {
    expect(translate(pinecone, { $not: { a: 'x', b: { $exists: true } } })).toEqual({
      $or: [{ a: { $ne: 'x' } }, { a: { $exists: false } }, { b: { $exists: false } }],
    });
    expect(pushable(pinecone, { $not: { a: { $lt: 1 } } })).toBe(false);
    expect(pushable(pinecone, { id: 'r1' })).toBe(false);
    expect(pushable(pinecone, { a: { $in: [] } })).toBe(false);
  });

  it('maps docId to the configured metadata key', () => {
    expect(translate(createPineconeFilterConvention({ docIdKey: 'doc' }), { docId: 'd1' })).toEqual({
      doc: { $eq: 'd1' },
    });
  });
});

describe('faissFilterConvention', () => {
  const faiss = faissFilterConvention;

  it('pushes docId equality and membership as an allow-list', () => {
    expect(faiss.option).toBe('docIdFilter');
    expect(translate(faiss, { docId: 'd1' })).toEqual(['d1']);
    expect(translate(faiss, { docId: ['d2', 'd1', 'd2'] })).toEqual(['d1', 'd2']);
    expect(translate(faiss, { $or: [{ docId: 'd3' }, { docId: { $in: ['d1'] } }] })).toEqual(['d1', 'd3']);
    expect(translate(faiss, { $not: { docId: { $nin: ['d1'] } } })).toEqual(['d1']);
    expect(translate(faiss, { docId: { $in: [] } })).toEqual([]);
  });

  it('pushes nothing else', () => {
    for (const filter of [
      { color: 'red' },
      { docId: { $ne: 'd1' } },
      { docId: { $nin: ['d1'] } },
      { docId: 5 },
      { docId: ['d1', 5] },
      { docId: { $exists: true } },
      { $or: [{ docId: 'd1' }, { color: 'red' }] },
      { docId: 'd1', $and: [{ docId: ['d1', 'd2'] }] },
    ]) {
      expect(pushable(faiss, filter)).toBe(false);
    }
    expect(() => translate(faiss, { color: 'red' })).toThrow(FilterError);
  });

  it('matches a record by its docId, falling back to metadata.docId', () => {
    expect(matchesDocIdFilter(['d1'], { id: 'r', docId: 'd1' })).toBe(true);
    expect(matchesDocIdFilter(['d1'], { id: 'r', metadata: { docId: 'd1' } })).toBe(true);
    expect(matchesDocIdFilter(new Set(['d1']), { id: 'r', metadata: { docId: ['d0', 'd1'] } })).toBe(true);
    expect(matchesDocIdFilter(['d1'], { id: 'r' })).toBe(false);
    expect(matchesDocIdFilter([], { id: 'r', docId: 'd1' })).toBe(false);
  });
});
