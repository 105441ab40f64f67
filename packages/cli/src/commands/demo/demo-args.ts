import { DEFAULT_FUSION_CONFIG, type FilterInput, type HybridFusionMethod } from '@zerda/core';
import { parseCommandArgs, readNumber } from '../../args.js';
import { UsageError } from '../../io.js';
import { readFilterOption } from '../search/search-args.js';
import type { DemoOptions } from './demo-run.js';

export const demoHelp = `Usage: zerda demo [query...] [options]

Indexes a small bundled corpus (English, Arabic and mixed passages with category, year and
language metadata) into a BM25 keyword index and into the in-memory vector store with the
hash embedder (no model, no network), then prints, for each query, the top hits of keyword,
vector and hybrid retrieval side by side, with each hybrid hit's rank and score in each branch.
Without queries it runs four sample queries: English, Arabic, mixed, and one with a metadata
filter.

Options:
  -k <n>             hits per query and retriever (default 3)
  --fusion <f>       rrf | weighted | weighted+rrf (default ${DEFAULT_FUSION_CONFIG.method})
  --filter <json>    a metadata filter for the queries given, for example
                     '{"lang": "en", "year": {"$gte": 2022}}'
  --json             print the results as JSON
  --web [port]       serve the demo as a web page on 127.0.0.1 (type a question, see keyword,
                     vector and hybrid results side by side); Ctrl-C stops it
  -h, --help         show this help

Exit codes: 0 success; 1 the demo failed; 2 the command was called wrongly (bad flag or value).

Examples:
  pnpm zerda demo
  pnpm zerda demo "reciprocal rank fusion" "القهوة العربية"
  pnpm zerda demo "vector search" --filter '{"lang": "en", "year": {"$gte": 2022}}' --fusion rrf
  pnpm demo --web
`;

/** What `zerda demo`'s arguments ask for: help, the web page on a port, or a run. */
export type DemoArgs =
  | { kind: 'help' }
  | { kind: 'web'; port: number }
  | { kind: 'run'; options: DemoOptions; json: boolean };

/** `zerda demo`'s arguments, checked. */
export function parseDemoArgs(argv: string[]): DemoArgs {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      k: { type: 'string', short: 'k' },
      fusion: { type: 'string' },
      filter: { type: 'string' },
      json: { type: 'boolean', default: false },
      web: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    demoHelp,
  );
  if (values.help) return { kind: 'help' };
  if (values.web) {
    if (positionals.length > 1) throw new UsageError('--web takes at most a port number', demoHelp);
    return {
      kind: 'web',
      port: readNumber(positionals[0], 'port', demoHelp, { min: 0, integer: true }) ?? 0,
    };
  }
  if (positionals.some((query) => query.trim().length === 0))
    throw new UsageError('a query is empty', demoHelp);
  const fusion = values.fusion ?? DEFAULT_FUSION_CONFIG.method;
  if (!['rrf', 'weighted', 'weighted+rrf'].includes(fusion)) {
    throw new UsageError(`unknown fusion '${fusion}': expected rrf, weighted or weighted+rrf`, demoHelp);
  }
  let filter: FilterInput | undefined;
  if (values.filter !== undefined) {
    if (positionals.length === 0) throw new UsageError('--filter applies to the queries given', demoHelp);
    filter = readFilterOption(values.filter, demoHelp);
  }
  const k = readNumber(values.k, 'k', demoHelp, { min: 1, integer: true });
  return {
    kind: 'run',
    options: {
      ...(positionals.length > 0
        ? { queries: positionals.map((text) => ({ text, ...(filter ? { filter } : {}) })) }
        : {}),
      ...(k === undefined ? {} : { k }),
      fusion: fusion as HybridFusionMethod,
    },
    json: values.json,
  };
}
