import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import {
  type Analyzer,
  createAnalyzer,
  defaultAnalyzer,
  luceneEnglishAnalyzer,
  TermKeys,
} from '../text/index.js';
import { BM25Index } from './bm25-index.js';

/** Mixed text: stop words, stems shared by several words, codes, possessives, Arabic, format characters. */
const documents = [
  'The quick brown foxes were jumping over the lazy dogs!',
  "John's dog jumps; the dogs jumped over GPT-4 and x86-64 boxes at 3.5 GHz",
  'المكتبات العامة تقدم الكتب للقراء والمكتبة في المدينة',
  'Running runners run: state-of-the-art co\u00ADoperation, naïve café, ﬁnance ＡＢＣ',
  'Connection connected connecting connections — the cat sat on the mat',
  'dogs cats foxes boxes runners libraries',
].map((text, i) => ({ id: `doc-${i}`, text }));

const queries = ['dog jumping', 'المكتبة', 'run connection', 'GPT-4 finance', 'fox box cat', 'naive cafe'];

/** The same analysis through `analyze` only, as a custom analyser would offer it. */
function stringsOnly(analyzer: Analyzer): Analyzer {
  return { name: analyzer.name, analyze: (text) => analyzer.analyze(text) };
}

/** Byte equality, compared natively (a deep equality of megabytes element by element takes minutes). */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(actual.length).toBe(expected.length);
  expect(Buffer.compare(actual, expected)).toBe(0);
}

describe('Analyzer.analyzeKeys', () => {
  it('gives the terms of analyze, in order, as keys', () => {
    for (const analyzer of [defaultAnalyzer, luceneEnglishAnalyzer, createAnalyzer({ stemmer: 'none' })]) {
      const out = new TermKeys();
      for (const { text } of documents) {
        analyzer.analyzeKeys?.(text, out);
        const terms = Array.from(out.keys.subarray(0, out.count), (key) => out.term(key));
        expect(terms).toEqual(analyzer.analyze(text));
      }
    }
  });

  it('gives one word one key across texts, and a new key to a new word', () => {
    const analyzer = createAnalyzer();
    const out = new TermKeys();
    analyzer.analyzeKeys?.('libraries and dogs', out);
    const [libraries, dogs] = out.keys.subarray(0, out.count);
    analyzer.analyzeKeys?.('dogs, cats and libraries', out);
    expect(out.count).toBe(3);
    expect(out.keys[0]).toBe(dogs);
    expect(out.keys[2]).toBe(libraries);
    expect([libraries, dogs]).not.toContain(out.keys[1]);
    expect(out.term(out.keys[1] as number)).toBe('cat');
  });
});

describe('BM25Index with an analyser that has analyzeKeys', () => {
  it('builds the same index, byte for byte, as through analyze', () => {
    for (const analyzer of [defaultAnalyzer, luceneEnglishAnalyzer]) {
      const withKeys = new BM25Index({ analyzer });
      const withStrings = new BM25Index({ analyzer: stringsOnly(analyzer) });
      // Two batches, the second replacing a document, so that keys meet terms seen before.
      for (const index of [withKeys, withStrings]) {
        index.add(documents.slice(0, 4));
        index.add([...documents.slice(4), { id: 'doc-1', text: 'dogs jumped over boxes' }]);
      }
      expectSameBytes(withKeys.serialize(), withStrings.serialize());
      for (const query of queries) expect(withKeys.search(query, 10)).toEqual(withStrings.search(query, 10));
    }
  });

  it('stays exact when the analyser’s bounded cache fills within a text and starts over after it', () => {
    // More distinct words than the analyser caches (200,000): the first text goes past the limit,
    // the next call starts the cache over and renumbers every key.
    const words = Array.from({ length: 210_000 }, (_, i) => `w${i.toString(36)}`);
    const batches = [
      [{ id: 'big', text: words.join(' ') }],
      [{ id: 'small', text: `${words[5]} ${words[209_999]} fresh ${words[5]}` }],
      [{ id: 'again', text: words.slice(0, 50).join(' ') }],
    ];
    const analyzer = createAnalyzer({ stemmer: 'none', stopWords: false });
    const withKeys = new BM25Index({ analyzer });
    const withStrings = new BM25Index({ analyzer: stringsOnly(analyzer) });
    for (const batch of batches) {
      withKeys.add(batch);
      withStrings.add(batch);
    }
    expectSameBytes(withKeys.serialize(), withStrings.serialize());
    expect(withKeys.search(`fresh ${words[5]}`, 3).map((hit) => hit.id)).toEqual(['small', 'again', 'big']);
  });

  it('maps keys afresh when the analyser renumbers them', () => {
    // An analyser whose key numbering starts over at every call: key 0 is a different word each time.
    let space = 100;
    const renumbering: Analyzer = {
      name: 'renumbering',
      analyze: (text) => text.split(' '),
      analyzeKeys(text, out) {
        const words = text.split(' ');
        const distinct = [...new Set(words)];
        out.keys = Int32Array.from(words, (word) => distinct.indexOf(word));
        out.count = words.length;
        out.space = ++space;
        out.term = (key) => distinct[key] as string;
      },
    };
    const index = new BM25Index({ analyzer: renumbering });
    index.add([
      { id: 'a', text: 'apple pear apple' },
      { id: 'b', text: 'pear plum' },
    ]);
    const reference = new BM25Index({ analyzer: stringsOnly(renumbering) });
    reference.add([
      { id: 'a', text: 'apple pear apple' },
      { id: 'b', text: 'pear plum' },
    ]);
    expectSameBytes(index.serialize(), reference.serialize());
    expect(index.search('plum', 2).map((hit) => hit.id)).toEqual(['b']);
    expect(index.search('apple', 2).map((hit) => hit.id)).toEqual(['a']);
  });
});

describe('BM25Index with an analyser that has only analyze', () => {
  it('gives its terms keys of its own, the cache starting over as the analysers’ does', () => {
    // 210,000 distinct terms: past the 200,000 the index's own key cache holds, within one text.
    const words = Array.from({ length: 210_000 }, (_, i) => `term${i.toString(36)}`);
    const index = new BM25Index({ analyzer: { name: 'split', analyze: (text) => text.split(' ') } });
    index.add([{ id: 'big', text: words.join(' ') }]);
    index.add([{ id: 'small', text: `${words[7]} ${words[209_999]} ${words[7]} fresh` }]);
    expect(index.stats().terms).toBe(210_001);
    expect(index.search(words[7] as string, 2).map((hit) => hit.id)).toEqual(['small', 'big']);
    expect(index.search('fresh', 2).map((hit) => hit.id)).toEqual(['small']);
  });

  it('refuses a term that is not a string with a typed error naming its position, changing nothing', () => {
    const index = new BM25Index({
      analyzer: {
        name: 'broken',
        analyze: (text) => (text === 'bad' ? ['ok', 42 as unknown as string] : [text]),
      },
    });
    index.add([{ id: 'a', text: 'fine' }]);
    expect(() => index.add([{ id: 'b', text: 'bad' }])).toThrow(/not a string, at position 1/);
    try {
      index.add([{ id: 'b', text: 'bad' }]);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidArgumentError);
    }
    expect(index.size).toBe(1);
    expect(index.has('b')).toBe(false);
  });
});
