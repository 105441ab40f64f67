import type { HybridFusionMethod, ScoredChunk } from '@zerda/core';
import { formatConversation } from '../demo-conversation.js';
import type { DemoReport } from './demo-run.js';

/**
 * Why a hybrid hit scored what it did, in a few words: each branch's rank and score
 * (`keyword #1 1.000`), or that a branch did not find it.
 */
export function explainHit(hit: ScoredChunk, branches: readonly string[] = ['keyword', 'vector']): string {
  return branches
    .map((branch) => {
      const rank = hit.ranks[branch];
      const score = hit.scores[branch];
      return rank === undefined ? `${branch} -` : `${branch} #${rank} ${(score ?? 0).toFixed(3)}`;
    })
    .join(', ');
}

/** The demo as text: for each query a compact table of the three retrievers' top hits. */
export function formatDemoReport(report: DemoReport): string {
  const lines = [
    `Indexed ${report.documents} sample passages (English, Arabic and mixed) into a BM25 keyword index and an`,
    `in-memory vector store (${report.embedder.name}, ${report.embedder.dimension} dimensions, cosine). Top ${report.k} per retriever;`,
    `hybrid fuses the keyword and vector rankings by ${describeFusion(report.fusion)}.`,
  ];
  report.results.forEach((result, index) => {
    lines.push('', `${index + 1}. ${result.label ? `[${result.label}] ` : ''}"${result.query}"`);
    if (result.filter !== undefined) lines.push(`   filter ${JSON.stringify(result.filter)}`);
    const columns = [
      { title: 'keyword (BM25)', hits: result.keyword.hits },
      { title: 'vector (cosine)', hits: result.vector.hits },
      { title: `hybrid (${report.fusion})`, hits: result.hybrid.hits },
    ];
    const cell = (hit: ScoredChunk | undefined) => (hit ? `${hit.chunk.id} ${hit.score.toFixed(3)}` : '');
    const width = Math.max(
      16,
      ...columns.flatMap((c) => [c.title.length, ...c.hits.map((h) => cell(h).length)]),
    );
    const rows = Math.max(...columns.map((c) => c.hits.length));
    lines.push(
      `   #  ${columns.map((c) => c.title.padEnd(width)).join('  ')}  why (hybrid: rank and score per branch)`,
    );
    if (rows === 0) lines.push('   no match');
    for (let i = 0; i < rows; i++) {
      const hybridHit = result.hybrid.hits[i];
      lines.push(
        `   ${i + 1}  ${columns.map((c) => cell(c.hits[i]).padEnd(width)).join('  ')}  ${hybridHit ? explainHit(hybridHit) : ''}`.trimEnd(),
      );
    }
    for (const hit of result.hybrid.hits) {
      const m = hit.chunk.metadata ?? {};
      const tags = [m.lang, m.year, m.category].filter((v) => v !== undefined).join(' ');
      lines.push(`   ${hit.chunk.id.padEnd(6)} ${tags.padEnd(20)} ${truncate(hit.chunk.text, 70)}`);
    }
    const warnings = [...result.keyword.warnings, ...result.vector.warnings, ...result.hybrid.warnings];
    for (const warning of warnings) lines.push(`   warning: ${warning.message}`);
  });
  lines.push(...formatConversation(report.conversation));
  return `${lines.join('\n')}\n`;
}

function describeFusion(fusion: HybridFusionMethod): string {
  if (fusion === 'rrf') return 'reciprocal rank fusion (k=60)';
  if (fusion === 'weighted') return 'the mean of min-max normalised scores';
  return 'the mean of min-max normalised scores plus an RRF bonus';
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}
