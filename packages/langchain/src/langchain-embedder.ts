import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import { BackendError, type Embedder, InvalidArgumentError, throwIfAborted } from '@zerda/core';
import { abortable, wrapBackendError } from '@zerda/core/backend';

export interface LangChainEmbedderOptions {
  /**
   * The vector dimension. Default: the embeddings' own `dimensions` or `vectorSize` field where
   * it has one, else learnt from the first vectors it returns (`LangChainEmbedder.create` embeds
   * one probe text to learn it up front).
   */
  dimension?: number;
  /** Name used in errors (default 'langchain-embeddings'). */
  name?: string;
}

/**
 * Any LangChain `Embeddings` as a Zerda `Embedder`: `embed` calls `embedDocuments`, `embedQuery`
 * calls `embedQuery`, and the vectors come back as Float32Array. Every vector is checked against
 * the dimension; failures become BackendErrors with the LangChain error as `cause`. LangChain
 * embeddings take no AbortSignal: an aborted call rejects at once and its result is ignored.
 */
export class LangChainEmbedder implements Embedder {
  readonly embeddings: EmbeddingsInterface;
  readonly name: string;
  private knownDimension: number | undefined;

  constructor(embeddings: EmbeddingsInterface, options: LangChainEmbedderOptions = {}) {
    if (
      embeddings === null ||
      typeof embeddings !== 'object' ||
      typeof embeddings.embedDocuments !== 'function' ||
      typeof embeddings.embedQuery !== 'function'
    ) {
      throw new InvalidArgumentError({
        argument: 'embeddings',
        message: 'expected a LangChain Embeddings (with embedDocuments and embedQuery)',
      });
    }
    this.embeddings = embeddings;
    this.name = options.name ?? 'langchain-embeddings';
    const declared = options.dimension ?? ownDimension(embeddings);
    if (declared !== undefined && !(Number.isInteger(declared) && declared > 0)) {
      throw new InvalidArgumentError({
        argument: 'dimension',
        value: declared,
        message: 'must be a positive integer',
      });
    }
    this.knownDimension = declared;
  }

  /** An embedder whose dimension is known up front (one probe text is embedded when it is not). */
  static async create(
    embeddings: EmbeddingsInterface,
    options: LangChainEmbedderOptions & { signal?: AbortSignal } = {},
  ): Promise<LangChainEmbedder> {
    const embedder = new LangChainEmbedder(embeddings, options);
    if (embedder.knownDimension === undefined) await embedder.embed(['dimension probe'], options);
    return embedder;
  }

  /**
   * The vector dimension. Throws InvalidArgumentError while it is not known yet (no `dimension`
   * given and nothing embedded); use `LangChainEmbedder.create` to learn it first.
   */
  get dimension(): number {
    if (this.knownDimension === undefined) {
      throw new InvalidArgumentError({
        argument: 'dimension',
        message:
          'the dimension of these LangChain embeddings is not known yet: pass { dimension }, or create the embedder with `await LangChainEmbedder.create(embeddings)`',
      });
    }
    return this.knownDimension;
  }

  /** The dimension if known, without throwing. */
  get dimensionIfKnown(): number | undefined {
    return this.knownDimension;
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const { signal } = options;
    throwIfAborted(signal);
    if (texts.length === 0) return [];
    let vectors: unknown;
    try {
      vectors = await abortable(
        Promise.resolve().then(() => this.embeddings.embedDocuments([...texts])),
        signal,
      );
    } catch (error) {
      throw wrapBackendError(this.name, 'embed', error);
    }
    if (!Array.isArray(vectors) || vectors.length !== texts.length) {
      throw new BackendError({
        backend: this.name,
        operation: 'embed',
        message: `embedDocuments returned ${Array.isArray(vectors) ? vectors.length : typeof vectors} vectors for ${texts.length} texts`,
      });
    }
    return vectors.map((vector, index) => this.check(vector, `text #${index}`));
  }

  async embedQuery(text: string, options: { signal?: AbortSignal } = {}): Promise<Float32Array> {
    const { signal } = options;
    throwIfAborted(signal);
    let vector: unknown;
    try {
      vector = await abortable(
        Promise.resolve().then(() => this.embeddings.embedQuery(text)),
        signal,
      );
    } catch (error) {
      throw wrapBackendError(this.name, 'embedQuery', error);
    }
    return this.check(vector, 'the query');
  }

  private check(vector: unknown, what: string): Float32Array {
    const problem = vectorProblem(vector, this.knownDimension);
    if (problem !== undefined) {
      throw new BackendError({
        backend: this.name,
        operation: 'embed',
        message: `the vector of ${what} ${problem}`,
      });
    }
    const values = vector as ArrayLike<number>;
    this.knownDimension ??= values.length;
    return Float32Array.from(values);
  }
}

/** Any LangChain `Embeddings` as a Zerda `Embedder` (see `LangChainEmbedder`). */
export function fromLangChainEmbeddings(
  embeddings: EmbeddingsInterface,
  options: LangChainEmbedderOptions = {},
): LangChainEmbedder {
  return new LangChainEmbedder(embeddings, options);
}

/** What is wrong with a vector, or undefined when it is usable. */
function vectorProblem(vector: unknown, dimension: number | undefined): string | undefined {
  if (!Array.isArray(vector) && !(vector instanceof Float32Array) && !(vector instanceof Float64Array)) {
    return 'is not an array of numbers';
  }
  if (vector.length === 0) return 'is empty';
  if (dimension !== undefined && vector.length !== dimension) {
    return `has ${vector.length} dimensions, expected ${dimension}`;
  }
  for (let index = 0; index < vector.length; index++) {
    const value = vector[index];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return `holds ${String(value)} at position ${index}; every value must be a finite number`;
    }
  }
  return undefined;
}

/** The dimension an embeddings object states about itself, where it does. */
function ownDimension(embeddings: EmbeddingsInterface): number | undefined {
  const fields = embeddings as unknown as { dimensions?: unknown; vectorSize?: unknown };
  for (const value of [fields.dimensions, fields.vectorSize]) {
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return undefined;
}
