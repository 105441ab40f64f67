import { EVAL_DEFAULTS, EVAL_PRESETS, type EvalReport, evalAnalyzers, evalFusions } from './eval-run.js';

/* `zerda eval`, formatting: the readable table of a report, and the help. */

/** A readable table of an evaluation. */
export function formatEvalReport(report: EvalReport): string {
  const { settings } = report;
  const rows: Array<[string, string]> = [
    ['collection', `${report.collection} (${report.folder})`],
    ['documents', report.documents.toLocaleString('en-US')],
    ['queries', `${report.judgedQueries} judged of ${report.queries}`],
    ['mode', report.mode === 'hybrid' ? `hybrid (${report.fusion})` : report.mode],
  ];
  if (settings.run) rows.push(['run', settings.run]);
  if (settings.keyword) {
    const { preset, k1, b, analyzer } = settings.keyword;
    const own = EVAL_PRESETS[preset];
    const fromPreset = own.k1 === k1 && own.b === b && own.analyzer === analyzer;
    rows.push([
      'BM25',
      `k1=${k1} b=${b}, analyzer ${analyzer} (${fromPreset ? `preset ${preset}` : `preset ${preset}, overridden`})`,
    ]);
  }
  if (settings.vector) {
    const v = settings.vector;
    rows.push([
      'vectors',
      v.embedder === 'hash'
        ? `HashEmbedder, dimension ${v.dimension}, ${v.metric}`
        : `${v.documentVectors}${v.queryVectors ? ` + ${v.queryVectors}` : ''}, dimension ${v.dimension}, ${v.metric}`,
    ]);
  }
  if (settings.hybrid) {
    const h = settings.hybrid;
    rows.push([
      'fusion',
      `${h.fusion}${h.fusion === 'rrf' ? '' : ` (${h.normalization})`}, ${h.branchK} candidates per branch, weights keyword ${h.weights.keyword} vector ${h.weights.vector}${h.fusion === 'weighted' ? '' : `, RRF k=${h.rrfK}`}, ${h.fusion === 'rrf' ? 'no guard (RRF)' : `weak-branch guard ${h.guard ? 'on' : 'off'}`}${h.configFile ? `, from ${h.configFile}` : ''}`,
    ]);
  }
  if (settings.depth !== undefined) rows.push(['depth', String(settings.depth)]);
  rows.push(
    ['nDCG@10', report['ndcg@10'].toFixed(4)],
    ['Recall@100', report['recall@100'].toFixed(4)],
    ['MRR@10', report['mrr@10'].toFixed(4)],
  );
  if (report.indexTimeMs !== undefined) rows.push(['index time', `${report.indexTimeMs.toFixed(1)} ms`]);
  if (report.queryLatencyMs) {
    rows.push([
      'query latency',
      `p50 ${report.queryLatencyMs.p50.toFixed(3)} ms, p99 ${report.queryLatencyMs.p99.toFixed(3)} ms`,
    ]);
  }
  if (report.runFile) rows.push(['run file', report.runFile]);
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`);
  for (const warning of report.warnings) lines.push(`  warning: ${warning}`);
  return `${lines.join('\n')}\n`;
}

export const evalHelp = `Usage: zerda eval <folder> [options]
       zerda eval <folder> --run <file> [--json]

Evaluates retrieval on a test collection in BEIR layout (corpus.jsonl, queries.jsonl,
qrels/test.tsv or qrels.tsv). Title and text are indexed as one field; every query with at
least one relevant judgment is run; nDCG@10 (linear gain), Recall@100 and MRR@10 are computed
as trec_eval computes them. With --run, scores a TREC run file instead of retrieving.

Modes:
  keyword   Zerda's BM25 (default)
  vector    an in-memory vector store (cosine) searched with each query's vector; vectors
            come from --embeddings, or from Zerda's HashEmbedder (no model needed)
  hybrid    both, fused by the HybridRetriever (each branch fetches --branch-k candidates)

Options:
  --mode <m>               keyword | vector | hybrid (default ${EVAL_DEFAULTS.mode})
  --preset <name>          BM25 settings by name: library (default: what Zerda serves, k1
                           ${EVAL_PRESETS.library.k1}, b ${EVAL_PRESETS.library.b}, the ${EVAL_PRESETS.library.analyzer} analyser) or pyserini (Anserini's
                           for BEIR: k1 ${EVAL_PRESETS.pyserini.k1}, b ${EVAL_PRESETS.pyserini.b}, ${EVAL_PRESETS.pyserini.analyzer}); --k1, --b and
                           --analyzer override it
  --k1 <n>                 BM25 term-frequency saturation (default: the preset's)
  --b <n>                  BM25 length normalisation, 0 to 1 (default: the preset's)
  --analyzer <name>        ${Object.keys(evalAnalyzers).join(' | ')} (default: the preset's); BM25's, and
                           the hash embedder's
  --depth <n>              documents retrieved per query (default ${EVAL_DEFAULTS.depth})
  --embeddings <file>      your own vectors, JSON lines {"_id": "...", "vector": [...]}: one line
                           per document of corpus.jsonl and per judged query of queries.jsonl.
                           Documents and queries may share ids, so in one file every line says
                           "type": "doc" or "type": "query"; or use --query-embeddings
  --query-embeddings <f>   the query vectors in a file of their own; --embeddings then holds
                           the document vectors only (no "type" needed)
  --dimension <n>          the hash embedder's dimension, without --embeddings (default ${EVAL_DEFAULTS.hashDimension})
  --fusion <f>             ${evalFusions.join(' | ')} (hybrid; default ${EVAL_DEFAULTS.fusion})
  --branch-k <n>           candidates each hybrid branch fetches (default 2 x depth)
  --rrf-k <n>              RRF's k in hybrid fusion (default ${EVAL_DEFAULTS.rrfK})
  --weights <kw,vec>       hybrid branch weights (default 1,1)
  --fusion-config <file>   a fusion setting (JSON, version 1, as zerda tune --out writes it) for
                           hybrid mode, instead of --fusion, --branch-k, --rrf-k and --weights;
                           its "bm25" sets --k1 and --b where they are not given
  --split <name>           read qrels/<name>.tsv (default test; falls back to qrels.tsv)
  --qrels <file>           read the judgments from this file instead
  --write-run <file>       also write Zerda's run as a TREC run file (qid Q0 docid rank score tag)
  --run <file>             score this TREC run file instead of retrieving (no other options
                           but --split, --qrels, --report and --json)
  --report <file.html>     also write a self-contained HTML report (no external request): the
                           metrics table and charts of keyword vs vector vs hybrid (all three
                           are run, with the options given) and of per-query nDCG@10; with --run,
                           of that run
  --json                   print a JSON object (with the mode, fusion and settings) instead of
                           a table
  -h, --help               show this help

A vector that is missing, of the wrong length or holds a value that is not a finite number is
an error that names the file, the line and the id.

Exit codes: 0 success; 1 the evaluation failed (a missing folder or file, a malformed line: the
message names the file and the line); 2 the command was called wrongly (bad flag or value).

Examples:
  pnpm zerda eval datasets/cisi
  pnpm zerda eval datasets/cranfield --k1 1.2 --b 0.75 --json
  pnpm zerda eval datasets/cisi --mode vector
  pnpm zerda eval datasets/cisi --mode hybrid --fusion rrf --json
  pnpm zerda eval datasets/cisi --mode hybrid --embeddings docs.jsonl --query-embeddings queries.jsonl
  pnpm zerda eval datasets/cisi --mode hybrid --write-run hybrid.run
  pnpm zerda eval datasets/cisi --mode hybrid --fusion-config cisi-fusion.json
  pnpm zerda eval datasets/cisi --run hybrid.run --json
  pnpm zerda eval datasets/cranfield --report cranfield.html
`;
