/**
 * Arabic orthographic normalisation, so that a query typed without diacritics or hamza
 * matches a document written with them:
 * - removes tashkeel (U+064B–U+0652), superscript alef (U+0670), Quranic annotation marks
 *   (U+0610–U+061A, U+06D6–U+06ED) and tatweel (U+0640);
 * - alef with hamza above/below, alef with madda and alef wasla (أ إ آ ٱ) -> bare alef ا;
 * - alef maqsura ى -> yeh ي; teh marbuta ة -> heh ه;
 * - Arabic-Indic and extended Arabic-Indic digits (٠–٩, ۰–۹) -> ASCII digits, and the Arabic
 *   decimal and thousands separators (٫ ٬) -> `.` and `,`, so numbers match across scripts.
 */

const ALEF = 0x0627;
const YEH = 0x064a;
const HEH = 0x0647;

/**
 * What each code unit in U+0600–U+06FF becomes: -1 = kept, -2 = removed, otherwise the
 * replacement code unit. Built once; lookups are a single typed-array read.
 */
const TABLE = (() => {
  const table = new Int32Array(0x100).fill(-1);
  const set = (code: number, to: number) => {
    table[code - 0x0600] = to;
  };
  for (let c = 0x064b; c <= 0x0652; c++) set(c, -2);
  for (let c = 0x0610; c <= 0x061a; c++) set(c, -2);
  for (let c = 0x06d6; c <= 0x06ed; c++) set(c, -2);
  set(0x0670, -2);
  set(0x0640, -2);
  set(0x0623, ALEF);
  set(0x0625, ALEF);
  set(0x0622, ALEF);
  set(0x0671, ALEF);
  set(0x0649, YEH);
  set(0x0629, HEH);
  for (let d = 0; d < 10; d++) {
    set(0x0660 + d, 0x30 + d);
    set(0x06f0 + d, 0x30 + d);
  }
  set(0x066b, 0x2e);
  set(0x066c, 0x2c);
  return table;
})();

/** True if `text` contains any character of the Arabic block (U+0600–U+06FF). */
export function hasArabicBlock(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x0600 && c <= 0x06ff) return true;
  }
  return false;
}

/** Normalises Arabic text (see the module comment); text without Arabic is returned unchanged. */
export function normalizeArabic(text: string): string {
  const length = text.length;
  let i = 0;
  // Fast scan to the first character that changes; most text has none.
  for (; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x0600 && c <= 0x06ff && TABLE[c - 0x0600] !== -1) break;
  }
  if (i === length) return text;
  let out = text.slice(0, i);
  let runStart = i;
  for (; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x0600 || c > 0x06ff) continue;
    const to = TABLE[c - 0x0600]!;
    if (to === -1) continue;
    out += text.slice(runStart, i);
    if (to !== -2) out += String.fromCharCode(to);
    runStart = i + 1;
  }
  return out + text.slice(runStart);
}
