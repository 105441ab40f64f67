import { DEFAULT_B, DEFAULT_K1 } from '@zerda/core';
import { isAnalyzerName, namedAnalyzers } from '../../analyzers.js';
import { parseCommandArgs, readNumber } from '../../args.js';
import { UsageError } from '../../io.js';
import {
  type BackendName,
  type BackendOptions,
  knownBackends,
  readBackendOptions,
} from '../../store-folder/backends.js';
import { INDEX_DEFAULTS, type IndexOptions, knownEmbedders } from './index-run.js';

export const indexHelp = `Usage: zerda index <files or folders...> --store <dir> [options]

Reads documents, splits them into chunks, and adds them to a collection (the chunks, their
vectors in the chosen backend, and a BM25 index) kept in a store folder that 'zerda search'
opens. An existing store is added to: a document indexed again replaces its earlier chunks.

Inputs (folders are read recursively; hidden entries and node_modules are skipped):
  .txt, .md      one document per file; its id is the path; a Markdown file's first heading
                 is its title (YAML front matter is dropped)
  .jsonl         one document per line: a BEIR corpus line {"_id", "title", "text"} or a Zerda
                 chunk {"id", "text", "docId"?, "metadata"?}; a folder in BEIR layout (with a
                 corpus.jsonl) gives its corpus.jsonl only
  -              JSON lines from standard input

Chunks: at most --chunk-size words (runs of non-space characters), cut at the strongest
boundary in a chunk's second half (a paragraph break, then a sentence end, then a line break);
the next chunk repeats the last --overlap words, starting on a sentence where it can. A
document of one chunk keeps its id; a longer one gives <id>#1, <id>#2, ...

Options:
  --store <dir>            the store folder (required): the collection's files and zerda-store.json,
                           which names the backend, analyser, embedder and chunking settings
  --backend <name>         ${knownBackends.join(' | ')} (default ${INDEX_DEFAULTS.backend}); all but memory need
                           their package (@zerda/<name>) installed
  --backend-option <k=v>   a backend setting, repeatable: chroma url, collection, tenant, database;
                           pinecone index, host, namespace; faiss indexType; postgres url, pglite,
                           table (keys come from the environment: CHROMA_API_KEY, PINECONE_API_KEY,
                           DATABASE_URL)
  --embedder <name>        ${knownEmbedders.join(' | ')} (default ${INDEX_DEFAULTS.embedder}: Zerda's HashEmbedder, no model, no network)
  --dimension <n>          the hash embedder's dimension (default ${INDEX_DEFAULTS.dimension})
  --analyzer <name>        ${Object.keys(namedAnalyzers).join(' | ')} (default ${INDEX_DEFAULTS.analyzer}); BM25's and the embedder's
  --k1 <n>, --b <n>        BM25 parameters (default ${DEFAULT_K1} and ${DEFAULT_B})
  --chunk-size <words>     most words per chunk (default ${INDEX_DEFAULTS.chunkSize})
  --overlap <words>        words repeated between consecutive chunks, at most half the chunk
                           size (default ${INDEX_DEFAULTS.overlap})
  --batch-size <n>         documents per batch, the unit added to the collection (default ${INDEX_DEFAULTS.batchSize})
  --commit-interval <s>    least seconds between two snapshots of the collection (default ${INDEX_DEFAULTS.commitIntervalSeconds}; 0:
                           after every batch); each batch is durable when added, a snapshot only
                           makes the next open faster
  --overwrite              start a new store in place of the existing one
  --json                   print the summary as JSON
  -h, --help               show this help

Progress goes to standard error: a bar (documents, chunks per second, time left) on a
terminal, plain lines otherwise. Each batch is durable once added: the collection logs it
before answering. Ctrl-C (or SIGTERM) stops after the batch in flight, committing the whole
batches read so far; a second Ctrl-C stops at once. Either way (or after a crash) the store
holds whole batches only and opens again.

Exit codes: 0 success; 1 the run failed (the store cannot be written, no input could be read);
2 the command was called wrongly; 3 indexed, but some files or lines could not be read (each is
named); 130 interrupted (the store keeps whole batches).

Examples:
  pnpm zerda index datasets/cranfield/corpus.jsonl --store /tmp/cranfield
  pnpm zerda index docs README.md --store .zerda --chunk-size 120 --overlap 20
  cat chunks.jsonl | pnpm zerda index - --store .zerda
`;

/** What `zerda index`'s arguments ask for (`undefined` for --help). */
export interface IndexArgs {
  options: Omit<IndexOptions, 'signal' | 'onEvent' | 'stdin'>;
  json: boolean;
}

/** `zerda index`'s arguments as options, checked; `undefined` when help was asked for. */
export function parseIndexArgs(argv: string[]): IndexArgs | undefined {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      store: { type: 'string' },
      backend: { type: 'string' },
      'backend-option': { type: 'string', multiple: true },
      embedder: { type: 'string' },
      dimension: { type: 'string' },
      analyzer: { type: 'string' },
      k1: { type: 'string' },
      b: { type: 'string' },
      'chunk-size': { type: 'string' },
      overlap: { type: 'string' },
      'batch-size': { type: 'string' },
      'commit-interval': { type: 'string' },
      overwrite: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    indexHelp,
  );
  if (values.help) return undefined;
  if (positionals.length === 0) throw new UsageError('no files or folders to index', indexHelp);
  if (values.store === undefined || values.store.trim() === '')
    throw new UsageError('--store <dir> is required', indexHelp);
  const backend = values.backend ?? INDEX_DEFAULTS.backend;
  if (!knownBackends.includes(backend as BackendName)) {
    throw new UsageError(
      `unknown backend '${backend}': expected one of ${knownBackends.join(', ')}`,
      indexHelp,
    );
  }
  const embedder = values.embedder ?? INDEX_DEFAULTS.embedder;
  if (!knownEmbedders.includes(embedder as 'hash')) {
    throw new UsageError(`unknown embedder '${embedder}': expected ${knownEmbedders.join(', ')}`, indexHelp);
  }
  const analyzer = values.analyzer ?? INDEX_DEFAULTS.analyzer;
  if (!isAnalyzerName(analyzer)) {
    throw new UsageError(
      `unknown analyzer '${analyzer}': expected ${Object.keys(namedAnalyzers).join(' or ')}`,
      indexHelp,
    );
  }
  let backendOptions: BackendOptions;
  try {
    backendOptions = readBackendOptions(backend as BackendName, values['backend-option'] ?? []);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), indexHelp);
  }
  const chunkSize = readNumber(values['chunk-size'], 'chunk-size', indexHelp, { min: 1, integer: true });
  const overlap = readNumber(values.overlap, 'overlap', indexHelp, { min: 0, integer: true });
  const size = chunkSize ?? INDEX_DEFAULTS.chunkSize;
  const overlapWords = overlap ?? Math.min(INDEX_DEFAULTS.overlap, Math.floor(size / 2));
  if (overlapWords > size / 2) {
    throw new UsageError(
      `--overlap must be at most half the chunk size (${Math.floor(size / 2)}), got ${overlapWords}`,
      indexHelp,
    );
  }
  const commitInterval = readNumber(values['commit-interval'], 'commit-interval', indexHelp, { min: 0 });
  return {
    options: {
      paths: positionals,
      store: values.store,
      backend: backend as BackendName,
      backendOptions,
      analyzer,
      dimension: readNumber(values.dimension, 'dimension', indexHelp, { min: 1, max: 65_536, integer: true }),
      k1: readNumber(values.k1, 'k1', indexHelp, { min: 0 }),
      b: readNumber(values.b, 'b', indexHelp, { min: 0, max: 1 }),
      chunkSize: size,
      overlap: overlapWords,
      batchSize: readNumber(values['batch-size'], 'batch-size', indexHelp, { min: 1, integer: true }),
      commitIntervalMs: commitInterval === undefined ? undefined : commitInterval * 1000,
      overwrite: values.overwrite,
    },
    json: values.json,
  };
}
