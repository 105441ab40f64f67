import type { LanguageModelLike } from '@langchain/core/language_models/base';
import { AbortedError, BackendError, type LanguageModel, throwIfAborted, ZerdaError } from '@zerda/core';
import { abortable } from '@zerda/core/backend';

/** Options of one generation, as Zerda's LLM reranker passes them. */
export type GenerateOptions = NonNullable<Parameters<LanguageModel['generate']>[1]>;

export interface LangChainModelOptions {
  /** Name used in errors (default: the model's `_llmType()`, else 'langchain-model'). */
  name?: string;
  /**
   * Call options for each generation, from Zerda's. LangChain has no provider-neutral way to
   * cap the answer's length per call, so `maxTokens` is dropped unless this maps it to the
   * provider's own option, for example `({ maxTokens }) => ({ max_tokens: maxTokens })` where
   * the provider's call options accept that key, or bind it on the model beforehand.
   */
  callOptions?: (options: { maxTokens?: number }) => Record<string, unknown>;
}

/** Core's `LanguageModel` (what the reranker calls) over a LangChain model, with its name. */
export interface LangChainLanguageModel extends LanguageModel {
  readonly name: string;
  /** The LangChain chat model, LLM or runnable that answers. */
  readonly model: LanguageModelLike;
}

/**
 * Any LangChain chat model or LLM (or a runnable over one, such as `model.bind(...)` or
 * `model.withConfig(...)`) as the LLM that Zerda's reranker uses. The prompt is sent as a
 * single human message (chat models) or as the text (LLMs); the answer's text is returned
 * (text parts of a multi-part message joined). The AbortSignal is passed to LangChain, and the
 * call returns at once when it fires (some models do not watch it).
 * Failures become BackendErrors (retryable unknown, so false) with the LangChain error as
 * `cause`; an abort becomes an AbortedError.
 */
export function fromLangChainModel(
  model: LanguageModelLike,
  options: LangChainModelOptions = {},
): LangChainLanguageModel {
  if (model === null || typeof model !== 'object' || typeof model.invoke !== 'function') {
    throw new TypeError('fromLangChainModel needs a LangChain chat model, LLM or runnable (with invoke)');
  }
  const typed = model as { _llmType?: () => string };
  const name =
    options.name ??
    (typeof typed._llmType === 'function' ? safeName(typed._llmType.bind(model)) : undefined) ??
    'langchain-model';
  return {
    name,
    model,
    async generate(prompt: string, generateOptions: GenerateOptions = {}): Promise<string> {
      const { maxTokens, signal } = generateOptions;
      throwIfAborted(signal);
      const extra = options.callOptions?.(maxTokens === undefined ? {} : { maxTokens }) ?? {};
      let output: unknown;
      try {
        // The signal goes to LangChain, and the wait ends when it fires even if the model ignores it.
        output = await abortable(
          Promise.resolve().then(() =>
            model.invoke(prompt, { ...extra, ...(signal === undefined ? {} : { signal }) }),
          ),
          signal,
        );
      } catch (error) {
        if (ZerdaError.isInstance(error)) throw error;
        if (signal?.aborted) throw new AbortedError({ cause: signal.reason ?? error });
        throw new BackendError({
          backend: name,
          operation: 'generate',
          message: error instanceof Error ? error.message : String(error),
          cause: error,
        });
      }
      throwIfAborted(signal);
      return textOf(output);
    },
  };
}

/** The text of a model's answer: a string, or a message whose content is text or text parts. */
export function textOf(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output !== null && typeof output === 'object' && 'content' in output) {
    const content = (output as { content: unknown }).content;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      return content
        .map((part) => {
          if (typeof part === 'string') return part;
          if (part !== null && typeof part === 'object' && (part as { type?: unknown }).type === 'text') {
            const text = (part as { text?: unknown }).text;
            return typeof text === 'string' ? text : '';
          }
          return '';
        })
        .join('');
    }
  }
  return String(output ?? '');
}

function safeName(read: () => string): string | undefined {
  try {
    const value = read();
    return typeof value === 'string' && value !== '' ? value : undefined;
  } catch {
    return undefined;
  }
}
