/**
 * The Porter (1980) stemming algorithm, exactly as Martin Porter's reference implementation
 * (release 3) and Lucene's `PorterStemmer` / `PorterStemFilter` apply it: Lucene-compatible
 * evaluation scores depend on producing the very same stems. That includes the reference
 * implementation's departures from the paper (`-bli` -> `-ble`, `-logi` -> `-log`) and leaving
 * words of one or two characters untouched.
 *
 * The word is expected in lower case. Characters other than a, e, i, o, u (and y in vowel
 * position) count as consonants, as in Lucene, so digits and other scripts pass through safely.
 */

// Shared work buffer: stemming is synchronous, so one buffer serves every call.
let b = new Uint16Array(64);
/** Index of the last character of the word in `b`. */
let k = 0;
/** General offset into the word, set by `ends`. */
let j = 0;

const A = 97;
const E = 101;
const I = 105;
const O = 111;
const U = 117;
const Y = 121;

function cons(i: number): boolean {
  const ch = b[i];
  if (ch === A || ch === E || ch === I || ch === O || ch === U) return false;
  if (ch === Y) return i === 0 ? true : !cons(i - 1);
  return true;
}

/** The measure m of b[0..j]: the number of vowel-consonant sequences. */
function m(): number {
  let n = 0;
  let i = 0;
  for (;;) {
    if (i > j) return n;
    if (!cons(i)) break;
    i++;
  }
  i++;
  for (;;) {
    for (;;) {
      if (i > j) return n;
      if (cons(i)) break;
      i++;
    }
    i++;
    n++;
    for (;;) {
      if (i > j) return n;
      if (!cons(i)) break;
      i++;
    }
    i++;
  }
}

function vowelInStem(): boolean {
  for (let i = 0; i <= j; i++) if (!cons(i)) return true;
  return false;
}

function doubleC(i: number): boolean {
  if (i < 1) return false;
  if (b[i] !== b[i - 1]) return false;
  return cons(i);
}

/** consonant-vowel-consonant ending at i, the last consonant not w, x or y. */
function cvc(i: number): boolean {
  if (i < 2 || !cons(i) || cons(i - 1) || !cons(i - 2)) return false;
  const ch = b[i];
  return !(ch === 119 || ch === 120 || ch === Y);
}

function ends(s: string): boolean {
  const l = s.length;
  const o = k - l + 1;
  if (o < 0) return false;
  for (let i = 0; i < l; i++) if (b[o + i] !== s.charCodeAt(i)) return false;
  j = k - l;
  return true;
}

function setTo(s: string): void {
  const l = s.length;
  const o = j + 1;
  for (let i = 0; i < l; i++) b[o + i] = s.charCodeAt(i);
  k = j + l;
}

function r(s: string): void {
  if (m() > 0) setTo(s);
}

/** Plurals and -ed / -ing. */
function step1(): void {
  if (b[k] === 115 /* s */) {
    if (ends('sses')) k -= 2;
    else if (ends('ies')) setTo('i');
    else if (b[k - 1] !== 115) k--;
  }
  if (ends('eed')) {
    if (m() > 0) k--;
  } else if ((ends('ed') || ends('ing')) && vowelInStem()) {
    k = j;
    if (ends('at')) setTo('ate');
    else if (ends('bl')) setTo('ble');
    else if (ends('iz')) setTo('ize');
    else if (doubleC(k)) {
      const ch = b[k--];
      if (ch === 108 /* l */ || ch === 115 /* s */ || ch === 122 /* z */) k++;
    } else if (m() === 1 && cvc(k)) setTo('e');
  }
}

/** Terminal y to i when there is another vowel in the stem. */
function step2(): void {
  if (ends('y') && vowelInStem()) b[k] = I;
}

/** Double suffixes to single ones (-ization -> -ize, ...). */
function step3(): void {
  if (k === 0) return;
  switch (b[k - 1]) {
    case 97 /* a */:
      if (ends('ational')) r('ate');
      else if (ends('tional')) r('tion');
      break;
    case 99 /* c */:
      if (ends('enci')) r('ence');
      else if (ends('anci')) r('ance');
      break;
    case 101 /* e */:
      if (ends('izer')) r('ize');
      break;
    case 108 /* l */:
      if (ends('bli')) r('ble');
      else if (ends('alli')) r('al');
      else if (ends('entli')) r('ent');
      else if (ends('eli')) r('e');
      else if (ends('ousli')) r('ous');
      break;
    case 111 /* o */:
      if (ends('ization')) r('ize');
      else if (ends('ation')) r('ate');
      else if (ends('ator')) r('ate');
      break;
    case 115 /* s */:
      if (ends('alism')) r('al');
      else if (ends('iveness')) r('ive');
      else if (ends('fulness')) r('ful');
      else if (ends('ousness')) r('ous');
      break;
    case 116 /* t */:
      if (ends('aliti')) r('al');
      else if (ends('iviti')) r('ive');
      else if (ends('biliti')) r('ble');
      break;
    case 103 /* g */:
      if (ends('logi')) r('log');
      break;
  }
}

/** -ic-, -full, -ness etc. */
function step4(): void {
  switch (b[k]) {
    case 101 /* e */:
      if (ends('icate')) r('ic');
      else if (ends('ative')) r('');
      else if (ends('alize')) r('al');
      break;
    case 105 /* i */:
      if (ends('iciti')) r('ic');
      break;
    case 108 /* l */:
      if (ends('ical')) r('ic');
      else if (ends('ful')) r('');
      break;
    case 115 /* s */:
      if (ends('ness')) r('');
      break;
  }
}

/** -ant, -ence etc. in context <c>vcvc<v>. */
function step5(): void {
  if (k === 0) return;
  let matched = false;
  switch (b[k - 1]) {
    case 97 /* a */:
      matched = ends('al');
      break;
    case 99 /* c */:
      matched = ends('ance') || ends('ence');
      break;
    case 101 /* e */:
      matched = ends('er');
      break;
    case 105 /* i */:
      matched = ends('ic');
      break;
    case 108 /* l */:
      matched = ends('able') || ends('ible');
      break;
    case 110 /* n */:
      // -ement before -ment before -ent, so "element" keeps its m.
      matched = ends('ant') || ends('ement') || ends('ment') || ends('ent');
      break;
    case 111 /* o */:
      matched = (ends('ion') && j >= 0 && (b[j] === 115 || b[j] === 116)) || ends('ou');
      break;
    case 115 /* s */:
      matched = ends('ism');
      break;
    case 116 /* t */:
      matched = ends('ate') || ends('iti');
      break;
    case 117 /* u */:
      matched = ends('ous');
      break;
    case 118 /* v */:
      matched = ends('ive');
      break;
    case 122 /* z */:
      matched = ends('ize');
      break;
  }
  if (matched && m() > 1) k = j;
}

/** Final -e and -ll. */
function step6(): void {
  j = k;
  if (b[k] === E) {
    const a = m();
    if (a > 1 || (a === 1 && !cvc(k - 1))) k--;
  }
  if (b[k] === 108 && doubleC(k) && m() > 1) k--;
}

/** Stems one lower-case English word with the original Porter algorithm (Lucene's variant). */
export function porterStem(word: string): string {
  const length = word.length;
  if (length <= 2) return word;
  if (b.length < length) b = new Uint16Array(length * 2);
  for (let i = 0; i < length; i++) b[i] = word.charCodeAt(i);
  k = length - 1;
  j = 0;
  step1();
  step2();
  step3();
  step4();
  step5();
  step6();
  // The stem shares a prefix with the word; only the changed tail needs new characters.
  const stemLength = k + 1;
  let same = 0;
  while (same < stemLength && b[same] === word.charCodeAt(same)) same++;
  if (same === stemLength) return stemLength === length ? word : word.slice(0, stemLength);
  let tail = '';
  for (let i = same; i < stemLength; i++) tail += String.fromCharCode(b[i]!);
  return word.slice(0, same) + tail;
}
