import {
  buildTermSets,
  type DuplicatePair,
  findDuplicatePairsExact,
  findDuplicatePairsMinHash,
  jaccard,
  type TermSet,
} from '@zerda/core';
import { mulberry32, SyntheticCorpus } from '../corpus/synthetic.js';
import { collectGarbage, percentile } from '../lib/measure.js';
import type { BenchRow, BenchSuite } from '../report.js';

/*
 * Near-duplicate removal before reranking: which pairs of candidates have a Jaccard similarity of
 * their analysed word sets >= 0.85. Candidates are synthetic Zipf documents (frequent words are
 * shared by most of them, as in real text), a quarter of them edited copies of others with
 * 0 to 12% of their words replaced, so that true pairs straddle the threshold. Two length
 * profiles: 'varied' (50 to 300 words) and 'chunked' (180 to 220 words, as a fixed-size chunker
 * makes them, where pruning pairs by size helps least). Every method gets the same term sets
 * (built once by the default analyser, timed on its own row).
 */

const THRESHOLD = 0.85;
const REPEATS = 9;
const NAIVE_REPEATS = 3;

interface Profile {
  name: string;
  minTokens: number;
  maxTokens: number;
}

const profiles: Profile[] = [
  { name: 'varied', minTokens: 50, maxTokens: 300 },
  { name: 'chunked', minTokens: 180, maxTokens: 220 },
];

/** `size` candidates, a quarter of them near-copies of the others, shuffled. */
function candidates(size: number, profile: Profile): string[] {
  const corpus = new SyntheticCorpus({ minTokens: profile.minTokens, maxTokens: profile.maxTokens });
  const variants = Math.floor(size / 4);
  const originals = corpus.documents(size - variants).map((d) => d.text);
  const random = mulberry32(0xd0d0 + size);
  const word = () => corpus.vocabulary[corpus.sampler.sample(random)] as string;
  const texts = [...originals];
  for (let i = 0; i < variants; i++) {
    const source = (originals[Math.floor(random() * originals.length)] as string).split(' ');
    const share = random() * 0.12;
    texts.push(source.map((w) => (random() < share ? word() : w)).join(' '));
  }
  return texts
    .map((text) => ({ text, key: random() }))
    .sort((a, b) => a.key - b.key)
    .map((entry) => entry.text);
}

/** Every pair, compared in full: the textbook method (and the original design's). */
function allPairs(sets: readonly TermSet[], threshold: number): DuplicatePair[] {
  const pairs: DuplicatePair[] = [];
  for (let a = 0; a < sets.length; a++) {
    for (let b = a + 1; b < sets.length; b++) {
      const similarity = jaccard(sets[a] as TermSet, sets[b] as TermSet);
      if (similarity >= threshold) pairs.push({ a, b, similarity });
    }
  }
  return pairs;
}

function timeRuns<T>(repeats: number, run: () => T): { value: T; times: number[] } {
  let value = run(); // warm-up, also the value reported
  const times: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const started = performance.now();
    value = run();
    times.push(performance.now() - started);
  }
  return { value, times };
}

const key = (pair: DuplicatePair) => pair.a * 1_000_000 + pair.b;

export const rerankSuite: BenchSuite = {
  name: 'rerank',
  defaultSizes: [250, 500, 1000, 2000],
  async run(options) {
    const rows: BenchRow[] = [];
    for (const profile of profiles) {
      for (const size of options.sizes) {
        const texts = candidates(size, profile);
        const built = timeRuns(3, () => buildTermSets(texts));
        const sets = built.value;
        const averageTerms = sets.reduce((sum, set) => sum + set.length, 0) / sets.length;
        options.log(
          `rerank/${profile.name}: ${size} candidates, ${averageTerms.toFixed(0)} distinct terms each, term sets in ${percentile(built.times, 50).toFixed(1)} ms`,
        );
        rows.push({
          suite: 'rerank',
          system: `term sets (${profile.name})`,
          size,
          p50Ms: percentile(built.times, 50),
          p99Ms: percentile(built.times, 99),
          notes:
            'analysing the candidates into sorted term-id sets with the default analyser; shared by every method',
        });

        const exact = timeRuns(REPEATS, () => findDuplicatePairsExact(sets, THRESHOLD));
        const reference = new Set(exact.value.map(key));
        const systems: Array<{ name: string; repeats: number; run: () => DuplicatePair[]; notes: string }> = [
          {
            name: 'jaccard all pairs',
            repeats: NAIVE_REPEATS,
            run: () => allPairs(sets, THRESHOLD),
            notes: 'every pair compared in full (n(n-1)/2 merges of sorted term sets): the textbook baseline',
          },
          {
            name: 'zerda exact',
            repeats: 0,
            run: () => exact.value,
            notes:
              'findDuplicatePairsExact: every pair that size alone does not rule out (J <= min/max), ' +
              'each merge stopped once the threshold is out of reach; the reference for recall',
          },
          {
            name: 'zerda minhash 1-perm',
            repeats: REPEATS,
            run: () => findDuplicatePairsMinHash(sets, THRESHOLD),
            notes:
              'findDuplicatePairsMinHash, default: one-permutation MinHash (120 bins, optimal densification), ' +
              'LSH 20 bands x 6 rows, candidates verified exactly (precision 1)',
          },
          {
            name: 'zerda minhash k-perm',
            repeats: REPEATS,
            run: () => findDuplicatePairsMinHash(sets, THRESHOLD, { scheme: 'k-permutation' }),
            notes:
              "findDuplicatePairsMinHash({ scheme: 'k-permutation' }): 120 independent hash functions per term, " +
              'LSH 20 bands x 6 rows, candidates verified exactly',
          },
        ];
        for (const system of systems) {
          if (options.skip.includes(system.name)) continue;
          const measured = system.name === 'zerda exact' ? exact : timeRuns(system.repeats, system.run);
          const pairs = measured.value;
          const agreeing = pairs.filter((pair) => reference.has(key(pair))).length;
          const recall = reference.size === 0 ? 1 : agreeing / reference.size;
          const precision = pairs.length === 0 ? 1 : agreeing / pairs.length;
          const p50 = percentile(measured.times, 50);
          options.log(
            `  ${system.name}: p50 ${p50.toFixed(2)} ms, ${pairs.length} pairs, recall ${recall.toFixed(4)}, precision ${precision.toFixed(4)}`,
          );
          rows.push({
            suite: 'rerank',
            system: `${system.name} (${profile.name})`,
            size,
            p50Ms: p50,
            p99Ms: percentile(measured.times, 99),
            quality: { pairs: pairs.length, recall, precision },
            notes: `${system.notes}; Jaccard threshold ${THRESHOLD}, ${measured.times.length} timed runs after a warm-up`,
          });
        }
        collectGarbage();
      }
    }
    return rows;
  },
};
