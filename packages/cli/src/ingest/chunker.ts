/**
 * Splits a document into chunks of at most `size` words on paragraph and sentence boundaries.
 *
 * A word is a run of non-space characters. Between two words there is a boundary of some
 * strength: a paragraph break (a blank line, or a line that starts a Markdown heading) is the
 * strongest, then the end of a sentence (`.`, `!`, `?`, `؟`, `…`, `。`, not after a common
 * abbreviation or an initial), then a line break, then a plain space. A chunk ends at the
 * strongest boundary found among its last half (between `size / 2` and `size` words), the latest
 * one when several are equally strong, so a chunk is never shorter than half the size unless
 * the document is. The next chunk starts `overlap` words earlier, moved forward to the first
 * sentence start inside the overlap when there is one, so that it opens on a whole sentence.
 * Chunk text is the document's own text from the first word to the last, spacing kept.
 */

export interface ChunkingOptions {
  /** Most words in a chunk (a positive integer). */
  size: number;
  /** Words repeated from the end of one chunk at the start of the next (at most half the size). */
  overlap: number;
}

export interface TextChunk {
  text: string;
  /** Offsets of the chunk in the document: `document.slice(start, end) === text`. */
  start: number;
  end: number;
  /** Number of words. */
  words: number;
}

const PARAGRAPH = 3;
const SENTENCE = 2;
const LINE = 1;

/** Words that end in a full stop without ending a sentence (lower case, without the stop). */
const ABBREVIATIONS = new Set([
  'al',
  'approx',
  'cf',
  'dr',
  'e.g',
  'eq',
  'eqs',
  'etc',
  'fig',
  'figs',
  'i.e',
  'jr',
  'mr',
  'mrs',
  'ms',
  'no',
  'nos',
  'p',
  'pp',
  'prof',
  'ref',
  'refs',
  'sec',
  'sr',
  'st',
  'vol',
  'vs',
]);

const SENTENCE_END = /[.!?؟…。！？]["'”’)\]»]*$/u;

function endsSentence(word: string): boolean {
  if (!SENTENCE_END.test(word)) return false;
  const core = word.replace(/["'”’)\]»]+$/u, '');
  if (!core.endsWith('.')) return true;
  const stem = core.slice(0, -1).replace(/^["'“‘([«]+/u, '');
  if (stem.length === 0) return true; // a lone '.', as in tokenised text
  if (/^\p{Lu}$/u.test(stem)) return false; // an initial: 'J.'
  return !ABBREVIATIONS.has(stem.toLowerCase());
}

/** The chunks of `text`; an empty array when it holds no word. */
export function splitIntoChunks(text: string, options: ChunkingOptions): TextChunk[] {
  const { size, overlap } = checkChunking(options);
  const starts: number[] = [];
  const ends: number[] = [];
  for (const match of text.matchAll(/\S+/gu)) {
    starts.push(match.index);
    ends.push(match.index + match[0].length);
  }
  const count = starts.length;
  if (count === 0) return [];
  const chunk = (from: number, to: number): TextChunk => {
    const start = starts[from] as number;
    const end = ends[to - 1] as number;
    return { text: text.slice(start, end), start, end, words: to - from };
  };
  if (count <= size) return [chunk(0, count)];

  // strength[i]: the boundary between word i - 1 and word i (i from 1 to count - 1).
  const strength = new Uint8Array(count);
  for (let i = 1; i < count; i++) {
    const gap = text.slice(ends[i - 1], starts[i]);
    if (/\n[^\S\n]*\n/u.test(gap) || (gap.includes('\n') && text[starts[i] as number] === '#')) {
      strength[i] = PARAGRAPH;
    } else if (endsSentence(text.slice(starts[i - 1], ends[i - 1]))) strength[i] = SENTENCE;
    else if (gap.includes('\n')) strength[i] = LINE;
  }

  const chunks: TextChunk[] = [];
  let from = 0;
  while (true) {
    if (count - from <= size) {
      chunks.push(chunk(from, count));
      return chunks;
    }
    // Cut before word `to`: the strongest boundary in the chunk's last half, the latest on ties.
    let to = from + size;
    let best = strength[to] as number;
    for (let i = from + size - 1; i >= from + Math.ceil(size / 2) && best < PARAGRAPH; i--) {
      if ((strength[i] as number) > best) {
        best = strength[i] as number;
        to = i;
      }
    }
    chunks.push(chunk(from, to));
    let next = Math.max(from + 1, to - overlap);
    for (let i = next; i < to; i++) {
      if ((strength[i] as number) >= SENTENCE) {
        next = i;
        break;
      }
    }
    from = overlap === 0 ? to : next;
  }
}

/** Checks chunking options: size a positive integer, overlap an integer from 0 to size / 2. */
export function checkChunking(options: ChunkingOptions): ChunkingOptions {
  const { size, overlap } = options;
  if (!Number.isSafeInteger(size) || size < 1) {
    throw new RangeError(`the chunk size must be a positive integer, got ${size}`);
  }
  if (!Number.isSafeInteger(overlap) || overlap < 0 || overlap > size / 2) {
    throw new RangeError(
      `the overlap must be an integer from 0 to half the chunk size (${Math.floor(size / 2)}), got ${overlap}`,
    );
  }
  return options;
}
