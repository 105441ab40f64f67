import { KeywordRetriever, type SearchResult } from '@zerda/core';
import { parseCommandArgs, readNumber } from '../args.js';
import { type CliIo, UsageError } from '../io.js';
import { samplePassages, sampleQueries } from '../sample/passages.js';

export interface DemoOptions {
  /** Queries to run (default: the three sample queries, one of them Arabic). */
  queries?: readonly string[];
  /** Hits per query (default 3). */
  k?: number;
}

export interface DemoReport {
  documents: number;
  results: SearchResult[];
}

/** Indexes the bundled sample corpus with a keyword retriever and runs the queries. */
export async function runDemo(options: DemoOptions = {}): Promise<DemoReport> {
  const k = options.k ?? 3;
  const retriever = new KeywordRetriever({ k });
  await retriever.add(samplePassages);
  const results: SearchResult[] = [];
  for (const query of options.queries ?? sampleQueries) results.push(await retriever.retrieve(query, { k }));
  return { documents: samplePassages.length, results };
}

/** The demo's results as text: each query with its ranked hits. */
export function formatDemoReport(report: DemoReport): string {
  const lines = [
    `Indexed ${report.documents} sample passages (English, Arabic and mixed) for keyword search.`,
  ];
  for (const result of report.results) {
    lines.push('', `> ${result.query}   (${result.hits.length} hits, ${result.latencyMs.toFixed(2)} ms)`);
    if (result.hits.length === 0) lines.push('  no match');
    for (const hit of result.hits) {
      const metadata = hit.chunk.metadata ?? {};
      const tags = Object.entries(metadata)
        .map(([key, value]) => `${key}=${String(value)}`)
        .join(' ');
      lines.push(`  ${hit.rank}. [${hit.chunk.id}] ${hit.score.toFixed(3)}  ${truncate(hit.chunk.text, 90)}`);
      if (tags) lines.push(`     ${tags}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export const demoHelp = `Usage: zerda demo [query...] [options]

Indexes a small bundled corpus (English, Arabic and mixed passages with category, year and
language metadata) and runs keyword queries against it, printing the ranked results.
Without queries it runs three sample queries, one of them in Arabic.

Options:
  -k <n>        hits per query (default 3)
  --json        print the results as JSON
  -h, --help    show this help

Examples:
  pnpm zerda demo
  pnpm zerda demo "reciprocal rank fusion" "القهوة العربية"
`;

/** `zerda demo` from command-line arguments; returns the exit code. */
export async function demoCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      k: { type: 'string', short: 'k' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    demoHelp,
  );
  if (values.help) {
    io.stdout(demoHelp);
    return 0;
  }
  if (positionals.some((query) => query.trim().length === 0))
    throw new UsageError('a query is empty', demoHelp);
  const report = await runDemo({
    queries: positionals.length > 0 ? positionals : undefined,
    k: readNumber(values.k, 'k', demoHelp, { min: 1, integer: true }),
  });
  io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatDemoReport(report));
  return 0;
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}
