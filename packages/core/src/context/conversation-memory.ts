import { InvalidArgumentError } from '../errors/index.js';
import type { ConversationHistory, ConversationTurn } from '../model/index.js';
import { type Analyzer, defaultAnalyzer, normalizeArabic, tokenize } from '../text/index.js';
import { extractEntities } from './query-analysis.js';

export interface ConversationMemoryOptions {
  /** Turns kept; the oldest is dropped beyond this (default 10). */
  maxTurns?: number;
  /** Recent turns a follow-up question draws on (default 2). */
  enrichFromTurns?: number;
  /** Words added to a follow-up question at most (default 6). */
  maxEnrichmentTerms?: number;
  /** A question with at most this many keywords and no entity counts as a follow-up (default 2). */
  shortQueryKeywords?: number;
  /** Turns older than this no longer make a question a follow-up (default: no limit). */
  maxAgeMs?: number;
  /** Analyses words for comparison with the question (default: the shared `defaultAnalyzer`). */
  analyzer?: Analyzer;
  /** Clock, for tests (default `Date.now`). */
  now?: () => number;
}

/** Why a question was or was not taken as a follow-up, and what was added to it. */
export interface Enrichment {
  /** The question as it should be searched. */
  query: string;
  followUp: boolean;
  /** What made it a follow-up: 'opener', 'pronoun', 'short'; empty when it is not one. */
  reasons: string[];
  /** The words added, in order. */
  addedTerms: string[];
}

const B = String.raw`(?<![\p{L}\p{N}_])`;
const E = String.raw`(?![\p{L}\p{N}_])`;
const OPENERS = new RegExp(
  `^[\\s¿¡"'“«(]*(?:and|also|but|so|then|what about|how about|what else|and what|tell me more|more about|same for|what if|y|también|pero|entonces|qué tal|y qué|y si|y cómo|más sobre|cuéntame más|${[
    'وماذا',
    'ماذا عن',
    'وما',
    'وكيف',
    'وهل',
    'ومتى',
    'واين',
    'ولماذا',
    'وكم',
    'ومن',
    'ايضا',
    'كذلك',
    'اذن',
    'المزيد',
  ]
    .map((p) => normalizeArabic(p))
    .join('|')})${E}`,
  'iu',
);
const PRONOUNS = new RegExp(
  `${B}(?:it|its|itself|they|them|their|theirs|this|that|these|those|he|him|his|she|her|there|eso|esto|ello|él|ella|ellos|ellas|este|esta|estos|estas|ese|esa|esos|esas|su|sus|${[
    'هو',
    'هي',
    'هم',
    'هما',
    'هذا',
    'هذه',
    'ذلك',
    'تلك',
    'هؤلاء',
    'عنه',
    'عنها',
    'عنهم',
    'فيه',
    'فيها',
    'منه',
    'منها',
    'له',
    'لها',
    'به',
    'بها',
    'عليه',
    'عليها',
  ]
    .map((p) => normalizeArabic(p))
    .join('|')})${E}`,
  'iu',
);

/**
 * A bounded conversation history (question and answer per turn) that enriches follow-up
 * questions from recent turns. Answers are recorded explicitly with `recordAnswer`, so a
 * follow-up such as "and how fast is it?" is searched with the words of the answer it follows.
 */
export class ConversationMemory {
  readonly maxTurns: number;
  readonly #turns: ConversationTurn[] = [];
  readonly #analyzer: Analyzer;
  readonly #now: () => number;
  readonly #enrichFromTurns: number;
  readonly #maxTerms: number;
  readonly #shortQueryKeywords: number;
  readonly #maxAgeMs: number | undefined;

  constructor(options: ConversationMemoryOptions = {}) {
    this.maxTurns = integerAtLeast(options.maxTurns ?? 10, 1, 'maxTurns');
    this.#enrichFromTurns = integerAtLeast(options.enrichFromTurns ?? 2, 1, 'enrichFromTurns');
    this.#maxTerms = integerAtLeast(options.maxEnrichmentTerms ?? 6, 0, 'maxEnrichmentTerms');
    this.#shortQueryKeywords = integerAtLeast(options.shortQueryKeywords ?? 2, 0, 'shortQueryKeywords');
    if (options.maxAgeMs !== undefined && !(options.maxAgeMs > 0)) {
      throw new InvalidArgumentError({
        argument: 'maxAgeMs',
        value: options.maxAgeMs,
        message: 'must be positive',
      });
    }
    this.#maxAgeMs = options.maxAgeMs;
    this.#analyzer = options.analyzer ?? defaultAnalyzer;
    this.#now = options.now ?? Date.now;
  }

  /** The turns, oldest first (copies). */
  get turns(): ConversationTurn[] {
    return this.#turns.map((turn) => ({ ...turn }));
  }

  get size(): number {
    return this.#turns.length;
  }

  /** A snapshot in the model's shape. */
  history(): ConversationHistory {
    return { turns: this.turns, maxTurns: this.maxTurns };
  }

  /** Adds a turn (dropping the oldest beyond `maxTurns`) and returns a copy of it. */
  addTurn(query: string, answer?: string): ConversationTurn {
    if (typeof query !== 'string') {
      throw new InvalidArgumentError({ argument: 'query', value: query, message: 'must be a string' });
    }
    const turn: ConversationTurn = { query, timestamp: this.#now() };
    if (answer !== undefined) turn.answer = answer;
    this.#turns.push(turn);
    if (this.#turns.length > this.maxTurns) this.#turns.splice(0, this.#turns.length - this.maxTurns);
    return { ...turn };
  }

  /**
   * Records the answer to the latest turn (or, with `turnsAgo`, an earlier one: 0 is the latest).
   * Throws when there is no such turn.
   */
  recordAnswer(answer: string, turnsAgo = 0): void {
    if (typeof answer !== 'string') {
      throw new InvalidArgumentError({ argument: 'answer', value: answer, message: 'must be a string' });
    }
    const turn = this.#turns[this.#turns.length - 1 - turnsAgo];
    if (turn === undefined) {
      throw new InvalidArgumentError({
        argument: 'turnsAgo',
        value: turnsAgo,
        message: `there is no such turn (the history has ${this.#turns.length})`,
      });
    }
    turn.answer = answer;
  }

  clear(): void {
    this.#turns.length = 0;
  }

  /** Recent turns that may inform a follow-up, most recent first. */
  private recentTurns(): ConversationTurn[] {
    const now = this.#now();
    const maxAge = this.#maxAgeMs;
    return this.#turns
      .slice(-this.#enrichFromTurns)
      .reverse()
      .filter((turn) => maxAge === undefined || now - turn.timestamp <= maxAge);
  }

  /** Why `query` reads as a follow-up of the recent turns (empty when it does not, or there are none). */
  followUpReasons(query: string): string[] {
    if (this.recentTurns().length === 0) return [];
    const text = normalizeArabic(query);
    const reasons: string[] = [];
    if (OPENERS.test(text)) reasons.push('opener');
    if (PRONOUNS.test(text)) reasons.push('pronoun');
    const keywords = new Set(this.#analyzer.analyze(query));
    if (keywords.size <= this.#shortQueryKeywords && extractEntities(query).length === 0)
      reasons.push('short');
    return reasons;
  }

  /**
   * The question to search: a follow-up gets the salient words of the recent turns that it does
   * not already contain (entities first, then the earlier questions' words, then the answers'
   * words by frequency; the latest turn weighs most). Anything else is returned unchanged.
   */
  enrich(query: string): Enrichment {
    const reasons = this.followUpReasons(query);
    if (reasons.length === 0 || this.#maxTerms === 0) {
      return { query, followUp: reasons.length > 0, reasons, addedTerms: [] };
    }
    const present = new Set(this.#analyzer.analyze(query));
    const candidates = new Map<string, { word: string; weight: number; order: number }>();
    let order = 0;
    const consider = (word: string, weight: number) => {
      const terms = this.#analyzer.analyze(word);
      if (terms.length === 0) return;
      const key = terms.join(' ');
      if (terms.every((term) => present.has(term))) return;
      const entry = candidates.get(key);
      if (entry) entry.weight += weight;
      else candidates.set(key, { word, weight, order: order++ });
    };
    this.recentTurns().forEach((turn, age) => {
      const recency = 1 / (age + 1);
      for (const text of [turn.query, turn.answer ?? '']) {
        for (const entity of extractEntities(text)) consider(entity, 3 * recency);
      }
      for (const word of tokenize(turn.query)) consider(word, 2 * recency);
      for (const word of tokenize(turn.answer ?? '')) consider(word, recency);
    });
    const added: string[] = [];
    const addedTerms = new Set<string>();
    for (const { word } of [...candidates.values()].sort(
      (a, b) => b.weight - a.weight || a.order - b.order,
    )) {
      if (added.length >= this.#maxTerms) break;
      // An entity and its own words are one idea: skip words already covered by what was added.
      const terms = this.#analyzer.analyze(word);
      if (terms.every((term) => addedTerms.has(term))) continue;
      added.push(word);
      for (const term of terms) addedTerms.add(term);
    }
    return {
      query: added.length > 0 ? `${query} ${added.join(' ')}` : query,
      followUp: true,
      reasons,
      addedTerms: added,
    };
  }
}

function integerAtLeast(value: number, minimum: number, argument: string): number {
  if (!Number.isInteger(value) || value < minimum) {
    throw new InvalidArgumentError({ argument, value, message: `must be an integer >= ${minimum}` });
  }
  return value;
}
