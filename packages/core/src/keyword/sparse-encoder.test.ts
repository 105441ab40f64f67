import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { IndexFormatError, InvalidArgumentError } from '../errors/index.js';
import { readBeirCorpus, readBeirQueries } from '../eval/beir.js';
import { beirDocumentText } from '../eval/beir-types.js';
import { type Analyzer, createAnalyzer, defaultAnalyzer } from '../text/index.js';
import { crc32 } from '../util/crc32.js';
import type { SparseVector } from '../vector/driver.js';
import { sparseVectorProblem } from '../vector/sparse-vectors.js';
import { BM25Index } from './bm25-index.js';
import {
  BM25SparseEncoder,
  hashTermId,
  murmur3Utf8,
  SPARSE_DIMENSION,
  SPARSE_TERM_ID_SCHEME,
} from './sparse-encoder.js';

const dataRoot = join(dirname(fileURLToPath(import.meta.url)), '../../../../datasets');

interface Collection {
  ids: string[];
  texts: string[];
  queries: string[];
}

async function loadCollection(name: string): Promise<Collection> {
  const corpus = await readBeirCorpus(join(dataRoot, name, 'corpus.jsonl'));
  const queries = await readBeirQueries(join(dataRoot, name, 'queries.jsonl'));
  return {
    ids: corpus.map((document) => document.id),
    texts: corpus.map(beirDocumentText),
    queries: queries.map((query) => query.text),
  };
}

function dot(query: SparseVector, document: SparseVector): number {
  let score = 0;
  let i = 0;
  let j = 0;
  while (i < query.indices.length && j < document.indices.length) {
    const a = query.indices[i] as number;
    const b = document.indices[j] as number;
    if (a === b) score += (query.values[i++] as number) * (document.values[j++] as number);
    else if (a < b) i++;
    else j++;
  }
  return score;
}

/** Every document with a positive dot product, best first, equal scores by id (as the index orders them). */
function rankByDot(query: SparseVector, documents: readonly SparseVector[], ids: readonly string[]) {
  const hits: Array<{ id: string; score: number }> = [];
  documents.forEach((document, d) => {
    const score = dot(query, document);
    if (score > 0) hits.push({ id: ids[d] as string, score });
  });
  return hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

const relativeError = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-12);

/**
 * Compares the index's top 100 with the sparse dot-product ranking for every query: the same ids
 * in the same order and scores within 1e-4 relative. Returns the largest relative score error.
 */
function compareRankings(collection: Collection, queries: readonly string[], analyzer?: Analyzer) {
  const index = new BM25Index({ analyzer });
  index.add(collection.texts.map((text, d) => ({ id: collection.ids[d] as string, text })));
  const encoder = new BM25SparseEncoder({ analyzer });
  encoder.add(collection.texts);
  const documents = encoder.encodeDocuments(collection.texts);
  let largestError = 0;
  let compared = 0;
  for (const query of queries) {
    const expected = index.search(query, 100);
    const actual = rankByDot(encoder.encodeQuery(query), documents, collection.ids).slice(0, 100);
    expect(actual.map((hit) => hit.id)).toEqual(expected.map((hit) => hit.id));
    expected.forEach((hit, rank) => {
      const error = relativeError(hit.score, (actual[rank] as { score: number }).score);
      largestError = Math.max(largestError, error);
      expect(error).toBeLessThan(1e-4);
    });
    compared += expected.length;
  }
  return { largestError, compared };
}

describe('murmur3Utf8', () => {
  it('matches the published MurmurHash3 x86 32-bit test vectors', () => {
    expect(murmur3Utf8('', 0)).toBe(0);
    expect(murmur3Utf8('', 1)).toBe(0x514e28b7);
    expect(murmur3Utf8('', 0xffffffff)).toBe(0x81f16f39);
    expect(murmur3Utf8('\0\0\0\0', 0)).toBe(0x2362f9de);
    expect(murmur3Utf8('a', 0x9747b28c)).toBe(0x7fa09ea6);
    expect(murmur3Utf8('ab', 0x9747b28c)).toBe(0x74875592);
    expect(murmur3Utf8('abc', 0x9747b28c)).toBe(0xc84a62dd);
    expect(murmur3Utf8('abcd', 0x9747b28c)).toBe(0xf0478627);
    expect(murmur3Utf8('Hello, world!', 0x9747b28c)).toBe(0x24884cba);
    expect(murmur3Utf8('ππππππππ', 0x9747b28c)).toBe(0xd58063c1);
    expect(murmur3Utf8('The quick brown fox jumps over the lazy dog', 0)).toBe(0x2e4ff723);
    expect(murmur3Utf8('The quick brown fox jumps over the lazy dog', 0x9747b28c)).toBe(0x2fa826cd);
  });

  it('hashes the same bytes as TextEncoder produces, surrogate pairs and lone surrogates included', () => {
    const encoder = new TextEncoder();
    for (const text of ['مكتبه', 'dü', '€5', '𝔘nicode😀', 'a\ud800b', 'x\udc00', '\ud83d', 'ﷺ']) {
      expect(murmur3Utf8(text, 0)).toBe(murmur3OfBytes(encoder.encode(text)));
    }
  });

  it('gives term ids below the dimension, the same in every encoder', () => {
    const encoder = new BM25SparseEncoder();
    expect(encoder.dimension).toBe(1_000_000_000);
    expect(encoder.termIdScheme).toBe('murmur3-32/utf8/seed-0/mod-1000000000');
    expect(SPARSE_TERM_ID_SCHEME).toBe(encoder.termIdScheme);
    expect(encoder.termId('hello')).toBe(0x248bfa47 % 1_000_000_000);
    expect(new BM25SparseEncoder({ k1: 2 }).termId('مكتب')).toBe(encoder.termId('مكتب'));
    expect(() => encoder.termId(3 as unknown as string)).toThrow(InvalidArgumentError);
  });
});

/** A reference MurmurHash3 x86 32-bit over bytes, written independently of the encoder's. */
function murmur3OfBytes(bytes: Uint8Array): number {
  let h = 0;
  const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
  const mixK = (k: number) => Math.imul(rotl(Math.imul(k, 0xcc9e2d51), 15), 0x1b873593);
  const blocks = Math.floor(bytes.length / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < blocks; i++) {
    h ^= mixK(view.getUint32(i * 4, true));
    h = (Math.imul(rotl(h, 13), 5) + 0xe6546b64) | 0;
  }
  let tail = 0;
  for (let i = bytes.length - 1; i >= blocks * 4; i--) tail = (tail << 8) | (bytes[i] as number);
  if (bytes.length % 4 !== 0) h ^= mixK(tail);
  h ^= bytes.length;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

describe('BM25SparseEncoder: dot products equal BM25Index scores', () => {
  let cisi: Collection;
  let cranfield: Collection;
  let arcd: Collection;
  beforeAll(async () => {
    [cisi, cranfield, arcd] = await Promise.all([
      loadCollection('cisi'),
      loadCollection('cranfield'),
      loadCollection('arcd'),
    ]);
  });

  it('ranks the top 100 of every CISI query as the index does', () => {
    const { largestError, compared } = compareRankings(cisi, cisi.queries);
    expect(compared).toBeGreaterThan(100 * 100);
    expect(largestError).toBeLessThan(1e-6);
  });

  it('ranks the top 100 of every Cranfield query as the index does', () => {
    const { largestError, compared } = compareRankings(cranfield, cranfield.queries);
    expect(compared).toBeGreaterThan(200 * 90);
    expect(largestError).toBeLessThan(1e-6);
  });

  it('ranks Arabic (ARCD, every fifth question) as the index does', () => {
    const sample = arcd.queries.filter((_, q) => q % 5 === 0);
    const { compared } = compareRankings(arcd, sample);
    expect(compared).toBeGreaterThan(sample.length * 50);
  });

  it('is exact with other k1 and b, and another analyser', () => {
    const analyzer = createAnalyzer({ stopWords: ['en-lucene'], tokenizer: 'lucene' });
    const index = new BM25Index({ analyzer, k1: 0.9, b: 0.4 });
    index.add(cisi.texts.map((text, d) => ({ id: cisi.ids[d] as string, text })));
    const encoder = new BM25SparseEncoder({ analyzer, k1: 0.9, b: 0.4 });
    encoder.add(cisi.texts);
    const documents = encoder.encodeDocuments(cisi.texts);
    for (const query of cisi.queries.slice(0, 30)) {
      const expected = index.search(query, 20);
      const actual = rankByDot(encoder.encodeQuery(query), documents, cisi.ids).slice(0, 20);
      expect(actual.map((hit) => hit.id)).toEqual(expected.map((hit) => hit.id));
      expected.forEach((hit, rank) => {
        expect(relativeError(hit.score, (actual[rank] as { score: number }).score)).toBeLessThan(1e-4);
      });
    }
  });

  it('counts as the index does: documents, average length, terms (no collisions here)', () => {
    const index = new BM25Index();
    index.add(cisi.texts.map((text, d) => ({ id: cisi.ids[d] as string, text })));
    const encoder = new BM25SparseEncoder();
    encoder.add(cisi.texts);
    const stats = index.stats();
    expect(encoder.stats.documentCount).toBe(stats.documents);
    expect(encoder.stats.averageLength).toBe(stats.averageLength);
    expect(encoder.stats.terms).toBe(stats.terms);
    expect(encoder.stats.totalLength).toBe(Math.round(stats.averageLength * stats.documents));
  });

  it('counts term-id collisions on the three vocabularies (expected pairs V^2 / 2e9)', () => {
    const vocabulary = (collection: Collection) => {
      const terms = new Set<string>();
      for (const text of [...collection.texts, ...collection.queries]) {
        for (const term of defaultAnalyzer.analyze(text)) terms.add(term);
      }
      return terms;
    };
    const collisions = (terms: Set<string>) => {
      const byId = new Map<number, number>();
      for (const term of terms) byId.set(hashTermId(term), (byId.get(hashTermId(term)) ?? 0) + 1);
      let pairs = 0;
      for (const count of byId.values()) pairs += (count * (count - 1)) / 2;
      return pairs;
    };
    const cisiTerms = vocabulary(cisi);
    const cranfieldTerms = vocabulary(cranfield);
    const arcdTerms = vocabulary(arcd);
    const all = new Set([...cisiTerms, ...cranfieldTerms, ...arcdTerms]);
    // Sizes pin down the vocabularies the collision counts below were measured on.
    expect([cisiTerms.size, cranfieldTerms.size, arcdTerms.size, all.size]).toEqual(VOCABULARY_SIZES);
    expect([
      collisions(cisiTerms),
      collisions(cranfieldTerms),
      collisions(arcdTerms),
      collisions(all),
    ]).toEqual([0, 0, 0, 0]);
    // None, as expected: 17,132 terms give V^2 / 2e9 = 0.15 colliding pairs on average.
    expect((all.size * all.size) / (2 * SPARSE_DIMENSION)).toBeCloseTo(0.147, 3);
  });
});

const VOCABULARY_SIZES = [6345, 5116, 8381, 17132];

describe('BM25SparseEncoder: vectors', () => {
  const texts = [
    'Owls hunt mice at night; owls sleep by day.',
    'Bats also hunt at night.',
    'Larks sing at dawn, and owls are silent.',
    'المكتبة الإسلامية في القاهرة تضم مخطوطات نادرة',
  ];

  it('are valid sparse vectors for a database: ascending distinct indices below the dimension, finite values', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(texts);
    const limits = { dimension: encoder.dimension, maxNonZero: 1000, hybrid: false };
    for (const text of texts) {
      const vector = encoder.encodeDocument(text);
      expect(vector.indices.length).toBeGreaterThan(0);
      expect(sparseVectorProblem(vector, limits)).toBeUndefined();
      expect(sparseVectorProblem(encoder.encodeQuery(text), limits)).toBeUndefined();
    }
  });

  it('puts the IDF on the query side, repeated query terms counted, unknown terms left out', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(texts);
    const owl = encoder.termId('owl');
    const query = encoder.encodeQuery('owls owls zebra');
    expect([...query.indices]).toEqual([owl]);
    // 'owl' is in 2 of 4 documents: idf = ln(1 + 2.5 / 2.5).
    expect(query.values[0]).toBeCloseTo(2 * Math.log(2), 6);
    expect(encoder.encodeQuery('zebra').indices.length).toBe(0);
    expect(encoder.encodeQuery('').indices.length).toBe(0);
  });

  it('puts saturation and length normalisation on the document side', () => {
    const encoder = new BM25SparseEncoder({ k1: 1.2, b: 0.75 });
    encoder.add(texts);
    const { averageLength } = encoder.stats;
    const vector = encoder.encodeDocument(texts[0] as string);
    const length = defaultAnalyzer.analyze(texts[0] as string).length;
    const owl = [...vector.indices].indexOf(encoder.termId('owl'));
    const norm = 1.2 * (1 - 0.75 + (0.75 * length) / averageLength);
    expect(vector.values[owl]).toBeCloseTo((2.2 * 2) / (2 + norm), 6);
  });

  it('within the drift bound: a stale document weight is within avgdl(then) / avgdl(now) of the fresh one', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(texts.slice(0, 2));
    const stale = encoder.encodeDocuments(texts.slice(0, 2));
    const then = encoder.stats.averageLength;
    encoder.add([
      ...texts.slice(2),
      'a longer text about owls, bats and larks singing at dawn in a quiet northern forest',
    ]);
    const fresh = encoder.encodeDocuments(texts.slice(0, 2));
    const ratio = then / encoder.stats.averageLength;
    expect(ratio).not.toBe(1);
    stale.forEach((vector, d) => {
      expect(vector.indices).toEqual((fresh[d] as SparseVector).indices);
      vector.values.forEach((value, i) => {
        const factor = value / ((fresh[d] as SparseVector).values[i] as number);
        expect(factor).toBeGreaterThanOrEqual(Math.min(1, ratio) - 1e-6);
        expect(factor).toBeLessThanOrEqual(Math.max(1, ratio) + 1e-6);
      });
    });
  });

  it('addAndEncode equals add then encodeDocuments', () => {
    const one = new BM25SparseEncoder();
    const vectors = one.addAndEncode(texts);
    const two = new BM25SparseEncoder();
    two.add(texts);
    expect(vectors).toEqual(two.encodeDocuments(texts));
    expect(one.save()).toEqual(two.save());
  });

  it('refuses what is not a text, naming it', () => {
    const encoder = new BM25SparseEncoder();
    expect(() => encoder.add('owls' as unknown as string[])).toThrow(InvalidArgumentError);
    expect(() => encoder.add(['owls', 7 as unknown as string])).toThrow(/texts\[1\]/);
    expect(encoder.stats.documentCount).toBe(0);
    expect(() => encoder.encodeDocument(undefined as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => encoder.encodeQuery(null as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => new BM25SparseEncoder({ k1: -1 })).toThrow(/k1/);
    expect(() => new BM25SparseEncoder({ b: 1.5 })).toThrow(/'b'/);
  });
});

describe('BM25SparseEncoder: statistics updates', () => {
  let cisi: Collection;
  beforeAll(async () => {
    cisi = await loadCollection('cisi');
  });

  it('adding then removing leaves the statistics byte-identical', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(cisi.texts.slice(0, 700));
    const before = encoder.save();
    encoder.add(cisi.texts.slice(700));
    // Removed in another order and other batches than they were added in.
    const added = cisi.texts.slice(700).reverse();
    encoder.remove(added.slice(0, 300));
    encoder.remove(added.slice(300));
    expect(encoder.save()).toEqual(before);
  });

  it('after removing half of a corpus in random order, equals an encoder that only added the rest', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(cisi.texts);
    const order = cisi.texts.map((_, d) => d).sort((a, b) => ((a * 7919) % 1009) - ((b * 7919) % 1009));
    const removed = new Set(order.slice(0, 730));
    encoder.remove([...removed].map((d) => cisi.texts[d] as string));
    const rest = new BM25SparseEncoder();
    rest.add(cisi.texts.filter((_, d) => !removed.has(d)));
    expect(encoder.save()).toEqual(rest.save());
    expect(encoder.stats).toEqual(rest.stats);
    encoder.remove(cisi.texts.filter((_, d) => !removed.has(d)));
    expect(encoder.stats).toEqual({ documentCount: 0, totalLength: 0, averageLength: 0, terms: 0 });
    expect(encoder.save()).toEqual(new BM25SparseEncoder().save());
  });

  it('refuses to remove a text that was not added, changing nothing', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(['owls hunt at night', 'bats hunt at night']);
    const before = encoder.save();
    const error = (() => {
      try {
        encoder.remove(['bats hunt at night', 'larks']);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(String(error)).toMatch(/texts\[1\].*'lark'.*not added/);
    // Removing the same text twice in one batch.
    expect(() => encoder.remove(['owls hunt at night', 'owls hunt at night'])).toThrow(/'owl'/);
    expect(() => encoder.remove(['a', 'b', 'c'])).toThrow(/only 2 are counted/);
    expect(encoder.save()).toEqual(before);
  });

  it('leaves the statistics unchanged when a custom analyser throws part-way through a batch', () => {
    const analyzer: Analyzer = {
      name: 'fails-on-boom',
      analyze: (text) => {
        if (text.includes('boom')) throw new Error('analyser failed');
        return text.split(' ');
      },
    };
    const encoder = new BM25SparseEncoder({ analyzer });
    encoder.add(['a b', 'b c']);
    const before = encoder.save();
    expect(() => encoder.add(['c d', 'd e', 'boom'])).toThrow('analyser failed');
    expect(encoder.save()).toEqual(before);
  });
});

describe('BM25SparseEncoder: save and load', () => {
  const texts = ['owls hunt at night', 'bats hunt at night', 'larks sing at dawn', 'مكتبة القاهرة'];

  it('round-trips the statistics and settings', () => {
    const analyzer = createAnalyzer({ stemmer: 'none' });
    const encoder = new BM25SparseEncoder({ analyzer, k1: 0.9, b: 0.4 });
    encoder.add(texts);
    const bytes = encoder.save();
    const loaded = BM25SparseEncoder.load(bytes, { analyzer });
    expect(loaded.k1).toBe(0.9);
    expect(loaded.b).toBe(0.4);
    expect(loaded.stats).toEqual(encoder.stats);
    expect(loaded.encodeQuery('owls at dawn')).toEqual(encoder.encodeQuery('owls at dawn'));
    expect(loaded.encodeDocument(texts[0] as string)).toEqual(encoder.encodeDocument(texts[0] as string));
    expect(loaded.save()).toEqual(bytes);
    // 8 bytes a term, plus a small header.
    expect(bytes.byteLength).toBeLessThan(400 + 8 * encoder.stats.terms);
    loaded.remove(texts);
    expect(loaded.stats.documentCount).toBe(0);
  });

  it('refuses statistics counted by another analyser, naming both', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(texts);
    const other = createAnalyzer({ stemmer: 'none' });
    expect(() => BM25SparseEncoder.load(encoder.save(), { analyzer: other })).toThrow(IndexFormatError);
    expect(() => BM25SparseEncoder.load(encoder.save(), { analyzer: other })).toThrow(
      `counted with analyser '${defaultAnalyzer.name}' but '${other.name}' was given`,
    );
  });

  it('refuses statistics of another term-id scheme, naming both', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(texts);
    const bytes = withHeader(encoder.save(), (header) => ({
      ...header,
      termIdScheme: 'murmur3-32/utf8/seed-0/mod-262144',
    }));
    expect(() => BM25SparseEncoder.load(bytes)).toThrow(IndexFormatError);
    expect(() => BM25SparseEncoder.load(bytes)).toThrow(
      `term-id scheme 'murmur3-32/utf8/seed-0/mod-262144' but this encoder uses '${SPARSE_TERM_ID_SCHEME}'`,
    );
  });

  it('refuses truncated, corrupt and foreign bytes', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(texts);
    const bytes = encoder.save();
    const refused = (candidate: Uint8Array, message: RegExp) => {
      expect(() => BM25SparseEncoder.load(candidate)).toThrow(IndexFormatError);
      expect(() => BM25SparseEncoder.load(candidate)).toThrow(message);
    };
    refused(bytes.subarray(0, bytes.byteLength - 9), /checksum/);
    refused(bytes.subarray(0, 10), /too short/);
    const flipped = bytes.slice();
    flipped[bytes.byteLength - 12] = (flipped[bytes.byteLength - 12] as number) ^ 1;
    refused(flipped, /checksum/);
    refused(new TextEncoder().encode('{"format":"zerda-bm25-sparse", "documentCount": 3}'), /magic/);
    refused(withVersion(bytes, 2), /format version 2, this Zerda reads version 1/);
    refused(
      withHeader(bytes, (header) => ({ ...header, terms: (header.terms as number) + 1 })),
      /do not fit/,
    );
    refused(
      withHeader(bytes, (header) => ({ ...header, documentCount: 1 })),
      /document frequency 2 of 1 texts/,
    );
    refused(
      withHeader(bytes, (header) => ({ ...header, k1: -3 })),
      /bad settings k1=-3/,
    );
    expect(() => BM25SparseEncoder.load('bytes' as unknown as Uint8Array)).toThrow(IndexFormatError);
  });

  it('reads bytes from a view into a larger buffer (as a Node Buffer may be)', () => {
    const encoder = new BM25SparseEncoder();
    encoder.add(texts);
    const bytes = encoder.save();
    const larger = new Uint8Array(bytes.byteLength + 13);
    larger.set(bytes, 5);
    expect(BM25SparseEncoder.load(larger.subarray(5, 5 + bytes.byteLength)).stats).toEqual(encoder.stats);
  });
});

/** The bytes with the JSON header rewritten (and the checksum recomputed), to fake another writer. */
function withHeader(bytes: Uint8Array, edit: (header: Record<string, unknown>) => Record<string, unknown>) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(12, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + headerLength)));
  const edited = new TextEncoder().encode(JSON.stringify(edit(header)));
  const align8 = (n: number) => (n + 7) & ~7;
  const data = bytes.subarray(align8(16 + headerLength), bytes.byteLength - 4);
  const dataStart = align8(16 + edited.byteLength);
  const out = new Uint8Array(dataStart + data.byteLength + 4);
  out.set(bytes.subarray(0, 12), 0);
  new DataView(out.buffer).setUint32(12, edited.byteLength, true);
  out.set(edited, 16);
  out.set(data, dataStart);
  new DataView(out.buffer).setUint32(out.byteLength - 4, crc32(out.subarray(0, out.byteLength - 4)), true);
  return out;
}

function withVersion(bytes: Uint8Array, version: number): Uint8Array {
  const out = bytes.slice();
  new DataView(out.buffer).setUint32(8, version, true);
  new DataView(out.buffer).setUint32(out.byteLength - 4, crc32(out.subarray(0, out.byteLength - 4)), true);
  return out;
}
