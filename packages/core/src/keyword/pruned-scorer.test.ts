import { describe, expect, it } from 'vitest';
import type { Analyzer } from '../text/index.js';
import { seededRandom as random } from '../vector/__tests__/clustered-data.js';
import { BM25Index } from './bm25-index.js';
import { BLOCK_SIZE, blockFactors, buildBlocks, DENSE_TF_ESCAPE, denseTfs, type Segment } from './segment.js';

const whitespace: Analyzer = { name: 'test-whitespace', analyze: (text) => text.split(' ') };

/**
 * Zipf-like words over enough documents for many scoring windows per segment, where head words
 * are in nearly every document (the queries whose postings pruning must skip), and every
 * seventh document repeats an earlier one, so that equal scores must be ordered by id.
 */
function corpus(seed: number, documents: number): { id: string; text: string }[] {
  const next = random(seed);
  const word = () => `w${Math.floor(3000 ** (next() ** 1.8))}`;
  const texts: string[] = [];
  for (let i = 0; i < documents; i++) {
    texts.push(
      i % 7 === 6
        ? (texts[Math.floor(next() * i)] as string)
        : Array.from({ length: 10 + Math.floor(next() * 80) }, word).join(' '),
    );
  }
  return texts.map((text, i) => ({ id: `doc-${i}`, text }));
}

/**
 * `count` documents of 20 to 80 filler words, each with some query words added: a word with a
 * share under 1 in about that share of the documents, 1 to `maxCount` times.
 */
function withWords(
  seed: number,
  count: number,
  words: readonly [word: string, share: number, maxCount: number][],
): { id: string; text: string }[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, i) => {
    const text = Array.from({ length: 20 + Math.floor(next() * 60) }, () => `f${Math.floor(next() * 500)}`);
    for (const [word, share, maxCount] of words) {
      if (share < 1 && next() >= share) continue;
      for (let c = 1 + Math.floor(next() * maxCount); c > 0; c--) text.push(word);
    }
    return { id: `doc-${i}`, text: text.join(' ') };
  });
}

/** An index of `documents` added in batches of `batch`: segments (and windows) of that size. */
function indexInBatches(documents: readonly { id: string; text: string }[], batch: number): BM25Index {
  const index = new BM25Index({ analyzer: whitespace });
  for (let i = 0; i < documents.length; i += batch) index.add(documents.slice(i, i + batch));
  return index;
}

function queries(seed: number, count: number): string[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, q) => {
    // Every third query only of head words (the long tail of the pruned scorer before windows).
    const range = q % 3 === 0 ? 12 : 3000;
    const terms = new Set<string>();
    const length = 1 + Math.floor(next() * 6);
    while (terms.size < length) terms.add(`w${Math.floor(range ** (next() ** 1.8))}`);
    return [...terms].join(' ');
  });
}

describe('pruned BM25 scoring over many windows', () => {
  const documents = corpus(21, 14_000);

  it('returns exactly the exhaustive top k, ties in id order, across segments and removals', () => {
    // Uneven batches: segments whose windows do not line up with each other.
    const index = indexInBatches(documents, 4_500);
    index.remove(
      documents.filter((_, i) => i % 11 === 3).map((d) => d.id),
      { compact: false },
    );
    let ties = 0;
    let compared = 0;
    for (const k of [1, 10, 100]) {
      for (const query of queries(22, 60)) {
        const exhaustive = index.search(query, k, { exhaustive: true });
        const pruned = index.search(query, k);
        expect(pruned).toEqual(exhaustive);
        compared += exhaustive.length;
        for (let i = 1; i < exhaustive.length; i++) {
          if (exhaustive[i]?.score === exhaustive[i - 1]?.score) ties++;
        }
      }
    }
    expect(compared).toBeGreaterThan(3_000);
    // Duplicated documents score alike: the order of equal scores is exercised.
    expect(ties).toBeGreaterThan(50);
  });

  it('applies an accept filter exactly as filtering the exhaustive ranking', () => {
    const index = new BM25Index({ analyzer: whitespace });
    index.add(documents);
    const accepted = (id: string) => Number(id.slice(4)) % 3 !== 0;
    for (const query of queries(23, 30)) {
      const filtered = index.search(query, 10, { accept: accepted });
      const expected = index
        .search(query, documents.length, { exhaustive: true })
        .filter((hit) => accepted(hit.id))
        .slice(0, 10);
      expect(filtered).toEqual(expected);
    }
  });

  it('stays exact when the average length drifts either way from the one the blocks were built at', () => {
    // Short documents first, then long ones (the average grows: later perLength below the
    // first segments' build value), then short ones again (it shrinks below the middle ones').
    const lengthened = documents.map((d, i) =>
      i >= 4_000 && i < 8_000 ? { id: d.id, text: `${d.text} ${d.text} ${d.text}` } : d,
    );
    const index = indexInBatches(lengthened, 2_000);
    index.remove(
      lengthened.filter((_, i) => i % 5 === 1 && i < 6_000).map((d) => d.id),
      { compact: false },
    );
    for (const k of [1, 10]) {
      for (const query of queries(25, 60)) {
        expect(index.search(query, k)).toEqual(index.search(query, k, { exhaustive: true }));
      }
    }
    // Saved and opened (one merged segment, exact bounds at the saved average), then drifted.
    const loaded = BM25Index.deserialize(index.serialize(), { analyzer: whitespace });
    loaded.add(documents.slice(0, 3_000).map((d) => ({ id: `again-${d.id}`, text: d.text })));
    for (const query of queries(26, 60)) {
      expect(loaded.search(query, 10)).toEqual(loaded.search(query, 10, { exhaustive: true }));
    }
  });

  it('never looks at a document that a posting of a frequent term cannot carry to the top k', () => {
    // Two words in every document, their counts 1 to 4: a query of both has flat top scores, and
    // no block bound is low enough to skip, only single postings (a count of 1 or 2 in all but the
    // shortest documents) can be dropped.
    const flat = withWords(28, 12_000, [
      ['head', 1, 4],
      ['neck', 1, 4],
    ]);
    const index = indexInBatches(flat, 5_000);
    for (const k of [1, 10, 100]) {
      const exhaustive = index.searchWithCount('head neck', k, { exhaustive: true });
      const pruned = index.searchWithCount('head neck', k);
      expect(pruned.hits).toEqual(exhaustive.hits);
      expect(exhaustive.matched).toBe(flat.length);
      // Documents looked at: those of the first window, and few of the rest (three in four
      // without the test per posting, a third with it).
      expect(pruned.matched).toBeLessThan(flat.length / 2);
    }
  });

  it('narrows the candidates to the documents of a term that every candidate must hold', () => {
    // Words in a fixed share of the documents, with counts of 1 to 3: a query of all four has
    // flat top scores, and no document reaches them without both of its two rarest words.
    const documents = withWords(29, 24_000, [
      ['arm', 0.25, 3],
      ['leg', 0.35, 3],
      ['hand', 0.8, 3],
      ['foot', 0.95, 3],
    ]);
    const index = indexInBatches(documents, 10_000);
    for (const k of [1, 10, 100]) {
      const exhaustive = index.searchWithCount('arm leg hand foot', k, { exhaustive: true });
      const pruned = index.searchWithCount('arm leg hand foot', k);
      expect(pruned.hits).toEqual(exhaustive.hits);
    }
    // At k = 100 the threshold leaves many documents of every single word short of it: narrowed
    // to those of 'arm' and 'leg' that can still reach it, a tenth of the documents are looked at
    // (half without the narrowing).
    const { matched } = index.searchWithCount('arm leg hand foot', 100);
    expect(matched).toBeLessThan(documents.length / 4);
    // Partial scores left out of the candidates are cleared with the rest: nothing a query leaves
    // behind changes what the next one looks at.
    for (const query of ['hand foot', 'foot arm', 'leg']) index.search(query, 10);
    expect(index.searchWithCount('arm leg hand foot', 100).matched).toBe(matched);
  });

  it('looks frequent terms up in their dense frequencies, and in the postings from DENSE_TF_ESCAPE on', () => {
    // 'often' in half the documents (dense frequencies), 255 to 299 times in every 40th; 'rare' in
    // those and one in twenty others. Deep in the ranking of 'rare often' (k = 1000), documents
    // found as candidates of 'rare' are looked 'often' up for, past the escape in its postings.
    const next = random(31);
    const documents = Array.from({ length: 20_000 }, (_, i) => {
      const text = Array.from({ length: 20 + Math.floor(next() * 60) }, () => `f${Math.floor(next() * 500)}`);
      const often =
        i % 40 === 0 ? 255 + Math.floor(next() * 45) : next() < 0.5 ? 1 + Math.floor(next() * 3) : 0;
      for (let c = 0; c < often; c++) text.push('often');
      if (next() < 0.3) text.push('some', 'some');
      if (i % 40 === 0 || next() < 0.05) text.push('rare');
      return { id: `doc-${i}`, text: text.join(' ') };
    });
    const index = indexInBatches(documents, 8_000);
    const before = index.stats().arrayBytes;
    for (const k of [1, 10, 100, 1000]) {
      for (const query of ['rare often', 'some often', 'rare some often']) {
        expect(index.search(query, k)).toEqual(index.search(query, k, { exhaustive: true }));
      }
    }
    // Built on first use, one byte per document of each segment, and counted.
    const segments = (index as unknown as { segments: Segment[] }).segments;
    const built = segments.reduce(
      (bytes, segment) =>
        bytes + [...(segment.dense?.values() ?? [])].reduce((sum, tfs) => sum + tfs.byteLength, 0),
      0,
    );
    expect(built).toBeGreaterThanOrEqual(documents.length);
    expect(index.stats().arrayBytes).toBe(before + built);
    // Exact below the escape, the escape from there on, 0 where the term is not ('often' and 'some').
    const segment = segments[0] as Segment;
    const { termStart, postDocs, postTfs } = segment;
    let escaped = 0;
    for (const position of segment.dense?.keys() ?? []) {
      const tfs = denseTfs(segment, position);
      for (let p = termStart[position] as number; p < (termStart[position + 1] as number); p++) {
        const tf = postTfs[p] as number;
        expect(tfs[(postDocs[p] as number) - segment.docStart]).toBe(Math.min(tf, DENSE_TF_ESCAPE));
        if (tf >= DENSE_TF_ESCAPE) escaped++;
      }
      expect(tfs.filter((tf) => tf > 0).length).toBe(
        (termStart[position + 1] as number) - (termStart[position] as number),
      );
    }
    expect(segment.dense?.size).toBe(2);
    expect(escaped).toBeGreaterThan(0);
  });

  it('bounds every posting of a block at any average length, and tighter than maxTf and min length/tf apart', () => {
    const next = random(27);
    const postings = 40 * BLOCK_SIZE;
    const lengths = Uint32Array.from({ length: postings }, () => 1 + Math.floor(next() * 400));
    const postDocs = Uint32Array.from({ length: postings }, (_, i) => i);
    // High tfs in long documents and low ones in short documents: the loose bound's worst case.
    const postTfs = Uint16Array.from(lengths, (length) => 1 + Math.floor((length / 400) * 30 * next()));
    const termStart = Uint32Array.from([0, postings]);
    const k1 = 1.2;
    const b = 0.75;
    const lengthFree = k1 * (1 - b);
    const blocks = buildBlocks(termStart, postDocs, postTfs, lengths, {
      lengthFree,
      perLength: (k1 * b) / 150,
    });
    let tighter = 0;
    for (const averageLength of [40, 100, 149, 150, 151, 220, 600]) {
      const perLength = (k1 * b) / averageLength;
      const factors = blockFactors(blocks, lengthFree, perLength).slice();
      for (let block = 0; block < factors.length; block++) {
        let largest = 0;
        for (let p = block * BLOCK_SIZE; p < (block + 1) * BLOCK_SIZE; p++) {
          const tf = postTfs[p] as number;
          largest = Math.max(largest, tf / (tf + lengthFree + perLength * (lengths[p] as number)));
        }
        expect(factors[block] as number).toBeGreaterThanOrEqual(largest);
        const loose =
          1 /
          (1 +
            lengthFree / (blocks.maxTf[block] as number) +
            perLength * (blocks.minLengthPerTf[block] as number));
        if ((factors[block] as number) < loose * 0.99) tighter++;
      }
    }
    // At and near the build's average the exact bound is far below the loose one for most blocks.
    expect(tighter).toBeGreaterThan(100);
  });
});
