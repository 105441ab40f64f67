import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BM25Index,
  BM25SparseEncoder,
  beirDocumentText,
  defaultAnalyzer,
  evaluateRun,
  type Run,
  type SparseVector,
} from '@zerda/core';
import { loadBeirFolder } from '@zerda/core/node';
import { mulberry32, SyntheticCorpus } from '../corpus/synthetic.js';
import { measureBuild } from '../lib/measure.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';

/*
 * BM25 as sparse vectors (BM25SparseEncoder), for databases that rank by sparse dot product.
 *
 * Drift: a database keeps each chunk's document vector as it was encoded, with the average length
 * of that moment, while the query vector is always encoded with the current statistics. CISI and
 * Cranfield are indexed in ten growing slices, each slice encoded with the statistics after it
 * was counted and never re-encoded; the in-process dot-product ranking of those stale vectors is
 * compared with (a) the same documents re-encoded with the final statistics and (b) BM25Index.
 * Twice per collection: in corpus order and in a seeded shuffle.
 *
 * Speed: encoding throughput on the synthetic corpus beside BM25Index's build, same analyser.
 */

const SLICES = 10;
const DEPTH = 100;
const datasetsRoot = join(dirname(fileURLToPath(import.meta.url)), '../../datasets');

function dot(query: SparseVector, document: SparseVector): number {
  let score = 0;
  let i = 0;
  let j = 0;
  const qi = query.indices;
  const di = document.indices;
  while (i < qi.length && j < di.length) {
    const a = qi[i] as number;
    const b = di[j] as number;
    if (a === b) score += (query.values[i++] as number) * (document.values[j++] as number);
    else if (a < b) i++;
    else j++;
  }
  return score;
}

/** Every document's dot product with the query. */
function scoreAll(query: SparseVector, documents: readonly SparseVector[]): Float64Array {
  const scores = new Float64Array(documents.length);
  for (let d = 0; d < documents.length; d++) scores[d] = dot(query, documents[d] as SparseVector);
  return scores;
}

/** The top `DEPTH` positive scores, best first, equal scores by id (as BM25Index orders them). */
function topIds(scores: Float64Array, ids: readonly string[]): number[] {
  const order: number[] = [];
  for (let d = 0; d < scores.length; d++) if ((scores[d] as number) > 0) order.push(d);
  order.sort(
    (a, b) =>
      (scores[b] as number) - (scores[a] as number) || ((ids[a] as string) < (ids[b] as string) ? -1 : 1),
  );
  return order.slice(0, DEPTH);
}

interface DriftResult {
  staleNdcg: number;
  freshNdcg: number;
  indexNdcg: number;
  staleRecall: number;
  freshRecall: number;
  indexRecall: number;
  /** Largest |stale - fresh| / fresh over each query's fresh top 100. */
  maxStaleError: number;
  /** The bound: largest |avgdl(at encoding) / avgdl(final) - 1| over the slices. */
  driftBound: number;
  /** Largest |fresh - index| / index over the index's top 100 (float rounding only). */
  maxFreshError: number;
  /** Mean top-10 overlap of the stale ranking with the fresh one. */
  top10Overlap: number;
  /** Share of queries whose stale top 10 is the fresh top 10 in the same order. */
  top10Identical: number;
  /** Share of queries whose fresh top 100 is the index's, in the same order. */
  freshEqualsIndex: number;
  averageLengths: number[];
}

async function measureDrift(folder: string, order: 'corpus' | 'shuffled'): Promise<DriftResult> {
  const dataset = await loadBeirFolder(folder);
  let documents = dataset.corpus;
  if (order === 'shuffled') {
    const random = mulberry32(0x5eed);
    documents = documents
      .map((document) => ({ document, key: random() }))
      .sort((a, b) => a.key - b.key)
      .map((entry) => entry.document);
  }
  const ids = documents.map((document) => document.id);
  const texts = documents.map(beirDocumentText);

  const encoder = new BM25SparseEncoder();
  const stale: SparseVector[] = [];
  const averageLengths: number[] = [];
  for (let s = 0; s < SLICES; s++) {
    const slice = texts.slice(
      Math.floor((s * texts.length) / SLICES),
      Math.floor(((s + 1) * texts.length) / SLICES),
    );
    stale.push(...encoder.addAndEncode(slice));
    averageLengths.push(encoder.stats.averageLength);
  }
  const finalAverage = encoder.stats.averageLength;
  const fresh = encoder.encodeDocuments(texts);
  const index = new BM25Index();
  index.add(texts.map((text, d) => ({ id: ids[d] as string, text })));

  const staleRun: Run = new Map();
  const freshRun: Run = new Map();
  const indexRun: Run = new Map();
  let maxStaleError = 0;
  let maxFreshError = 0;
  let overlap = 0;
  let identical = 0;
  let equalToIndex = 0;
  for (const query of dataset.judgedQueries) {
    const vector = encoder.encodeQuery(query.text);
    const staleScores = scoreAll(vector, stale);
    const freshScores = scoreAll(vector, fresh);
    const staleTop = topIds(staleScores, ids);
    const freshTop = topIds(freshScores, ids);
    const indexHits = index.search(query.text, DEPTH);
    staleRun.set(
      query.id,
      staleTop.map((d) => ({ docId: ids[d] as string, score: staleScores[d] as number })),
    );
    freshRun.set(
      query.id,
      freshTop.map((d) => ({ docId: ids[d] as string, score: freshScores[d] as number })),
    );
    indexRun.set(
      query.id,
      indexHits.map((hit) => ({ docId: hit.id, score: hit.score })),
    );
    for (const d of freshTop) {
      const error =
        Math.abs((staleScores[d] as number) - (freshScores[d] as number)) / (freshScores[d] as number);
      maxStaleError = Math.max(maxStaleError, error);
    }
    const slot = new Map(ids.map((id, d) => [id, d]));
    indexHits.forEach((hit) => {
      const error = Math.abs((freshScores[slot.get(hit.id) as number] as number) - hit.score) / hit.score;
      maxFreshError = Math.max(maxFreshError, error);
    });
    const fresh10 = freshTop.slice(0, 10);
    const stale10 = staleTop.slice(0, 10);
    const fresh10Set = new Set(fresh10);
    overlap += fresh10.length === 0 ? 1 : stale10.filter((d) => fresh10Set.has(d)).length / fresh10.length;
    if (stale10.length === fresh10.length && stale10.every((d, r) => d === fresh10[r])) identical++;
    if (
      freshTop.length === indexHits.length &&
      freshTop.every((d, r) => ids[d] === (indexHits[r] as { id: string }).id)
    )
      equalToIndex++;
  }
  const metrics = ['ndcg@10', 'recall@100'];
  const evaluate = (run: Run) => evaluateRun(run, dataset.qrels, { metrics }).metrics;
  const staleMetrics = evaluate(staleRun);
  const freshMetrics = evaluate(freshRun);
  const indexMetrics = evaluate(indexRun);
  const queries = dataset.judgedQueries.length;
  return {
    staleNdcg: staleMetrics['ndcg@10'] as number,
    freshNdcg: freshMetrics['ndcg@10'] as number,
    indexNdcg: indexMetrics['ndcg@10'] as number,
    staleRecall: staleMetrics['recall@100'] as number,
    freshRecall: freshMetrics['recall@100'] as number,
    indexRecall: indexMetrics['recall@100'] as number,
    maxStaleError,
    driftBound: Math.max(...averageLengths.map((average) => Math.abs(average / finalAverage - 1))),
    maxFreshError,
    top10Overlap: overlap / queries,
    top10Identical: identical / queries,
    freshEqualsIndex: equalToIndex / queries,
    averageLengths,
  };
}

async function driftRows(log: (line: string) => void): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const name of ['cisi', 'cranfield']) {
    for (const order of ['corpus', 'shuffled'] as const) {
      const result = await measureDrift(join(datasetsRoot, name), order);
      const size = name === 'cisi' ? 1460 : 1400;
      const slices = result.averageLengths.map((average) => average.toFixed(1)).join(', ');
      log(
        `  ${name} (${order} order): nDCG@10 stale ${result.staleNdcg.toFixed(4)}, fresh ${result.freshNdcg.toFixed(4)}, ` +
          `index ${result.indexNdcg.toFixed(4)}; largest stale score error ${(result.maxStaleError * 100).toFixed(2)}% ` +
          `(bound ${(result.driftBound * 100).toFixed(2)}%); avgdl after each slice: ${slices}`,
      );
      const note = `${name}, ${SLICES} growing slices in ${order} order, each encoded once with the statistics of its time`;
      rows.push({
        suite: 'sparse-drift',
        system: `${name} stale (${order})`,
        size,
        quality: {
          ndcg10: result.staleNdcg,
          recall100: result.staleRecall,
          maxScoreError: result.maxStaleError,
          driftBound: result.driftBound,
          top10Overlap: result.top10Overlap,
          top10Identical: result.top10Identical,
        },
        notes: `${note}; scores vs re-encoded (avgdl after each slice: ${slices})`,
      });
      rows.push({
        suite: 'sparse-drift',
        system: `${name} re-encoded (${order})`,
        size,
        quality: {
          ndcg10: result.freshNdcg,
          recall100: result.freshRecall,
          maxScoreError: result.maxFreshError,
          top100EqualsIndex: result.freshEqualsIndex,
        },
        notes: `${note}, then re-encoded with the final statistics; scores vs BM25Index`,
      });
      rows.push({
        suite: 'sparse-drift',
        system: `${name} BM25Index`,
        size,
        quality: { ndcg10: result.indexNdcg, recall100: result.indexRecall },
        notes: 'in-process BM25Index, default analyser, k1=1.2 b=0.75',
      });
    }
  }
  return rows;
}

/** Documents per second from a count and milliseconds. */
const perSecond = (count: number, ms: number) => Math.round((count / ms) * 1000);

async function throughputRows(size: number, log: (line: string) => void): Promise<BenchRow[]> {
  const documents = new SyntheticCorpus().documents(size);
  const texts = documents.map((document) => document.text);
  // One pass first, so that every measurement below finds the analyser's term cache warm.
  let started = performance.now();
  for (const text of texts) defaultAnalyzer.analyze(text);
  const coldAnalysisMs = performance.now() - started;
  started = performance.now();
  for (const text of texts) defaultAnalyzer.analyze(text);
  const analysisMs = performance.now() - started;

  const indexBuild = await measureBuild(() => {
    const index = new BM25Index();
    index.add(documents);
    return index;
  });
  const countBuild = await measureBuild(() => {
    const encoder = new BM25SparseEncoder();
    encoder.add(texts);
    return encoder;
  });
  started = performance.now();
  const vectors = countBuild.value.encodeDocuments(texts);
  const encodeMs = performance.now() - started;
  started = performance.now();
  new BM25SparseEncoder().addAndEncode(texts);
  const addAndEncodeMs = performance.now() - started;
  let nonZero = 0;
  for (const vector of vectors) nonZero += vector.indices.length;
  const queries = new SyntheticCorpus().queries(1000);
  started = performance.now();
  for (const query of queries) countBuild.value.encodeQuery(query);
  const queryMs = performance.now() - started;
  const saved = countBuild.value.save();

  log(
    `  ${size} synthetic docs: BM25Index build ${(indexBuild.ms / 1000).toFixed(2)} s, encoder add ${(countBuild.ms / 1000).toFixed(2)} s, ` +
      `encodeDocuments ${(encodeMs / 1000).toFixed(2)} s, addAndEncode ${(addAndEncodeMs / 1000).toFixed(2)} s, ` +
      `analysis alone ${(analysisMs / 1000).toFixed(2)} s (cold ${(coldAnalysisMs / 1000).toFixed(2)} s)`,
  );
  const note = 'synthetic corpus, default analyser (term cache warmed by one analysis pass first)';
  return [
    {
      suite: 'sparse-drift',
      system: 'analyse only',
      size,
      buildMs: analysisMs,
      quality: { docsPerSecond: perSecond(size, analysisMs) },
      notes: `${note}; defaultAnalyzer.analyze over every text, nothing else`,
    },
    {
      suite: 'sparse-drift',
      system: 'BM25Index build',
      size,
      buildMs: indexBuild.ms,
      memoryBytes: indexBuild.bytes,
      quality: { docsPerSecond: perSecond(size, indexBuild.ms) },
      notes: note,
    },
    {
      suite: 'sparse-drift',
      system: 'encoder add',
      size,
      buildMs: countBuild.ms,
      memoryBytes: countBuild.bytes,
      quality: { docsPerSecond: perSecond(size, countBuild.ms), savedBytes: saved.byteLength },
      notes: `${note}; statistics only (document frequency per term id)`,
    },
    {
      suite: 'sparse-drift',
      system: 'encoder encodeDocuments',
      size,
      buildMs: encodeMs,
      quality: { docsPerSecond: perSecond(size, encodeMs), meanNonZero: nonZero / size },
      notes: `${note}; document vectors with the statistics counted`,
    },
    {
      suite: 'sparse-drift',
      system: 'encoder addAndEncode',
      size,
      buildMs: addAndEncodeMs,
      quality: { docsPerSecond: perSecond(size, addAndEncodeMs) },
      notes: `${note}; count and encode, analysing each text once`,
    },
    {
      suite: 'sparse-drift',
      system: 'encoder encodeQuery',
      size,
      qps: perSecond(queries.length, queryMs),
      notes: `${note}; 1,000 synthetic queries of 2 to 6 terms`,
    },
  ];
}

export const sparseDriftSuite: BenchSuite = {
  name: 'sparse-drift',
  defaultSizes: [100_000],
  async run(options: BenchSuiteOptions): Promise<BenchRow[]> {
    const rows = await driftRows(options.log);
    for (const size of options.sizes) rows.push(...(await throughputRows(size, options.log)));
    return rows;
  },
};
