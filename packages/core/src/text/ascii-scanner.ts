import { decodeBase64, WASM_PAGE_BYTES, type WasmMemory, webAssembly } from '../util/webassembly.js';
import { APOSTROPHE, asciiClasses, DIGIT, LETTER } from './char-class.js';
import { asciiTokensWasm } from './generated/ascii-tokens.js';
import { scanTokens, TokenSpans } from './tokenizer.js';

/**
 * Longer texts are left to `scanTokens`: the scanner's memory holds the longest text it has
 * scanned (up to 3 bytes a character) and room for a span per character, 23 bytes a character.
 */
const MAX_TEXT = 1 << 18;
/** Memory layout: the class table, the word `scan_ascii` reports where it stopped at, the text. */
const TABLE = 0;
const BAIL = 256;
/** At least 16 past the word at BAIL, so that the kernel may read the 16 bytes before the text. */
const TEXT = 512;
/** Zero bytes after the text: a non-word byte that ends its last run, and room for 16-byte loads. */
const PADDING = 32;
const SPAN_BYTES = 20;
/**
 * Texts whose UTF-8 bytes beyond one a character exceed this share of their length (Arabic,
 * Chinese) are left to `scanTokens`: the kernel would stop at nearly every token.
 */
const MOSTLY_ASCII = 1 / 8;
/** Characters looked at first to tell a text mostly outside ASCII (see `startsMostlyAscii`). */
const SAMPLE = 64;

type ScanAscii = (
  text: number,
  length: number,
  from: number,
  spans: number,
  count: number,
  table: number,
  bail: number,
) => number;

/**
 * The tokenizer's scan of ASCII text in WebAssembly SIMD (see ascii-tokens.wat): the spans of a
 * text exactly as `scanTokens` finds them, about four times faster. Indexing spent a third of its
 * time tokenizing, one character at a time in JavaScript. The text is copied into the kernel's
 * memory as UTF-8 (`TextEncoder.encodeInto`); the kernel writes the spans of the runs of ASCII
 * letters and digits it can tell are whole tokens, and hands each token it cannot (one followed
 * by a joiner and a letter or digit, as in don't, 3.5 or covid-19, or by a character outside
 * ASCII) and each character outside ASCII between tokens to `scanTokens`, one token at a time.
 */
export class AsciiTokenScanner {
  private readonly encoder = new TextEncoder();
  /** Reused by every call: its `data` is a view of the kernel's memory. */
  private readonly spans = new TokenSpans();
  private bytes = new Uint8Array(0);
  private textBytes = new Uint8Array(0);
  private words = new Int32Array(0);
  private textCapacity = 0;
  private spansAt = 0;

  private constructor(
    private readonly memory: WasmMemory,
    private readonly scanAscii: ScanAscii,
  ) {
    this.reserve(4096);
    for (let code = 0; code < 256; code++) {
      const cls = code < 128 ? asciiClasses[code]! : NOT_ASCII;
      this.bytes[TABLE + code] =
        cls === LETTER || cls === DIGIT ? 1 : cls === NOT_ASCII ? 3 : cls >= APOSTROPHE ? 2 : 0;
    }
  }

  /** The scanner, or undefined where WebAssembly SIMD is not available. */
  static create(): AsciiTokenScanner | undefined {
    if (webAssembly === undefined) return undefined;
    try {
      const bytes = decodeBase64(asciiTokensWasm);
      if (!webAssembly.validate(bytes)) return undefined;
      const memory = new webAssembly.Memory({ initial: 1 });
      const instance = new webAssembly.Instance(new webAssembly.Module(bytes), { env: { memory } });
      return new AsciiTokenScanner(memory, instance.exports.scan_ascii as ScanAscii);
    } catch {
      return undefined;
    }
  }

  /**
   * The spans of `text`, as `scanTokens` would write them into empty spans; undefined when the
   * text is longer than `MAX_TEXT` or mostly outside ASCII. The spans are reused by the next call.
   */
  scan(text: string, lucene: boolean): TokenSpans | undefined {
    const length = text.length;
    if (length > MAX_TEXT || !startsMostlyAscii(text)) return undefined;
    if (length > this.textCapacity) this.reserve(length);
    // Room for 3 bytes a character: all of the text is written.
    const { written } = this.encoder.encodeInto(text, this.textBytes);
    if (written - length > length * MOSTLY_ASCII) return undefined;
    this.bytes.fill(0, TEXT + written, TEXT + written + PADDING);
    const spans = this.spans;
    spans.count = 0;
    let position = 0;
    // Bytes beyond one a character before `position`: the kernel's positions are offsets from
    // `TEXT + extra`, which makes them the text's positions (see ascii-tokens.wat).
    let extra = 0;
    for (;;) {
      const origin = TEXT + extra;
      spans.count = this.scanAscii(origin, written - extra, position, this.spansAt, spans.count, TABLE, BAIL);
      const bail = this.words[BAIL / 4]!;
      if (bail < 0) return spans;
      position = scanTokens(text, lucene, spans, bail, true);
      extra += utf8Extra(text, bail, position);
    }
  }

  /** Makes room for a text of `length` characters and its spans, which the views then cover. */
  private reserve(length: number): void {
    let capacity = Math.max(this.textCapacity, 4096);
    while (capacity < length) capacity *= 2;
    // A token per character at most (Han ideographs), and one more slot for the last span's
    // spill (see ascii-tokens.wat): `TokenSpans.push` must never need to grow the view.
    const spanSlots = capacity + 2;
    const textBytes = capacity * 3;
    const spansAt = TEXT + textBytes + PADDING;
    const needed = spansAt + spanSlots * SPAN_BYTES;
    const pages = Math.ceil(needed / WASM_PAGE_BYTES) - this.memory.buffer.byteLength / WASM_PAGE_BYTES;
    if (pages > 0) this.memory.grow(pages);
    const buffer = this.memory.buffer;
    this.bytes = new Uint8Array(buffer);
    this.words = new Int32Array(buffer);
    this.textBytes = this.bytes.subarray(TEXT, TEXT + textBytes);
    this.spans.data = this.words.subarray(spansAt / 4, spansAt / 4 + spanSlots * 5);
    this.textCapacity = capacity;
    this.spansAt = spansAt;
  }
}

/**
 * Whether at most an eighth of the first 64 characters are outside ASCII: a text that fails is
 * left to `scanTokens` before the cost of copying it (nearly every Arabic or Chinese text); one
 * that passes and is not mostly ASCII after all is found so by its UTF-8 length.
 */
function startsMostlyAscii(text: string): boolean {
  const end = Math.min(text.length, SAMPLE);
  let outside = 0;
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) >= 0x80) outside++;
  return outside <= end * MOSTLY_ASCII;
}

/** Class of a byte outside ASCII in the kernel's table (beyond the classes of char-class.ts). */
const NOT_ASCII = 256;

/**
 * How many more bytes than characters `TextEncoder` writes for `text[from, to)`: 1 for a
 * character below U+0800 beyond ASCII, 2 for any other (a lone surrogate becomes U+FFFD), 2 for
 * a surrogate pair (4 bytes for 2 characters).
 */
function utf8Extra(text: string, from: number, to: number): number {
  let extra = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) extra += 1;
    else {
      extra += 2;
      if (code >= 0xd800 && code <= 0xdbff) {
        const low = text.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) i++;
      }
    }
  }
  return extra;
}
