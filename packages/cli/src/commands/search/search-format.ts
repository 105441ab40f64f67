import { namedAnalyzers } from '../../analyzers.js';
import { type HighlightStyle, makeSnippet, queryMatcher } from '../../snippet.js';
import type { SearchHitReport, SearchReport } from './search-run.js';

export interface FormatSearchOptions {
  /** How query words are marked in snippets (default 'brackets'). */
  style?: HighlightStyle;
  /** Line width to fit the table to (default 100). */
  width?: number;
  /** Print each hit's per-branch explanation. */
  explain?: boolean;
}

/** The result as a table: rank, score, id, source and a snippet with the query words marked. */
export function formatSearchReport(report: SearchReport, options: FormatSearchOptions = {}): string {
  const style = options.style ?? 'brackets';
  const width = Math.max(60, options.width ?? 100);
  const analyzer = namedAnalyzers[report.analyzer]();
  const matches = queryMatcher(report.query, analyzer);
  const lines: string[] = [];
  const how = report.mode === 'hybrid' ? `hybrid (${report.fusion})` : report.mode;
  lines.push(
    `${how} search for "${report.query}"${report.filter === undefined ? '' : ` with filter ${JSON.stringify(report.filter)}`}: ${report.hits.length} hit${report.hits.length === 1 ? '' : 's'} (of ${report.total.toLocaleString('en-US')} ${report.mode === 'hybrid' ? 'candidates' : 'matching chunks'}) in ${report.latencyMs.toFixed(1)} ms (store: ${report.storeCounts.documents.toLocaleString('en-US')} documents, ${report.storeCounts.chunks.toLocaleString('en-US')} chunks)`,
  );
  if (report.hits.length === 0) {
    lines.push('', 'No match.');
  } else {
    const idWidth = Math.min(24, Math.max(2, ...report.hits.map((hit) => hit.id.length)));
    const sources = report.hits.map((hit) => shorten(hit.source ?? '', 28));
    const sourceWidth = Math.max(6, ...sources.map((source) => source.length));
    const rankWidth = Math.max(1, String(report.hits.length).length);
    const fixed = rankWidth + 2 + 5 + 2 + idWidth + 2 + sourceWidth + 2;
    const snippetWidth = Math.max(30, width - fixed - 2);
    lines.push(
      '',
      `${'#'.padStart(rankWidth)}  score  ${'id'.padEnd(idWidth)}  ${'source'.padEnd(sourceWidth)}  snippet`,
    );
    report.hits.forEach((hit, index) => {
      const snippet = makeSnippet(hit.text, matches, { width: snippetWidth, style });
      lines.push(
        `${String(hit.rank).padStart(rankWidth)}  ${hit.score.toFixed(3)}  ${shorten(hit.id, idWidth).padEnd(idWidth)}  ${(sources[index] ?? '').padEnd(sourceWidth)}  ${snippet.text}`,
      );
      if (options.explain) {
        const indent = ' '.repeat(rankWidth + 2);
        for (const line of explainLines(hit, report)) lines.push(`${indent}${line}`);
        lines.push('');
      }
    });
  }
  for (const warning of report.warnings) lines.push(`warning: ${warning}`);
  return `${lines.join('\n').trimEnd()}\n`;
}

function explainLines(hit: SearchHitReport, report: SearchReport): string[] {
  const lines: string[] = [];
  if (hit.title) lines.push(`title    ${hit.title}`);
  if (report.mode === 'hybrid') {
    for (const branch of ['keyword', 'vector']) {
      const rank = hit.ranks[branch];
      const score = hit.scores[branch];
      const own = hit.branches?.[branch];
      const detail = own?.explanation?.components?.bm25;
      const label = branch.padEnd(8);
      if (rank === undefined) {
        lines.push(`${label} not in its top ${2 * report.k}`);
      } else {
        lines.push(
          `${label} #${rank}  score ${(score ?? 0).toFixed(3)}${detail === undefined ? '' : `  (BM25 ${detail.toFixed(4)})`}${branch === 'vector' ? '  (cosine similarity)' : ''}`,
        );
      }
    }
    if (hit.explanation) lines.push(`fused    ${hit.score.toFixed(4)} = ${hit.explanation.description}`);
  } else if (hit.explanation) {
    lines.push(`${report.mode.padEnd(8)} ${hit.explanation.description}`);
  }
  return lines;
}

function shorten(text: string, width: number): string {
  return text.length <= width ? text : `…${text.slice(text.length - width + 1)}`;
}
