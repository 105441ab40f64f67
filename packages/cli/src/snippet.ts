import type { Analyzer } from '@zerda/core';

/** How matched words are marked: ANSI bold on a terminal, brackets otherwise. */
export type HighlightStyle = 'ansi' | 'brackets' | 'none';

export interface Snippet {
  /** The snippet with matches marked in the style asked for. */
  text: string;
  /** The same, unmarked. */
  plain: string;
  /** Matched words in the snippet. */
  matches: number;
}

const WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}]+)*/gu;

/**
 * A matcher for a query: a word matches when the analyser turns it into one of the query's
 * terms (so 'layers' matches a query for 'layer' when the analyser stems).
 */
export function queryMatcher(query: string, analyzer: Analyzer): (word: string) => boolean {
  const terms = new Set(analyzer.analyze(query));
  const cache = new Map<string, boolean>();
  return (word) => {
    const key = word.toLowerCase();
    let hit = cache.get(key);
    if (hit === undefined) {
      hit = terms.size > 0 && analyzer.analyze(word).some((term) => terms.has(term));
      cache.set(key, hit);
    }
    return hit;
  };
}

/**
 * The passage of `text` of at most about `width` characters with the most query words (distinct
 * words first), spaces collapsed, `…` where text was cut, matches marked.
 */
export function makeSnippet(
  text: string,
  matches: (word: string) => boolean,
  options: { width: number; style: HighlightStyle },
): Snippet {
  const width = Math.max(20, options.width);
  const words: Array<{ start: number; end: number; word: string; hit: boolean }> = [];
  for (const match of text.matchAll(WORD)) {
    words.push({
      start: match.index,
      end: match.index + match[0].length,
      word: match[0],
      hit: matches(match[0]),
    });
  }
  const hits = words.filter((word) => word.hit);

  // The window start: the matched word that begins the best run of matches fitting the width.
  let windowStart = 0;
  if (hits.length > 0) {
    let best = { distinct: -1, count: -1, index: 0 };
    for (let i = 0; i < hits.length; i++) {
      const first = hits[i] as (typeof hits)[number];
      const seen = new Set<string>();
      let count = 0;
      for (
        let j = i;
        j < hits.length && (hits[j] as (typeof hits)[number]).end - first.start <= width * 0.8;
        j++
      ) {
        seen.add((hits[j] as (typeof hits)[number]).word.toLowerCase());
        count++;
      }
      if (seen.size > best.distinct || (seen.size === best.distinct && count > best.count)) {
        best = { distinct: seen.size, count, index: i };
      }
    }
    const first = hits[best.index] as (typeof hits)[number];
    // Some words of context before the first match, from a word start.
    const lead = Math.floor(width * 0.15);
    windowStart = first.start;
    for (const word of words) {
      if (word.start >= first.start) break;
      if (first.start - word.start <= lead) {
        windowStart = word.start;
        break;
      }
    }
  }
  const rest = text.slice(windowStart).replace(/\s+/gu, ' ').trim();
  let plain = rest;
  if (plain.length > width) {
    // Cut at the last word end that fits.
    let cut = width;
    while (cut > width / 2 && /[\p{L}\p{M}\p{N}]/u.test(plain[cut] ?? '')) cut--;
    plain = plain.slice(0, cut).trimEnd();
  }
  const before = windowStart > 0 && text.slice(0, windowStart).trim() !== '';
  const after = plain.length < rest.length;

  let marked = '';
  let count = 0;
  let last = 0;
  const cache = new Map<string, boolean>();
  for (const match of plain.matchAll(WORD)) {
    const word = match[0];
    let hit = cache.get(word);
    if (hit === undefined) {
      hit = matches(word);
      cache.set(word, hit);
    }
    if (!hit) continue;
    count++;
    marked += plain.slice(last, match.index);
    marked +=
      options.style === 'ansi' ? `\x1b[1m${word}\x1b[22m` : options.style === 'brackets' ? `[${word}]` : word;
    last = match.index + word.length;
  }
  marked += plain.slice(last);
  const wrap = (body: string) => `${before ? '…' : ''}${body}${after ? '…' : ''}`;
  return { text: wrap(marked), plain: wrap(plain), matches: count };
}
