import { InvalidArgumentError } from '../errors/index.js';

/** Measures text in the budget's unit (characters, tokens of some tokenizer, ...). Must be pure. */
export type TextCounter = (text: string) => number;

/** Counts UTF-16 code units, as `string.length` does. */
export const countCharacters: TextCounter = (text) => text.length;

/** A rough token estimate (about four characters per token in English): ceil(length / 4). */
export const estimateTokens: TextCounter = (text) => Math.ceil(text.length / 4);

export interface AssemblyItem {
  text: string;
  /** Shown in the source marker: `[n] (source: <source>)`. */
  source: string;
}

export interface AssemblyOptions {
  budget: number;
  counter?: TextCounter;
  /**
   * When whole chunks no longer fit, fill what is left with the beginning of the best chunk that
   * did not fit, cut after a whole word and marked partial (default true).
   */
  allowPartial?: boolean;
  /** A partial chunk must keep at least this many words (default 20). */
  minPartialWords?: number;
  /** Between chunks (default a blank line). */
  separator?: string;
}

export interface AssembledContext {
  context: string;
  /** Indexes into the items, in the order they appear in the context. */
  used: number[];
  /** The index of the item that was cut, if any (it is the last one used). */
  partial: number | undefined;
  /** The context's size by the counter. */
  size: number;
}

/** `[n] (source: x)` then the text; a partial chunk says so and ends with an ellipsis. */
export function formatBlock(position: number, item: AssemblyItem, partial = false): string {
  const source = item.source.replace(/[\r\n]+/gu, ' ');
  return `[${position}] (source: ${source}${partial ? ', partial' : ''})\n${item.text}${partial ? ' …' : ''}`;
}

/**
 * Assembles items, best first, into a context that never exceeds the budget as measured by the
 * counter (markers and separators included): every item that fits whole is taken in order
 * (one that does not fit is skipped, and smaller later ones may still fit), then the remaining
 * space may take the beginning of the best skipped item, cut after a whole word. Sizes are
 * always measured on the whole context, so a counter need not be additive.
 */
export function assembleContext(items: readonly AssemblyItem[], options: AssemblyOptions): AssembledContext {
  const { budget } = options;
  if (typeof budget !== 'number' || !(budget >= 0)) {
    throw new InvalidArgumentError({ argument: 'budget', value: budget, message: 'must be a number >= 0' });
  }
  const counter = options.counter ?? countCharacters;
  const separator = options.separator ?? '\n\n';
  const minPartialWords = options.minPartialWords ?? 20;
  const blocks: string[] = [];
  const used: number[] = [];
  const join = (extra?: string) => (extra === undefined ? blocks : [...blocks, extra]).join(separator);
  let firstSkipped: number | undefined;

  items.forEach((item, index) => {
    const text = item.text.trim();
    if (text.length === 0) return;
    const block = formatBlock(blocks.length + 1, { ...item, text });
    if (counter(join(block)) <= budget) {
      blocks.push(block);
      used.push(index);
    } else if (firstSkipped === undefined) firstSkipped = index;
  });

  let partial: number | undefined;
  if ((options.allowPartial ?? true) && firstSkipped !== undefined) {
    const item = items[firstSkipped] as AssemblyItem;
    const ends = wordEnds(item.text.trim());
    const blockOf = (words: number) =>
      formatBlock(blocks.length + 1, { ...item, text: item.text.trim().slice(0, ends[words - 1]) }, true);
    // The largest number of whole words that fits (binary search; sizes grow with the words).
    let low = Math.min(minPartialWords, ends.length);
    let high = ends.length - 1;
    let best = 0;
    if (low >= 1 && low <= high && counter(join(blockOf(low))) <= budget) {
      best = low;
      low += 1;
      while (low <= high) {
        const middle = (low + high) >>> 1;
        if (counter(join(blockOf(middle))) <= budget) {
          best = middle;
          low = middle + 1;
        } else high = middle - 1;
      }
    }
    if (best > 0) {
      blocks.push(blockOf(best));
      used.push(firstSkipped);
      partial = firstSkipped;
    }
  }

  let context = join();
  let size = counter(context);
  // Only a counter that shrinks as text grows could get here; never return more than the budget.
  while (size > budget && blocks.length > 0) {
    blocks.pop();
    const dropped = used.pop();
    if (dropped === partial) partial = undefined;
    context = join();
    size = counter(context);
  }
  return { context, used, partial, size };
}

/** The end offset of each white-space separated word. */
function wordEnds(text: string): number[] {
  const ends: number[] = [];
  for (const match of text.matchAll(/\S+/gu)) ends.push(match.index + match[0].length);
  return ends;
}
