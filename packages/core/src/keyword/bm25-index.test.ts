import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChunkValidationError, IndexFormatError, InvalidArgumentError } from '../errors/index.js';
import type { Analyzer } from '../text/index.js';
import { seededRandom as random } from '../vector/__tests__/clustered-data.js';
import { BM25_FORMAT_VERSION, decodeSnapshot, encodeSnapshot } from './bm25-format.js';
import { BM25Index } from './bm25-index.js';
import { loadBM25Index, saveBM25Index } from './keyword-files.js';

/** A plain analyser, so these tests exercise the index alone. */
const whitespace: Analyzer = {
  name: 'test-whitespace',
  analyze: (text) =>
    text
      .toLowerCase()
      .split(/\s+/u)
      .filter((term) => term.length > 0 && term !== 'the'),
};

/** Zipf-like words: head words hit most documents, as in real text. */
function zipfCorpus(seed: number, documents: number, vocabulary = 400): { id: string; text: string }[] {
  const next = random(seed);
  const word = () => `w${Math.floor(vocabulary ** (next() ** 1.6))}`;
  return Array.from({ length: documents }, (_, i) => ({
    id: `doc-${i}`,
    text: Array.from({ length: 5 + Math.floor(next() * 60) }, word).join(' '),
  }));
}

function queries(seed: number, count: number, vocabulary = 400): string[] {
  const next = random(seed);
  return Array.from({ length: count }, () =>
    Array.from(
      { length: 1 + Math.floor(next() * 6) },
      () => `w${Math.floor(vocabulary ** (next() ** 1.6))}`,
    ).join(' '),
  );
}

/** Textbook BM25 computed from scratch for every document: the reference. */
function referenceBm25(documents: { id: string; text: string }[], query: string, k1: number, b: number) {
  const analysed = documents.map((d) => whitespace.analyze(d.text));
  const n = documents.length;
  const averageLength = analysed.reduce((sum, terms) => sum + terms.length, 0) / n;
  const df = new Map<string, number>();
  for (const terms of analysed) for (const term of new Set(terms)) df.set(term, (df.get(term) ?? 0) + 1);
  const scores = new Map<string, number>();
  analysed.forEach((terms, i) => {
    let score = 0;
    let matched = false;
    for (const term of whitespace.analyze(query)) {
      const tf = terms.filter((t) => t === term).length;
      if (tf === 0) continue;
      matched = true;
      const d = df.get(term) as number;
      const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
      score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * terms.length) / averageLength));
    }
    if (matched) scores.set((documents[i] as { id: string }).id, score);
  });
  return scores;
}

function expectSameHits(actual: { id: string; score: number }[], expected: { id: string; score: number }[]) {
  expect(actual.map((hit) => hit.id)).toEqual(expected.map((hit) => hit.id));
  actual.forEach((hit, i) => {
    expect(hit.score).toBeCloseTo((expected[i] as { score: number }).score, 9);
  });
}

describe('BM25Index', () => {
  it('scores exactly as textbook BM25 computed from scratch', () => {
    const documents = zipfCorpus(1, 300);
    const index = new BM25Index({ analyzer: whitespace, k1: 1.2, b: 0.75 });
    index.add(documents);
    for (const query of queries(2, 40)) {
      const reference = referenceBm25(documents, query, 1.2, 0.75);
      const hits = index.search(query, 500, { exhaustive: true });
      expect(hits.length).toBe(reference.size);
      for (const hit of hits) expect(hit.score).toBeCloseTo(reference.get(hit.id) as number, 9);
    }
  });

  it('returns exactly the top k of the exhaustive scorer when pruning with MaxScore', () => {
    const documents = zipfCorpus(3, 3000, 2000);
    const index = new BM25Index({ analyzer: whitespace });
    // Several batches, so that pruning runs across several segments.
    for (let i = 0; i < documents.length; i += 700) index.add(documents.slice(i, i + 700));
    let compared = 0;
    for (const k of [1, 3, 10, 50]) {
      for (const query of queries(4, 150, 2000)) {
        const exhaustive = index.search(query, k, { exhaustive: true });
        const pruned = index.search(query, k);
        expect(pruned).toEqual(exhaustive);
        compared += exhaustive.length;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('after adds, replacements and removals ranks as an index built from scratch', () => {
    const documents = zipfCorpus(5, 1200);
    const incremental = new BM25Index({ analyzer: whitespace });
    for (let i = 0; i < documents.length; i += 37) incremental.add(documents.slice(i, i + 37));
    // Replace every fifth document, remove every seventh.
    const replaced = documents
      .filter((_, i) => i % 5 === 0)
      .map((d, i) => ({ id: d.id, text: `w1 w2 w3 extra${i % 9}` }));
    incremental.add(replaced);
    const removed = documents.filter((_, i) => i % 7 === 0 && i % 5 !== 0).map((d) => d.id);
    expect(incremental.remove(removed)).toBe(removed.length);
    expect(incremental.remove(['not-there'])).toBe(0);

    const finalDocuments = new Map(documents.map((d) => [d.id, d]));
    for (const d of replaced) finalDocuments.set(d.id, d);
    for (const id of removed) finalDocuments.delete(id);
    const fresh = new BM25Index({ analyzer: whitespace });
    fresh.add(finalDocuments.values());

    expect(incremental.size).toBe(fresh.size);
    for (const query of [...queries(6, 60), 'extra3 w1', 'w2']) {
      expectSameHits(incremental.search(query, 20), fresh.search(query, 20));
    }
    incremental.optimize();
    expect(incremental.stats().segments).toBe(1);
    for (const query of queries(7, 30))
      expectSameHits(incremental.search(query, 20), fresh.search(query, 20));
  });

  it('builds the forward index range by range as removals reach them, and removes with exact statistics', () => {
    const documents = zipfCorpus(15, 3000);
    const index = new BM25Index({ analyzer: whitespace });
    index.add(documents);
    const built = index.stats();
    expect(built.segments).toBe(1);
    // A range is 1,024 documents here (the smallest): this vocabulary is small.
    const postingsOf = (from: number, to: number) =>
      documents.slice(from, to).reduce((sum, d) => sum + new Set(whitespace.analyze(d.text)).size, 0);
    index.remove(['doc-17']);
    // The first removal keeps each term's first document, and builds the first range: an offset per
    // document (and one more), a term id per posting.
    const firstRange = 4 * built.terms + 4 * 1025 + 4 * postingsOf(0, 1024);
    expect(index.stats().arrayBytes - built.arrayBytes).toBe(firstRange);
    index.remove(['doc-18', 'doc-1023']);
    expect(index.stats().arrayBytes - built.arrayBytes).toBe(firstRange);
    index.remove(['doc-2999']);
    const lastRange = 4 * (3000 - 2048 + 1) + 4 * postingsOf(2048, 3000);
    expect(index.stats().arrayBytes - built.arrayBytes).toBe(firstRange + lastRange);

    const removed = new Set(['doc-17', 'doc-18', 'doc-1023', 'doc-2999']);
    const fresh = new BM25Index({ analyzer: whitespace });
    fresh.add(documents.filter((d) => !removed.has(d.id)));
    for (const query of queries(16, 40)) {
      expect(index.search(query, 10, { exhaustive: true })).toEqual(
        fresh.search(query, 10, { exhaustive: true }),
      );
    }
    // Every document removed, range by range, then a few added back: scored as a fresh index of
    // those few, which needs every term's document frequency to have fallen to 0.
    index.remove(
      documents.map((d) => d.id).filter((id) => !removed.has(id)),
      { compact: false },
    );
    expect(index.size).toBe(0);
    const few = documents.slice(100, 110);
    index.add(few);
    const freshFew = new BM25Index({ analyzer: whitespace });
    freshFew.add(few);
    for (const query of queries(17, 20)) {
      expect(index.search(query, 10, { exhaustive: true })).toEqual(
        freshFew.search(query, 10, { exhaustive: true }),
      );
    }
  });

  it('keeps segments logarithmic and compacts after many removals', () => {
    const index = new BM25Index({ analyzer: whitespace });
    const documents = zipfCorpus(8, 2048, 100);
    for (const document of documents) index.add([document]);
    expect(index.stats().segments).toBeLessThanOrEqual(12);
    index.remove(documents.slice(0, 1800).map((d) => d.id));
    expect(index.size).toBe(248);
    const fresh = new BM25Index({ analyzer: whitespace });
    fresh.add(documents.slice(1800));
    for (const query of queries(9, 20, 100)) expectSameHits(index.search(query, 10), fresh.search(query, 10));
  });

  it('finds, replaces and removes every document by id after a first batch, and after one that follows the removal of all', () => {
    const index = new BM25Index({ analyzer: whitespace });
    const documents = zipfCorpus(31, 300, 80);
    // A first batch (its map of places becomes the index's map of slots), numeric ids included.
    index.add([...documents, { id: 7 as unknown as string, text: 'seven w1' }]);
    expect(index.size).toBe(301);
    for (const document of documents) expect(index.has(document.id)).toBe(true);
    expect(index.has('7')).toBe(true);
    // A second batch: replacements and new ids go into the same map.
    index.add([
      { id: 'doc-5', text: 'replacedword' },
      { id: 'later', text: 'laterword' },
    ]);
    expect(index.size).toBe(302);
    expect(index.search('replacedword', 5).map((hit) => hit.id)).toEqual(['doc-5']);
    expect(index.remove(['doc-0', 'doc-299', 'later', '7', 'unknown'])).toBe(4);
    expect([index.has('doc-0'), index.has('doc-1'), index.has('later')]).toEqual([false, true, false]);
    const fresh = new BM25Index({ analyzer: whitespace });
    fresh.add([
      ...documents.slice(1, 299).filter((d) => d.id !== 'doc-5'),
      { id: 'doc-5', text: 'replacedword' },
    ]);
    for (const query of queries(32, 20, 80)) expectSameHits(index.search(query, 10), fresh.search(query, 10));

    // Everything removed and renumbered: the next batch is numbered from slot 0 again.
    index.remove(documents.map((d) => d.id));
    index.optimize();
    expect(index.size).toBe(0);
    index.add(documents.slice(0, 50));
    expect(index.size).toBe(50);
    expect(index.remove(['doc-10', 'doc-60'])).toBe(1);
    expect(index.has('doc-49')).toBe(true);
    const again = new BM25Index({ analyzer: whitespace });
    again.add(documents.slice(0, 50).filter((d) => d.id !== 'doc-10'));
    for (const query of queries(33, 20, 80)) expectSameHits(index.search(query, 10), again.search(query, 10));

    // Everything removed but not renumbered: no id is left, yet the next batch's slots follow the old ones.
    index.remove(documents.map((d) => d.id));
    expect(index.size).toBe(0);
    index.add(documents.slice(100, 140));
    expect(index.remove(['doc-100'])).toBe(1);
    expect([index.has('doc-100'), index.has('doc-139')]).toEqual([false, true]);
    const third = new BM25Index({ analyzer: whitespace });
    third.add(documents.slice(101, 140));
    for (const query of queries(34, 20, 80)) expectSameHits(index.search(query, 10), third.search(query, 10));
  });

  it('honours an accept filter without changing scores', () => {
    const documents = zipfCorpus(10, 500);
    const index = new BM25Index({ analyzer: whitespace });
    index.add(documents);
    const even = (id: string) => Number(id.slice(4)) % 2 === 0;
    for (const query of queries(11, 20)) {
      const filtered = index.search(query, 10, { accept: even });
      const all = index
        .search(query, 1000)
        .filter((hit) => even(hit.id))
        .slice(0, 10);
      expectSameHits(filtered, all);
    }
  });

  it('answers an empty query, or one of unknown or stop words, with no hits', () => {
    const index = new BM25Index({ analyzer: whitespace });
    index.add([{ id: 'a', text: 'the quick fox' }]);
    expect(index.search('', 10)).toEqual([]);
    expect(index.search('the the', 10)).toEqual([]);
    expect(index.search('unknown', 10)).toEqual([]);
    expect(new BM25Index({ analyzer: whitespace }).search('fox', 10)).toEqual([]);
  });

  it('refuses a bad batch with a typed error naming the chunk, leaving the index unchanged', () => {
    const index = new BM25Index({ analyzer: whitespace });
    index.add([{ id: 'a', text: 'alpha beta' }]);
    const before = index.search('alpha beta gamma', 10);
    const bad: unknown[][] = [
      [{ id: 'b', text: 'gamma' }, { text: 'no id here' }],
      [
        { id: 'b', text: 'gamma' },
        { id: 'c', text: 42 },
      ],
      [
        { id: 'b', text: 'gamma' },
        { id: 'b', text: 'gamma again' },
      ],
      [{ id: '', text: 'empty id' }],
    ];
    const reasons: string[] = [];
    for (const batch of bad) {
      try {
        index.add(batch as never);
        expect.unreachable('the batch should have been refused');
      } catch (error) {
        expect(ChunkValidationError.isInstance(error)).toBe(true);
        const problem = (error as ChunkValidationError).problems[0];
        expect(problem?.index).toBe(batch.length === 1 ? 0 : 1);
        reasons.push((error as Error).message);
      }
      expect(index.size).toBe(1);
      expect(index.search('alpha beta gamma', 10)).toEqual(before);
    }
    expect(reasons[1]).toContain("id 'c'");
    expect(reasons[2]).toContain('duplicate id');
  });

  it('scores exactly as textbook BM25 a batch with documents of no terms and one longer than a build chunk', () => {
    const long = Array.from({ length: 70_000 }, (_, i) => `w${i % 3 === 0 ? 1 : i}`).join(' ');
    const documents = [
      { id: 'empty-first', text: 'the' },
      ...zipfCorpus(13, 30),
      { id: 'empty-middle', text: '' },
      { id: 'long', text: long },
      ...zipfCorpus(14, 30).map((d) => ({ id: `${d.id}-b`, text: d.text })),
      { id: 'empty-last', text: 'the the' },
    ];
    const index = new BM25Index({ analyzer: whitespace, k1: 1.2, b: 0.75 });
    index.add(documents);
    expect(index.size).toBe(documents.length);
    for (const query of [...queries(15, 30), 'w1 w69998', 'w3 w5']) {
      const reference = referenceBm25(documents, query, 1.2, 0.75);
      const hits = index.search(query, 100, { exhaustive: true });
      expect(hits.length).toBe(reference.size);
      for (const hit of hits) expect(hit.score).toBeCloseTo(reference.get(hit.id) as number, 9);
      expect(index.search(query, 10)).toEqual(hits.slice(0, 10));
    }
  });

  it('is left as it was by an analyser that fails part-way through a batch, and builds the next batch as from scratch', () => {
    const failing: Analyzer = {
      name: 'test-failing',
      analyze: (text) => {
        if (text.includes('boom')) throw new Error('analyser failed');
        return whitespace.analyze(text);
      },
    };
    const documents = zipfCorpus(11, 200);
    const index = new BM25Index({ analyzer: failing });
    index.add(documents.slice(0, 50));
    const before = index.search('w1 w2 w7', 20);
    // The failing batch's first documents share terms with the next batch's, at the same slots.
    const failed = [...documents.slice(50, 120), { id: 'bad', text: 'w1 boom' }];
    expect(() => index.add(failed)).toThrow('analyser failed');
    expect(index.size).toBe(50);
    expect(index.search('w1 w2 w7', 20)).toEqual(before);

    index.add(documents.slice(50));
    const fresh = new BM25Index({ analyzer: whitespace });
    fresh.add(documents);
    expect(index.stats().postings).toBe(fresh.stats().postings);
    for (const query of queries(12, 40)) {
      expectSameHits(
        index.search(query, 30, { exhaustive: true }),
        fresh.search(query, 30, { exhaustive: true }),
      );
      expectSameHits(index.search(query, 10), fresh.search(query, 10));
    }
  });

  it('refuses k that is not a positive integer, and bad settings', () => {
    const index = new BM25Index({ analyzer: whitespace });
    index.add([{ id: 'a', text: 'alpha' }]);
    for (const k of [0, -1, 1.5, Number.NaN]) {
      expect(() => index.search('alpha', k)).toThrow(InvalidArgumentError);
    }
    expect(() => new BM25Index({ k1: -1 })).toThrow(/k1/);
    expect(() => new BM25Index({ b: 2 })).toThrow(/'b'/);
  });

  describe('persistence', () => {
    const build = () => {
      const index = new BM25Index({ analyzer: whitespace, k1: 0.9, b: 0.4 });
      index.add(zipfCorpus(12, 400));
      index.remove(['doc-3', 'doc-10']);
      index.add([{ id: 'doc-10', text: 'w1 w1 w5 replaced' }]);
      return index;
    };

    it('round-trips through a file with identical results', async () => {
      const index = build();
      const path = join(await mkdtemp(join(tmpdir(), 'zerda-bm25-')), 'index.bin');
      await saveBM25Index(index, path);
      const loaded = await loadBM25Index(path, { analyzer: whitespace });
      expect(loaded.size).toBe(index.size);
      expect([loaded.k1, loaded.b]).toEqual([0.9, 0.4]);
      for (const query of [...queries(13, 30), 'replaced']) {
        expectSameHits(loaded.search(query, 10), index.search(query, 10));
      }
      // A loaded index keeps accepting writes.
      loaded.add([{ id: 'new', text: 'brandnew w1' }]);
      expect(loaded.search('brandnew', 5)[0]?.id).toBe('new');
    });

    it("keeps each term's largest tf and shortest length exact over batches (the bounds MaxScore prunes with)", () => {
      const documents = zipfCorpus(29, 900, 300);
      const index = new BM25Index({ analyzer: whitespace });
      // Batches of several sizes, each its own segment until merged, and a replacement.
      for (const [from, to] of [
        [0, 1],
        [1, 40],
        [40, 500],
        [500, 900],
      ] as const) {
        index.add(documents.slice(from, to));
      }
      const replacement = { id: 'doc-3', text: 'w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w1 w250' };
      index.add([replacement]);
      const expected = new Map<string, { maxTf: number; minLength: number }>();
      for (const document of [...documents, replacement]) {
        const terms = whitespace.analyze(document.text) as string[];
        const tfs = new Map<string, number>();
        for (const term of terms) tfs.set(term, (tfs.get(term) ?? 0) + 1);
        for (const [term, tf] of tfs) {
          const seen = expected.get(term) ?? { maxTf: 0, minLength: Number.POSITIVE_INFINITY };
          expected.set(term, {
            maxTf: Math.max(seen.maxTf, tf),
            minLength: Math.min(seen.minLength, terms.length),
          });
        }
      }
      const snapshot = decodeSnapshot(index.serialize());
      expect(snapshot.vocabulary.length).toBe(expected.size);
      snapshot.vocabulary.forEach((term, id) => {
        const want = expected.get(term);
        expect({ term, maxTf: snapshot.maxTf[id], minLength: snapshot.minLength[id] }).toEqual({
          term,
          ...want,
        });
      });
      expect(expected.get('w1')?.maxTf).toBeGreaterThanOrEqual(12);
    });

    it('saves block metadata with exact bounds (version 3), reads version 1 and 2 files, and saves an unchanged index byte for byte', () => {
      const index = build();
      const bytes = index.serialize();
      expect(new DataView(bytes.buffer).getUint32(8, true)).toBe(BM25_FORMAT_VERSION);
      expect(BM25_FORMAT_VERSION).toBe(3);
      const snapshot = decodeSnapshot(bytes);
      expect(snapshot.blockFirst?.length).toBe(snapshot.termStart.length);
      expect(snapshot.blockMinNormPerTf?.length).toBe(snapshot.blockMaxTf?.length);
      // Taken at the saved index's average length.
      const averageLength = snapshot.lengths.reduce((sum, length) => sum + length, 0) / snapshot.ids.length;
      expect(snapshot.blockPerLength).toBeCloseTo((index.k1 * index.b) / averageLength, 12);
      // Version 2: block sections without the exact bounds, which the reader takes as loose ones.
      const version2 = encodeSnapshot(snapshot, 2);
      expect(new DataView(version2.buffer).getUint32(8, true)).toBe(2);
      expect(decodeSnapshot(version2).blockMinNormPerTf).toBeUndefined();
      const fromVersion2File = BM25Index.deserialize(version2, { analyzer: whitespace });
      const resavedVersion2 = decodeSnapshot(fromVersion2File.serialize());
      expect(resavedVersion2.blockPerLength).toBe(0);
      expect(resavedVersion2.postDocs).toEqual(snapshot.postDocs);
      // The same index in the previous format: no block sections, the reader rebuilds them.
      const version1 = encodeSnapshot(snapshot, 1);
      expect(new DataView(version1.buffer).getUint32(8, true)).toBe(1);
      expect(decodeSnapshot(version1).blockFirst).toBeUndefined();
      expect(version1.length).toBeLessThan(bytes.length);
      const fromVersion3 = BM25Index.deserialize(bytes, { analyzer: whitespace });
      const fromVersion1 = BM25Index.deserialize(version1, { analyzer: whitespace });
      for (const query of [...queries(21, 40), 'replaced']) {
        const expected = index.search(query, 10);
        expect(fromVersion3.search(query, 10)).toEqual(expected);
        expect(fromVersion1.search(query, 10)).toEqual(expected);
        expect(fromVersion2File.search(query, 10)).toEqual(expected);
      }
      // Opened and saved unchanged (version 1 rebuilds the same blocks): the original bytes.
      expect(fromVersion3.serialize()).toEqual(bytes);
      expect(fromVersion1.serialize()).toEqual(bytes);
    });

    it('reads back ids and terms that hold quotes, backslashes, separators, controls or nothing', () => {
      const odd = [
        '',
        'plain',
        'a","b',
        'quote"inside',
        'back\\slash',
        'line\nbreak',
        'tab\t',
        'ünï 漢字 😀',
        '","',
        '"',
      ];
      const terms: Analyzer = { name: 'listed', analyze: (text) => text.split('|') };
      const documents = odd.map((id, i) => ({
        id: id === '' ? 'empty-text' : id,
        text: [odd[i], 'shared'].join('|'),
      }));
      const index = new BM25Index({ analyzer: terms });
      index.add(documents);
      const loaded = BM25Index.deserialize(index.serialize(), { analyzer: terms });
      expect([...loaded.documentIds()]).toEqual(documents.map((document) => document.id));
      for (const term of odd) expect(loaded.search(term, 20)).toEqual(index.search(term, 20));
      expect([...decodeSnapshot(index.serialize()).ids]).toEqual(documents.map((document) => document.id));
    });

    it('removes from a loaded index with exact statistics (forward index built on demand)', () => {
      const index = build();
      const loaded = BM25Index.deserialize(index.serialize(), { analyzer: whitespace });
      const removed = ['doc-0', 'doc-7', 'doc-10', 'doc-399'];
      index.remove(removed);
      loaded.remove(removed);
      loaded.add([{ id: 'extra', text: 'w2 w3 extra' }]);
      index.add([{ id: 'extra', text: 'w2 w3 extra' }]);
      for (const query of [...queries(22, 40), 'replaced', 'extra']) {
        expect(loaded.search(query, 10, { exhaustive: true })).toEqual(
          index.search(query, 10, { exhaustive: true }),
        );
        expect(loaded.search(query, 10)).toEqual(index.search(query, 10));
      }
      expect(loaded.search('replaced', 5)).toEqual([]);
      // Saved after the removals (merged, renumbered), it still answers the same.
      const again = BM25Index.deserialize(loaded.serialize(), { analyzer: whitespace });
      for (const query of queries(23, 20)) expect(again.search(query, 10)).toEqual(index.search(query, 10));
      loaded.optimize();
      for (const query of queries(24, 20)) expect(loaded.search(query, 10)).toEqual(index.search(query, 10));
    });

    it('refuses block metadata that disagrees with the postings, and unknown versions', () => {
      const bytes = build().serialize();
      const tamper = (change: (snapshot: ReturnType<typeof decodeSnapshot>) => void) => {
        const snapshot = decodeSnapshot(bytes);
        change(snapshot);
        // Re-encoded, so the checksum is right and only the structural checks can catch it.
        return encodeSnapshot(snapshot);
      };
      const cases: Array<[Uint8Array, RegExp]> = [
        [
          tamper((s) => {
            s.blockFirst = (s.blockFirst as Uint32Array).subarray(1);
          }),
          /bad block offsets/,
        ],
        [
          tamper((s) => {
            (s.blockFirst as Uint32Array)[1] = ((s.blockFirst as Uint32Array)[1] as number) + 1;
          }),
          /block offsets of term position 0/,
        ],
        [
          tamper((s) => {
            s.blockMaxTf = (s.blockMaxTf as Uint16Array).slice(1);
          }),
          /block metadata does not match/,
        ],
        [
          tamper((s) => {
            s.blockMinLengthPerTf = new Float32Array(0);
          }),
          /block metadata does not match/,
        ],
        [
          tamper((s) => {
            s.blockMinNormPerTf = (s.blockMinNormPerTf as Float32Array).slice(1);
          }),
          /block metadata does not match/,
        ],
        [
          tamper((s) => {
            s.blockPerLength = -1;
          }),
          /exact block bounds have no valid length factor/,
        ],
        [
          tamper((s) => {
            (s.blockLastDoc as Uint32Array)[0] = s.ids.length;
          }),
          /block documents out of range/,
        ],
        [
          tamper((s) => {
            s.postDocs[1] = s.postDocs[0] as number;
          }),
          /posting documents out of order/,
        ],
        [
          tamper((s) => {
            s.ids[1] = s.ids[0] as string;
          }),
          /duplicate document ids/,
        ],
      ];
      const future = bytes.slice();
      new DataView(future.buffer).setUint32(8, 4, true);
      cases.push([future, /format version 4, this Zerda reads versions 1, 2 and 3/]);
      for (const [broken, pattern] of cases) {
        expect(() => BM25Index.deserialize(broken, { analyzer: whitespace, path: 'x.bin' })).toThrow(pattern);
        try {
          BM25Index.deserialize(broken, { analyzer: whitespace });
        } catch (error) {
          expect(IndexFormatError.isInstance(error)).toBe(true);
        }
      }
    });

    it('refuses corrupt, truncated, foreign and mismatched files with IndexFormatError', async () => {
      const bytes = build().serialize();
      const flipped = bytes.slice();
      const middle = Math.floor(bytes.length / 2);
      flipped[middle] = (flipped[middle] as number) ^ 0xff;
      const foreign = new TextEncoder().encode('{"not": "an index"} padding padding');
      for (const [broken, pattern] of [
        [flipped, /checksum/],
        [bytes.slice(0, bytes.length - 100), /checksum/],
        [bytes.slice(0, 10), /too short/],
        [foreign, /magic/],
      ] as const) {
        expect(() => BM25Index.deserialize(broken, { analyzer: whitespace })).toThrow(pattern);
        try {
          BM25Index.deserialize(broken, { analyzer: whitespace });
        } catch (error) {
          expect(IndexFormatError.isInstance(error)).toBe(true);
        }
      }
      const other: Analyzer = { ...whitespace, name: 'other' };
      expect(() => BM25Index.deserialize(bytes, { analyzer: other })).toThrow(/analyser 'test-whitespace'/);
      const dir = await mkdtemp(join(tmpdir(), 'zerda-bm25-'));
      await expect(loadBM25Index(join(dir, 'missing.bin'))).rejects.toThrow(IndexFormatError);
      const path = join(dir, 'corrupt.bin');
      await writeFile(path, flipped);
      await expect(loadBM25Index(path, { analyzer: whitespace })).rejects.toThrow(/corrupt\.bin/);
      expect((await readFile(path)).length).toBe(bytes.length);
    });
  });
});
