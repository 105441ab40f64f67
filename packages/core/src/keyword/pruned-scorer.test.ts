import { describe, expect, it } from 'vitest';
import type { Analyzer } from '../text/index.js';
import { seededRandom as random } from '../vector/__tests__/clustered-data.js';
import { BM25Index } from './bm25-index.js';

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
    const index = new BM25Index({ analyzer: whitespace });
    // Uneven batches: segments whose windows do not line up with each other.
    for (let i = 0; i < documents.length; i += 4_500) index.add(documents.slice(i, i + 4_500));
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
});
