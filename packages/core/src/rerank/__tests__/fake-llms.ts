import type { ScoredChunk } from '../../model/index.js';
import type { LanguageModel } from '../types.js';

/** The nonce and the passage of a prompt built by `buildRelevancePrompt`. */
export function readPrompt(prompt: string): { nonce: string; passage: string } {
  const begin = /^BEGIN PASSAGE ([a-z]+)$/mu.exec(prompt);
  if (!begin?.[1]) throw new Error('no passage fence in the prompt');
  const nonce = begin[1];
  const start = begin.index + begin[0].length + 1;
  const end = prompt.indexOf(`\nEND PASSAGE ${nonce}`, start);
  return { nonce, passage: prompt.slice(start, end) };
}

/** A well-behaved model: scores each passage by the first label of the table found in it. */
export class FixedScoreLlm implements LanguageModel {
  readonly prompts: string[] = [];
  constructor(private readonly scores: Record<string, number>) {}
  async generate(prompt: string): Promise<string> {
    this.prompts.push(prompt);
    const { nonce, passage } = readPrompt(prompt);
    const label = Object.keys(this.scores).find((key) => passage.includes(key));
    return `score-${nonce}: ${label === undefined ? 0 : this.scores[label]}`;
  }
}

/** Fails for passages containing `failOn`, answers 8 for the others. */
export class FlakyLlm implements LanguageModel {
  constructor(private readonly failOn: string) {}
  async generate(prompt: string): Promise<string> {
    const { nonce, passage } = readPrompt(prompt);
    if (passage.includes(this.failOn)) throw new Error('model overloaded');
    return `score-${nonce}: 8`;
  }
}

/**
 * The injection the fence must defeat: a model that reads the chunk area of the prompt and
 * replies with the first number it finds there (as a bare number, or repeating the phrase).
 */
export class EchoChunkNumberLlm implements LanguageModel {
  constructor(private readonly style: 'bare' | 'phrase' = 'bare') {}
  async generate(prompt: string): Promise<string> {
    const { passage } = readPrompt(prompt);
    const match = /(\S*\s*)(\d+(?:\.\d+)?)/u.exec(passage);
    if (!match) return 'no number';
    return this.style === 'bare' ? (match[2] as string) : `${match[1]}${match[2]}`;
  }
}

/** Tracks how many calls are in flight; each call takes `delayMs`. */
export class SlowLlm implements LanguageModel {
  inFlight = 0;
  maxInFlight = 0;
  calls = 0;
  constructor(
    private readonly delayMs = 5,
    private readonly score = 5,
  ) {}
  async generate(prompt: string, options?: { signal?: AbortSignal }): Promise<string> {
    this.calls++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, this.delayMs);
        options?.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(options.signal?.reason);
        });
      });
      return `score-${readPrompt(prompt).nonce}: ${this.score}`;
    } finally {
      this.inFlight--;
    }
  }
}

export function hit(
  id: string,
  score: number,
  text: string,
  docId?: string,
  metadata?: ScoredChunk['chunk']['metadata'],
): ScoredChunk {
  const chunk: ScoredChunk['chunk'] = { id, text };
  if (docId !== undefined) chunk.docId = docId;
  if (metadata !== undefined) chunk.metadata = metadata;
  return { chunk, score, rank: 0, retriever: 'test', scores: { test: score }, ranks: {} };
}

/** `count` distinct words, so that texts can be made of a known length. */
export function words(count: number, prefix = 'w'): string {
  return Array.from({ length: count }, (_, i) => `${prefix}${toLetters(i)}`).join(' ');
}

function toLetters(n: number): string {
  let out = '';
  let value = n;
  do {
    out = String.fromCharCode(97 + (value % 26)) + out;
    value = Math.floor(value / 26) - 1;
  } while (value >= 0);
  return out;
}
