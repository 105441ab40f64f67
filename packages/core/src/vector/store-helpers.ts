import { InvalidArgumentError } from '../errors/index.js';
import { type Chunk, normalizeChunks } from '../model/index.js';
import type { Embedder } from './embedder.js';
import type { AddOptions, VectorSearchOptions } from './vector-database.js';

/**
 * What every store does when `add` is given no embeddings: embed the chunks' texts with the
 * store's embedder, refusing (typed) a store without one or an embedder that returns the wrong
 * number of vectors. The vectors are returned unchecked: each store validates them its own way.
 */
export async function embedChunksForStore(
  embedder: Embedder | undefined,
  chunks: readonly Chunk[],
  signal: AbortSignal | undefined,
  /** Who lacks an embedder, for the error. */
  owner = 'the store has',
): Promise<unknown[]> {
  if (embedder === undefined) {
    throw new InvalidArgumentError({
      argument: 'embeddings',
      message: `no embeddings were given and ${owner} no embedder to compute them`,
    });
  }
  const vectors: unknown = await embedder.embed(
    chunks.map((chunk) => chunk.text),
    { signal },
  );
  if (!Array.isArray(vectors) || vectors.length !== chunks.length) {
    throw new InvalidArgumentError({
      argument: 'embedder',
      message: `the embedder returned ${Array.isArray(vectors) ? vectors.length : typeof vectors} vectors for ${chunks.length} texts`,
    });
  }
  return vectors;
}

/** What every store does with a text query: embed it (`embedQuery` where the embedder has one). */
export async function embedQueryForStore(
  embedder: Embedder | undefined,
  text: string,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  if (embedder === undefined) {
    throw new InvalidArgumentError({
      argument: 'query',
      value: text,
      message: 'a text query needs an embedder; give the store one, or search with a vector',
    });
  }
  if (embedder.embedQuery !== undefined) return embedder.embedQuery(text, { signal });
  const [vector] = await embedder.embed([text], { signal });
  return vector;
}

/**
 * The first step of every store's `add`: the chunks normalised and validated as a batch
 * (ChunkValidationError naming each bad one, duplicates included), and precomputed embeddings, if
 * given, checked to be one per chunk. Nothing has been written when this throws.
 */
export function prepareAddBatch(input: readonly unknown[], embeddings: AddOptions['embeddings']): Chunk[] {
  const chunks = normalizeChunks(input);
  if (embeddings !== undefined && (!Array.isArray(embeddings) || embeddings.length !== chunks.length)) {
    throw new InvalidArgumentError({
      argument: 'embeddings',
      value: embeddings,
      message: `expected one vector per chunk (${chunks.length}), got ${Array.isArray(embeddings) ? embeddings.length : typeof embeddings}`,
    });
  }
  return chunks;
}

const searchOptionKeys = new Set([
  'topK',
  'scoreThreshold',
  'filter',
  'nativeFilter',
  'strictFilters',
  'signal',
]);

export function checkVectorSearchOptions<Options extends VectorSearchOptions>(options: Options): Options {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError({
      argument: 'options',
      value: options,
      message: 'expected an object with topK',
    });
  }
  // An option the store does not know (a v1 backend's `where`, a misspelling) would be ignored:
  // refuse it, so an old call is never silently unfiltered.
  for (const key of Object.keys(options)) {
    if (!searchOptionKeys.has(key)) {
      throw new InvalidArgumentError({
        argument: key,
        value: (options as Record<string, unknown>)[key],
        message: `search takes no '${key}' option (it takes ${[...searchOptionKeys].join(', ')}); a filter goes in \`filter\` (Zerda's language) or \`nativeFilter\` (made by nativeFilter(convention, value))`,
      });
    }
  }
  const { topK, scoreThreshold } = options;
  if (typeof topK !== 'number' || !Number.isSafeInteger(topK) || topK <= 0) {
    throw new InvalidArgumentError({ argument: 'topK', value: topK, message: 'expected a positive integer' });
  }
  if (scoreThreshold !== undefined && (typeof scoreThreshold !== 'number' || Number.isNaN(scoreThreshold))) {
    throw new InvalidArgumentError({
      argument: 'scoreThreshold',
      value: scoreThreshold,
      message: 'expected a number',
    });
  }
  // Contract v1's per-backend filter options: ignoring one would search unfiltered.
  for (const option of ['where', 'docIdFilter'] as const) {
    if ((options as Record<string, unknown>)[option] !== undefined) {
      throw new InvalidArgumentError({
        argument: option,
        value: (options as Record<string, unknown>)[option],
        message:
          'stores take a filter in Zerda’s language as `filter`, or a backend’s own as `nativeFilter` (made by nativeFilter(convention, value))',
      });
    }
  }
  return options;
}
