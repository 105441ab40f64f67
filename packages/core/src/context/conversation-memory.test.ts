import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { ConversationMemory } from './conversation-memory.js';

describe('ConversationMemory', () => {
  it('keeps a bounded number of turns and records answers explicitly', () => {
    let now = 1000;
    const memory = new ConversationMemory({ maxTurns: 2, now: () => now });
    memory.addTurn('first');
    now = 2000;
    memory.addTurn('second');
    memory.recordAnswer('answer two');
    memory.recordAnswer('answer one?', 1);
    memory.addTurn('third', 'answer three');
    expect(memory.history()).toEqual({
      maxTurns: 2,
      turns: [
        { query: 'second', answer: 'answer two', timestamp: 2000 },
        { query: 'third', answer: 'answer three', timestamp: 2000 },
      ],
    });
    // Copies: changing them does not change the memory.
    const turns = memory.turns;
    (turns[0] as { query: string }).query = 'changed';
    expect(memory.turns[0]?.query).toBe('second');
    expect(() => memory.recordAnswer('x', 5)).toThrow(InvalidArgumentError);
    memory.clear();
    expect(memory.size).toBe(0);
    expect(() => memory.recordAnswer('x')).toThrow(InvalidArgumentError);
  });

  it('enriches a follow-up question from the recorded answer', () => {
    const memory = new ConversationMemory();
    memory.addTurn('What does the Zerda reranker do?');
    const before = memory.enrich('How fast is it?');
    expect(before.followUp).toBe(true);
    expect(before.addedTerms).not.toContain('MinHash');
    memory.recordAnswer('It removes near-duplicates with MinHash, then scores the passages.');
    const after = memory.enrich('How fast is it?');
    expect(after.followUp).toBe(true);
    expect(after.reasons).toContain('pronoun');
    expect(after.addedTerms).toContain('MinHash');
    expect(after.addedTerms).toContain('Zerda');
    expect(after.query).toMatch(/^How fast is it\? /);
    expect(after.query).toContain('MinHash');
  });

  it('detects follow-ups in English, Spanish and Arabic, and leaves other questions alone', () => {
    const memory = new ConversationMemory();
    expect(memory.enrich('And the price?').followUp).toBe(false); // no history yet
    memory.addTurn('What is the XJ-900 router?', 'The XJ-900 is a dual-band router by Acme.');
    expect(memory.followUpReasons('What about its price?')).toEqual(
      expect.arrayContaining(['opener', 'pronoun']),
    );
    expect(memory.followUpReasons('¿Y cuánto cuesta?')).toContain('opener');
    expect(memory.followUpReasons('¿Cuánto cuesta eso?')).toContain('pronoun');
    expect(memory.followUpReasons('وماذا عن السعر؟')).toContain('opener');
    expect(memory.followUpReasons('كم سعره؟')).toContain('short');
    expect(memory.followUpReasons('ما هي مواصفات ذلك الجهاز؟')).toContain('pronoun');
    const independent = memory.enrich('Which Porter stemmer steps handle plural nouns in English text?');
    expect(independent).toEqual({
      query: 'Which Porter stemmer steps handle plural nouns in English text?',
      followUp: false,
      reasons: [],
      addedTerms: [],
    });
    // Words already in the question are not added again; entities come first.
    const enriched = memory.enrich('What about the router price?');
    expect(enriched.addedTerms[0]).toBe('XJ-900');
    expect(enriched.addedTerms).not.toContain('router');
  });

  it('enriches an Arabic follow-up from an Arabic answer', () => {
    const memory = new ConversationMemory();
    memory.addTurn('ما هي مكتبة زردا؟');
    memory.recordAnswer('زردا مكتبة للبحث الهجين تجمع الكلمات المفتاحية والمتجهات');
    const enriched = memory.enrich('وكيف تعمل؟');
    expect(enriched.followUp).toBe(true);
    expect(enriched.addedTerms).toEqual(expect.arrayContaining(['زردا', 'الهجين']));
  });

  it('ignores turns older than maxAgeMs', () => {
    let now = 0;
    const memory = new ConversationMemory({ maxAgeMs: 60_000, now: () => now });
    memory.addTurn('What is Zerda?', 'A hybrid retrieval library.');
    now = 30_000;
    expect(memory.enrich('And its licence?').followUp).toBe(true);
    now = 120_000;
    expect(memory.enrich('And its licence?').followUp).toBe(false);
  });
});
