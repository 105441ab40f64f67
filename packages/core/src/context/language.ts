import { englishStopWords, spanishStopWords } from '../text/index.js';

const FRENCH = new Set(
  'le la les des est une et pour dans qui que avec sur pas du au aux ce cette ces sont mais ou est-ce comment pourquoi quel quelle quels quelles où très'.split(
    ' ',
  ),
);
const GERMAN = new Set(
  'der die das und ist nicht mit ein eine einen dem den des zu von für auf wie was warum wo wer welche welcher ich sie es sind auch oder'.split(
    ' ',
  ),
);
/** English function words that are not also Spanish, French or German. */
const ENGLISH_MARKERS = new Set(
  'the is are was were what which who how why when where does do did can could should would will of and to in for with this that these those it its there an be been'.split(
    ' ',
  ),
);

const SCRIPTS: ReadonlyArray<[RegExp, string]> = [
  [/\p{Script=Arabic}/gu, 'ar'],
  [/\p{Script=Cyrillic}/gu, 'ru'],
  [/\p{Script=Hebrew}/gu, 'he'],
  [/\p{Script=Greek}/gu, 'el'],
  [/\p{Script=Devanagari}/gu, 'hi'],
  [/\p{Script=Hangul}/gu, 'ko'],
  [/[\p{Script=Hiragana}\p{Script=Katakana}]/gu, 'ja'],
  [/\p{Script=Han}/gu, 'zh'],
  [/\p{Script=Thai}/gu, 'th'],
];

/**
 * Rule-based language identification for short queries: the dominant script decides for
 * non-Latin scripts (Arabic, Cyrillic, CJK, ...); Latin text is scored by function words of
 * English, Spanish, French and German, with Spanish-only characters (ñ ¿ ¡, accented vowels)
 * counting for Spanish. Latin text with no evidence either way is taken as English; text with
 * no letters is 'unknown'. Returns an ISO 639-1 code.
 */
export function detectLanguage(text: string): string {
  const latin = text.match(/\p{Script=Latin}/gu)?.length ?? 0;
  let best = 'unknown';
  let bestCount = 0;
  for (const [pattern, code] of SCRIPTS) {
    const count = text.match(pattern)?.length ?? 0;
    if (count > bestCount) {
      best = code;
      bestCount = count;
    }
  }
  // Japanese text mixes kana with Han characters: any kana makes it Japanese.
  if (best === 'zh' && /[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) best = 'ja';
  if (bestCount > latin) return best;
  if (latin === 0) return 'unknown';

  const words = text.toLowerCase().match(/[\p{L}'-]+/gu) ?? [];
  const score = { en: 0, es: 0, fr: 0, de: 0 };
  for (const word of words) {
    if (ENGLISH_MARKERS.has(word)) score.en += 1;
    else if (englishStopWords.has(word)) score.en += 0.5;
    if (spanishStopWords.has(word)) score.es += 1;
    if (FRENCH.has(word)) score.fr += 1;
    if (GERMAN.has(word)) score.de += 1;
  }
  score.es += 1.5 * (text.match(/[ñ¿¡]/giu)?.length ?? 0);
  score.es += 0.5 * (text.match(/[áíóú]/giu)?.length ?? 0);
  score.fr += 0.5 * (text.match(/[èêàçùâîôûë]/giu)?.length ?? 0);
  score.de += 0.75 * (text.match(/[äöüß]/giu)?.length ?? 0);
  let language = 'en';
  let top = score.en;
  for (const code of ['es', 'fr', 'de'] as const) {
    if (score[code] > top) {
      language = code;
      top = score[code];
    }
  }
  return language;
}
