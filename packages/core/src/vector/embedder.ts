/** Turns texts into vectors of a fixed dimension, in batches. */
export interface Embedder {
  readonly dimension: number;
  /** One vector per text, in order. */
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<Float32Array[]>;
  /** For models that embed queries differently from documents; `embed` is used where absent. */
  embedQuery?(text: string, options?: { signal?: AbortSignal }): Promise<Float32Array>;
}
