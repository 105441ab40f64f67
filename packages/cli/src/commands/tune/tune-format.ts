import type { FusionConfig } from '@zerda/core';
import { namedAnalyzers } from '../../analyzers.js';
import type { TuneReport } from './tune-run.js';
import { BM25_GRID, TUNE_DEFAULTS } from './tune-run.js';

/** A fusion setting in a few words: `weighted theoretical-minmax, keyword 0.8 / vector 0.2, depth 200, guard on`. */
export function describeFusionConfig(config: FusionConfig): string {
  const weights = config.weights
    ? Object.entries(config.weights)
        .map(([name, weight]) => `${name} ${weight}`)
        .join(' / ')
    : 'equal weights';
  const method =
    config.method === 'rrf'
      ? `rrf k=${config.rrfK ?? 60}`
      : `${config.method} ${config.normalization ?? 'theoretical-minmax'}`;
  const guard = config.guard === false ? 'guard off' : 'guard on';
  return `${method}, ${weights}${config.depth === undefined ? '' : `, depth ${config.depth}`}, ${guard}`;
}

/** A readable account of a tuning. */
export function formatTuneReport(report: TuneReport): string {
  const f = (x: number) => x.toFixed(4);
  const lines: string[] = [];
  lines.push(
    `  collection  ${report.collection} (${report.folder}), ${report.documents.toLocaleString('en-US')} documents, ${report.judgedQueries} judged queries`,
    `  searched    ${report.settings} fusion settings over cached candidate lists, ${report.folds.length} folds, seed ${report.seed} (branches ${report.timeMs.branches} ms, search ${report.timeMs.search} ms)`,
    '',
    '  held-out nDCG@10 per fold',
    '  fold  queries  tuned   keyword  vector  chosen on the other folds',
  );
  for (const fold of report.folds) {
    lines.push(
      `  ${String(fold.fold).padEnd(4)}  ${String(fold.queries).padEnd(7)}  ${f(fold.ndcg10)}  ${f(fold.keywordNdcg10)}   ${f(fold.vectorNdcg10)}  ${describeFusionConfig(fold.chosen)}`,
    );
  }
  const spread = (s: { mean: number; std: number }) => `${f(s.mean)} ± ${f(s.std)}`;
  lines.push(
    `  mean ± std     ${spread(report.tuned)} (keyword ${spread(report.keyword)}, vector ${spread(report.vector)})`,
    '',
    `  chosen on all queries: ${describeFusionConfig(report.config)}`,
    `  all queries   nDCG@10  Recall@${report.k}`,
    `  tuned         ${f(report.all.tuned.ndcg10)}   ${f(report.all.tuned.recall)}`,
    `  keyword       ${f(report.all.keyword.ndcg10)}   ${f(report.all.keyword.recall)}`,
    `  vector        ${f(report.all.vector.ndcg10)}   ${f(report.all.vector.recall)}`,
  );
  if (report.bm25Search) {
    lines.push('', '  BM25 settings tried (held-out nDCG@10: tuned fusion, keyword alone)');
    for (const entry of report.bm25Search) {
      lines.push(
        `  k1 ${String(entry.k1).padEnd(4)} b ${String(entry.b).padEnd(5)} ${spread(entry.tuned)}   ${spread(entry.keyword)}`,
      );
    }
    lines.push(`  chosen: k1 ${report.config.bm25?.k1} b ${report.config.bm25?.b}`);
  }
  if (report.settingsFile)
    lines.push('', `  setting written to ${report.settingsFile} (zerda eval --fusion-config reads it)`);
  return `${lines.join('\n')}\n`;
}

export const tuneHelp = `Usage: zerda tune <folder> [options]

Chooses how to fuse keyword (BM25) and vector retrieval for a collection in BEIR layout
(corpus.jsonl, queries.jsonl, qrels/test.tsv or qrels.tsv), by k-fold cross-validation on its
judged queries. Each branch runs once per query; then every fusion setting is scored over those
candidate lists: a convex combination of min-max, z-score or theoretical-min-max normalised
scores (the keyword weight alpha from 0 to 1) or RRF (k from 1 to 100), each at several depths
per branch, with the weak-branch guard on and off. Reports each fold's held-out nDCG@10, the
mean and spread beside keyword alone and vector alone, and writes the setting chosen on all
queries as JSON (--out), which zerda eval --fusion-config and HybridRetriever({ fusion }) read.
With --tune-bm25 it also chooses BM25's k1 and b. Needs at least 10 judged queries.

Options:
  --embeddings <file>      your own vectors, as zerda eval takes them (JSON lines {"_id",
                           "vector"}; without --query-embeddings every line says "type")
  --query-embeddings <f>   the query vectors in a file of their own
  --dimension <n>          the hash embedder's dimension, without --embeddings (default ${TUNE_DEFAULTS.hashDimension})
  --k1 <n>                 BM25 term-frequency saturation (default ${TUNE_DEFAULTS.k1})
  --b <n>                  BM25 length normalisation, 0 to 1 (default ${TUNE_DEFAULTS.b})
  --analyzer <name>        ${Object.keys(namedAnalyzers).join(' | ')} (default ${TUNE_DEFAULTS.analyzer})
  --depth <n>              hits per query, for Recall@n; branch depths tried are n, 2n, 4n (default ${TUNE_DEFAULTS.depth})
  --folds <n>              folds of cross-validation (default ${TUNE_DEFAULTS.folds})
  --seed <n>               seeds the split into folds (default ${TUNE_DEFAULTS.seed}); the same seed, the same result
  --split <name>           read qrels/<name>.tsv (default test; falls back to qrels.tsv)
  --qrels <file>           read the judgments from this file instead
  --out <file>             write the chosen fusion setting here (JSON, version 1)
  --tune-bm25              also choose BM25's k1 and b among ${BM25_GRID.map((p) => `${p.k1}/${p.b}`).join(', ')}: the
                           search runs for each, the best cross-validated one is kept (slower)
  --json                   print a JSON object instead of a table (progress stays on stderr)
  -h, --help               show this help

Exit codes: 0 success; 1 the tuning failed (a missing folder or file, a malformed line); 2 the
command was called wrongly (bad flag or value, fewer than 10 judged queries).

Examples:
  pnpm zerda tune datasets/cisi --out cisi-fusion.json
  pnpm zerda eval datasets/cisi --mode hybrid --fusion-config cisi-fusion.json
  pnpm zerda tune datasets/cranfield --embeddings docs.jsonl --query-embeddings queries.jsonl --json
`;
