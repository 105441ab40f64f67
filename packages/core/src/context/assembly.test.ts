import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import {
  type AssemblyItem,
  assembleContext,
  countCharacters,
  estimateTokens,
  type TextCounter,
} from './assembly.js';

const countWords: TextCounter = (text) => text.match(/\S+/gu)?.length ?? 0;
const counters: Array<[string, TextCounter]> = [
  ['characters', countCharacters],
  ['estimated tokens', estimateTokens],
  ['words', countWords],
];

const word = fc.oneof(
  fc.constantFrom('alpha', 'beta', 'retrieval', 'البحث', 'الهجين', 'niño', 'x', 'supercalifragilistic'),
  fc.string({ minLength: 1, maxLength: 12 }).map((s) => s.replace(/\s/gu, '') || 'w'),
);
const text = fc
  .array(fc.tuple(word, fc.constantFrom(' ', '  ', '\n', '\t', ' \n ')), { maxLength: 80 })
  .map((parts) => parts.map(([w, space]) => w + space).join(''));
const item = fc.record({ text, source: fc.constantFrom('doc-1', 'guide.md', 'مصدر', 'a\nb') });

/** Splits a context into its blocks: marker, source, partial flag, body. */
function blocks(context: string) {
  const found: Array<{ n: number; source: string; partial: boolean; body: string }> = [];
  const pattern = /^\[(\d+)\] \(source: (.*?)(, partial)?\)\n/gmu;
  const marks = [...context.matchAll(pattern)];
  marks.forEach((mark, i) => {
    const end = i + 1 < marks.length ? (marks[i + 1]?.index as number) - 2 : context.length;
    found.push({
      n: Number(mark[1]),
      source: mark[2] as string,
      partial: mark[3] !== undefined,
      body: context.slice(mark.index + mark[0].length, end),
    });
  });
  return found;
}

describe('assembleContext', () => {
  it.each(counters)(
    'never exceeds the budget, keeps every source marker, never cuts a word (%s)',
    (_, counter) => {
      fc.assert(
        fc.property(
          fc.array(item, { maxLength: 12 }),
          fc.nat(3000),
          fc.boolean(),
          (items, budget, allowPartial) => {
            const result = assembleContext(items, { budget, counter, allowPartial, minPartialWords: 3 });
            expect(counter(result.context)).toBeLessThanOrEqual(budget);
            expect(result.size).toBe(counter(result.context));
            const parsed = blocks(result.context);
            expect(parsed.map((b) => b.n)).toEqual(result.used.map((_, i) => i + 1));
            parsed.forEach((block, i) => {
              const source = items[result.used[i] as number] as AssemblyItem;
              expect(block.source).toBe(source.source.replace(/[\r\n]+/gu, ' '));
              const original = source.text.trim();
              if (!block.partial) {
                expect(block.body).toBe(original);
              } else {
                expect(result.partial).toBe(result.used[i]);
                expect(i).toBe(parsed.length - 1);
                expect(block.body.endsWith(' …')).toBe(true);
                const kept = block.body.slice(0, -2);
                // A prefix of the chunk that ends where a word ends.
                expect(original.startsWith(kept)).toBe(true);
                expect(kept.length).toBeLessThan(original.length);
                expect(/\s/u.test(original[kept.length] as string)).toBe(true);
                expect(kept.match(/\S+/gu)?.length ?? 0).toBeGreaterThanOrEqual(3);
              }
            });
            if (!allowPartial) expect(result.partial).toBeUndefined();
            // Whole chunks first: the best chunk is used whole whenever it fits alone.
            const first = items.findIndex((it) => it.text.trim() !== '');
            if (first >= 0) {
              const alone = assembleContext([items[first] as AssemblyItem], {
                budget,
                counter,
                allowPartial: false,
              });
              if (alone.used.length === 1) expect(result.used[0]).toBe(first);
            }
          },
        ),
        { numRuns: 300 },
      );
    },
  );

  it('takes whole chunks in order, skips one that does not fit, then fills the rest with a marked partial chunk', () => {
    const items: AssemblyItem[] = [
      { text: 'short first chunk', source: 'a' },
      { text: `a long chunk ${'word '.repeat(60)}end`, source: 'b' },
      { text: 'small third', source: 'c' },
    ];
    const result = assembleContext(items, { budget: 150, minPartialWords: 5 });
    expect(result.used).toEqual([0, 2, 1]);
    expect(result.partial).toBe(1);
    expect(result.context).toMatch(
      /^\[1\] \(source: a\)\nshort first chunk\n\n\[2\] \(source: c\)\nsmall third\n\n\[3\] \(source: b, partial\)\na long chunk (word )+word …$/u,
    );
    expect(result.context.length).toBeLessThanOrEqual(150);
    const noPartial = assembleContext(items, { budget: 150, allowPartial: false });
    expect(noPartial.used).toEqual([0, 2]);
    expect(assembleContext(items, { budget: 0 }).context).toBe('');
  });

  it('works with any counter, measuring the whole context, and drops chunks if a counter changes its mind', () => {
    const items: AssemblyItem[] = [{ text: 'one two three four five six', source: 's' }];
    const byWords = assembleContext(items, { budget: 7, counter: countWords, minPartialWords: 2 });
    // The marker costs 4 words and the ellipsis 1: two words of the chunk fit.
    expect(byWords.context).toBe('[1] (source: s, partial)\none two …');
    expect(byWords.size).toBe(7);
    // An impure counter (here: one that starts over-counting) never gets an over-budget context back.
    let calls = 0;
    const drifting: TextCounter = (t) => (++calls > 1 ? 10 * t.length : t.length);
    const result = assembleContext(items, { budget: 100, counter: drifting, allowPartial: false });
    expect(result.used).toEqual([]);
    expect(result.context).toBe('');
    expect(() => assembleContext(items, { budget: -1 })).toThrow(InvalidArgumentError);
  });
});
