import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { RunnableLambda } from '@langchain/core/runnables';
import { FakeListChatModel, FakeLLM } from '@langchain/core/utils/testing';
import { AbortedError, BackendError, KeywordRetriever, type LanguageModel, Reranker } from '@zerda/core';
import { describe, expect, it } from 'vitest';
import { fromLangChainModel, textOf } from './langchain-model.js';
import { corpus } from './test-utils/corpus.js';

describe('fromLangChainModel', () => {
  it("answers with a chat model's text", async () => {
    const llm: LanguageModel = fromLangChainModel(new FakeListChatModel({ responses: ['7', '2'] }));
    expect(await llm.generate('Rate the passage from 0 to 10.')).toBe('7');
    expect(await llm.generate('Rate the passage from 0 to 10.', { maxTokens: 4 })).toBe('2');
    expect(fromLangChainModel(new FakeListChatModel({ responses: ['x'] })).name).toBe('fake-list');
  });

  it("answers with an LLM's text (FakeLLM echoes the prompt)", async () => {
    const llm = fromLangChainModel(new FakeLLM({}));
    expect(await llm.generate('the prompt itself')).toBe('the prompt itself');
  });

  it('joins the text parts of a multi-part answer, from any runnable', async () => {
    const runnable = RunnableLambda.from(
      async () =>
        new AIMessage({
          content: [
            { type: 'text', text: 'relevance: ' },
            { type: 'image_url', image_url: 'data:...' },
            { type: 'text', text: '9' },
          ],
        }),
    );
    expect(await fromLangChainModel(runnable).generate('x')).toBe('relevance: 9');
    expect(textOf('plain')).toBe('plain');
  });

  it('maps maxTokens to call options only when told how', async () => {
    // FakeListChatModel answers with the first stop word when given one: proof the option arrived.
    const model = new FakeListChatModel({ responses: ['the full answer'] });
    const mapped = fromLangChainModel(model, {
      callOptions: ({ maxTokens }) => ({ stop: [`<max ${maxTokens}>`] }),
    });
    expect(await mapped.generate('x', { maxTokens: 3 })).toBe('<max 3>');
    expect(await fromLangChainModel(model).generate('x', { maxTokens: 3 })).toBe('the full answer');
  });

  it('turns a failure into a BackendError with the cause kept', async () => {
    const llm = fromLangChainModel(new FakeLLM({ thrownErrorString: 'model overloaded' }));
    const error = await llm.generate('x').catch((caught: unknown) => caught);
    expect(BackendError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ backend: 'fake', operation: 'generate' });
    expect((error as BackendError).cause).toBeInstanceOf(Error);
    expect(((error as BackendError).cause as Error).message).toBe('model overloaded');
  });

  it('passes the AbortSignal to LangChain and reports an abort as an AbortedError', async () => {
    const slow = new FakeListChatModel({ responses: ['late'], sleep: 5_000 });
    const llm = fromLangChainModel(slow);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 20);
    const started = Date.now();
    await expect(llm.generate('x', { signal: controller.signal })).rejects.toSatisfy((error: unknown) =>
      AbortedError.isInstance(error),
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(llm.generate('x', { signal: AbortSignal.abort() })).rejects.toThrow(AbortedError);
    expect(() => fromLangChainModel({} as never)).toThrow(TypeError);
  });
});

/**
 * A chat model on LangChain's real BaseChatModel that grades a passage by whether it mentions
 * `keyword`, answering in the tagged form Zerda's relevance prompt asks for.
 */
class GradingChatModel extends BaseChatModel {
  prompts: string[] = [];
  constructor(private readonly keyword: string) {
    super({});
  }
  _llmType(): string {
    return 'grading';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const prompt = messages.map((message) => String(message.content)).join('\n');
    this.prompts.push(prompt);
    const tag = /score-[A-Za-z0-9]+:/u.exec(prompt.split('\n').at(-1) ?? '')?.[0] ?? 'score:';
    const passage = prompt.slice(prompt.indexOf('BEGIN PASSAGE'), prompt.lastIndexOf('END PASSAGE'));
    const text = `${tag} ${passage.toLowerCase().includes(this.keyword) ? 10 : 0}`;
    return { generations: [{ text, message: new AIMessage(text) }] };
  }
}

describe('fromLangChainModel with Zerda’s reranker', () => {
  it('lets a LangChain chat model re-score candidates in LLM mode', async () => {
    const keyword = new KeywordRetriever();
    keyword.add(corpus);
    const query = 'ranking of documents';
    const before = await keyword.retrieve(query, { k: 3 });
    const model = new GradingChatModel('fusion');
    const reranked = new KeywordRetriever({
      reranker: new Reranker({ mode: 'llm', llm: fromLangChainModel(model), deduplicate: false }),
    });
    reranked.add(corpus);
    const after = await reranked.retrieve(query, { k: 3 });
    expect(model.prompts.length).toBeGreaterThan(0);
    expect(model.prompts[0]).toContain('ranking of documents');
    // The passages about fusion now come first, whatever BM25 thought.
    expect(before.hits[0]!.chunk.id).not.toBe('rrf');
    expect(after.hits[0]!.chunk.text.toLowerCase()).toContain('fusion');
    expect(after.warnings.filter((warning) => warning.type === 'partial-failure')).toEqual([]);
  });
});
