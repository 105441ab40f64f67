import { decodeBase64, WASM_PAGE_BYTES, type WasmMemory, webAssembly } from '../util/webassembly.js';
import { APOSTROPHE, asciiClasses, DIGIT, LETTER } from './char-class.js';
import { asciiTokensWasm } from './generated/ascii-tokens.js';
import { scanTokens, TokenSpans } from './tokenizer.js';

/**
 * Longer texts are left to `scanTokens`: the scanner's memory holds the longest text it has
 * scanned and its spans, about 11 bytes a character.
 */
const MAX_TEXT = 1 << 20;
/** Memory layout: the class table, the word `scan_ascii` reports where it stopped at, the text. */
const TABLE = 0;
const BAIL = 128;
/** At least 16, so that the kernel may read the 16 bytes before the text. */
const TEXT = 256;
/** Zero bytes after the text: a non-word byte that ends its last run, and room for 16-byte loads. */
const PADDING = 32;
const SPAN_BYTES = 20;

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
 * text exactly as `scanTokens` finds them, about four times faster. The text is copied into the
 * kernel's memory as bytes (`TextEncoder.encodeInto`, which also tells whether it is all ASCII);
 * the kernel writes the spans of the runs of letters and digits it can tell are whole tokens, and
 * hands each run followed by a joiner and a letter or digit (don't, 3.5, covid-19) to
 * `scanTokens`, whose rules then decide that token. Indexing spends a third of its time
 * tokenizing, one character at a time in JavaScript.
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
    for (let code = 0; code < 128; code++) {
      const cls = asciiClasses[code]!;
      this.bytes[TABLE + code] = cls === LETTER || cls === DIGIT ? 1 : cls >= APOSTROPHE ? 2 : 0;
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
   * text is not all ASCII or is longer than `MAX_TEXT`. The spans are reused by the next call.
   */
  scan(text: string, lucene: boolean): TokenSpans | undefined {
    const length = text.length;
    if (length > MAX_TEXT) return undefined;
    if (length > this.textCapacity) this.reserve(length);
    // A character outside ASCII takes more than one byte, or does not fit.
    const { read, written } = this.encoder.encodeInto(text, this.textBytes);
    if (read !== length || written !== length) return undefined;
    this.bytes.fill(0, TEXT + length, TEXT + length + PADDING);
    const spans = this.spans;
    spans.count = 0;
    let from = 0;
    for (;;) {
      spans.count = this.scanAscii(TEXT, length, from, this.spansAt, spans.count, TABLE, BAIL);
      const bail = this.words[BAIL / 4]!;
      if (bail < 0) return spans;
      from = scanTokens(text, lucene, spans, bail, true);
    }
  }

  /** Makes room for a text of `length` characters and its spans, which the views then cover. */
  private reserve(length: number): void {
    let capacity = Math.max(this.textCapacity, 4096);
    while (capacity < length) capacity *= 2;
    // Tokens are separated, so a text holds at most capacity / 2 + 1 of them; one more slot
    // takes the last span's spill (see ascii-tokens.wat).
    const spanSlots = capacity / 2 + 2;
    const spansAt = TEXT + capacity + PADDING;
    const needed = spansAt + spanSlots * SPAN_BYTES;
    const pages = Math.ceil(needed / WASM_PAGE_BYTES) - this.memory.buffer.byteLength / WASM_PAGE_BYTES;
    if (pages > 0) this.memory.grow(pages);
    const buffer = this.memory.buffer;
    this.bytes = new Uint8Array(buffer);
    this.words = new Int32Array(buffer);
    this.textBytes = this.bytes.subarray(TEXT, TEXT + capacity);
    this.spans.data = this.words.subarray(spansAt / 4, spansAt / 4 + spanSlots * 5);
    this.textCapacity = capacity;
    this.spansAt = spansAt;
  }
}
