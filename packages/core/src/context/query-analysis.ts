import { InvalidArgumentError } from '../errors/index.js';
import { type QueryAnalysis, QueryComplexity, QueryIntent } from '../model/index.js';
import {
  type Analyzer,
  defaultAnalyzer,
  englishStopWords,
  normalizeArabic,
  spanishStopWords,
  tokenize,
} from '../text/index.js';
import { detectLanguage } from './language.js';

/** Context budget per query complexity, in the engine's unit (characters or tokens). */
export type ComplexityBudgets = Record<QueryComplexity, number>;

/** Budgets in characters (about 500, 1,000 and 2,000 tokens of English). */
export const DEFAULT_CHARACTER_BUDGETS: Readonly<ComplexityBudgets> = Object.freeze({
  [QueryComplexity.Low]: 2000,
  [QueryComplexity.Medium]: 4000,
  [QueryComplexity.High]: 8000,
});

/** Budgets in tokens. */
export const DEFAULT_TOKEN_BUDGETS: Readonly<ComplexityBudgets> = Object.freeze({
  [QueryComplexity.Low]: 500,
  [QueryComplexity.Medium]: 1000,
  [QueryComplexity.High]: 2000,
});

export interface QueryAnalyzerOptions {
  /** Keywords come from this analyser (default: the shared `defaultAnalyzer`). */
  analyzer?: Analyzer;
  /** Budget per complexity (default `DEFAULT_CHARACTER_BUDGETS`). */
  budgets?: Partial<ComplexityBudgets>;
}

// Word boundaries that work for every script (\b only knows ASCII word characters).
const B = String.raw`(?<![\p{L}\p{N}_])`;
const E = String.raw`(?![\p{L}\p{N}_])`;

/** A case-insensitive pattern matching any of the phrases as whole words. */
function phrases(list: readonly string[]): RegExp {
  return new RegExp(`${B}(?:${list.join('|')})${E}`, 'iu');
}

/** Arabic phrases (written normalised), optionally after the conjunctions و or ف. */
function arabic(list: readonly string[]): RegExp {
  return new RegExp(`${B}[وف]?(?:${list.map((p) => normalizeArabic(p)).join('|')})${E}`, 'u');
}

const CODE_SYNTAX =
  /`[^`]+`|=>|::|\w\(\)|\b\w+\.\w+\(|[{}]|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w*\(|\b(?:def|const|let|var|import|return|async|await)\s+\w/u;
const INTENT_RULES: ReadonlyArray<[QueryIntent, RegExp]> = [
  [QueryIntent.Code, CODE_SYNTAX],
  [
    QueryIntent.Code,
    phrases([
      'code',
      'snippet',
      'function',
      'method',
      'class',
      'compile[sd]?',
      'compiler',
      'exception',
      'stack ?trace',
      'traceback',
      'syntax',
      'regex',
      'typescript',
      'javascript',
      'python',
      'java',
      'rust',
      'golang',
      'sql',
      'api call',
      'código',
      'función',
      'programa(?:r|ción)?',
    ]),
  ],
  [
    QueryIntent.Code,
    arabic(['كود', 'الكود', 'شيفرة', 'الشيفرة', 'دالة', 'الدالة', 'برمجة', 'برمجيا', 'خطأ برمجي']),
  ],
  [
    QueryIntent.Comparative,
    phrases([
      'compare[sd]?',
      'comparing',
      'comparison',
      'versus',
      'vs\\.?',
      'differences? between',
      'differ',
      'differs',
      '(?:better|worse|faster|slower|cheaper) than',
      'which is (?:better|best|faster)',
      'pros and cons',
      'compar(?:ar|a|ación|e)',
      'diferencias? entre',
      '(?:mejor|peor) que',
    ]),
  ],
  [
    QueryIntent.Comparative,
    arabic(['قارن', 'مقارنة', 'الفرق بين', 'الفروق بين', 'افضل من', 'اسوا من', 'مقابل']),
  ],
  [
    QueryIntent.Summarize,
    phrases([
      'summari[sz]e[sd]?',
      'summary',
      'overview',
      'tl;?dr',
      'recap',
      'outline',
      'key points',
      'main points',
      'in brief',
      'resum(?:e|en|ir|eme)',
      'sintetiza',
      'puntos clave',
    ]),
  ],
  [QueryIntent.Summarize, arabic(['لخص', 'تلخيص', 'ملخص', 'نظرة عامة', 'باختصار', 'اهم النقاط'])],
  [
    QueryIntent.Procedural,
    phrases([
      'how (?:do|can|should|would|could) (?:i|we|you|one)',
      'how to',
      'steps?',
      'step by step',
      'guide',
      'tutorial',
      'instructions?',
      'install(?:ing)?',
      'set ?up',
      'configure',
      'cómo (?:hago|puedo|se|debo)',
      'pasos',
      'guía',
      'instalar',
      'configurar',
    ]),
  ],
  [
    QueryIntent.Procedural,
    arabic(['خطوات', 'طريقة', 'كيفية', 'كيف يمكنني', 'كيف اقوم', 'كيف استطيع', 'تثبيت', 'اعداد', 'ضبط']),
  ],
  [
    QueryIntent.Reasoning,
    phrases([
      'why',
      'explain',
      'reasons?',
      'causes?',
      'what happens (?:if|when)',
      'what if',
      'how (?:does|do|did|is|are) .{1,60} work',
      'implications?',
      'por ?qué',
      'explica(?:r)?',
      'razón',
      'causa',
    ]),
  ],
  [
    QueryIntent.Reasoning,
    arabic(['لماذا', 'لم', 'اشرح', 'فسر', 'سبب', 'اسباب', 'كيف يعمل', 'كيف تعمل', 'علل']),
  ],
  [QueryIntent.Procedural, phrases(['how', 'cómo', 'como'])],
  [QueryIntent.Procedural, arabic(['كيف'])],
  [
    QueryIntent.Factual,
    phrases([
      'what',
      'who',
      'when',
      'where',
      'which',
      'how (?:many|much|long|old)',
      'is there',
      'are there',
      'tell me about',
      'describe',
      'define',
      'definition',
      'list',
      'qué',
      'quién',
      'quiénes',
      'cuándo',
      'dónde',
      'cuál(?:es)?',
      'cuántos?',
      'cuántas?',
    ]),
  ],
  [
    QueryIntent.Factual,
    arabic(['ما', 'ماذا', 'ما هو', 'ما هي', 'من هو', 'من هي', 'متي', 'اين', 'كم', 'هل', 'عرف', 'تعريف']),
  ],
];

/** The query's intent by ordered rules: code, comparison, summary, procedure, reasoning, fact. */
export function detectIntent(query: string): QueryIntent {
  const text = normalizeArabic(query);
  for (const [intent, pattern] of INTENT_RULES) if (pattern.test(text)) return intent;
  return /[?؟]\s*$/u.test(query) ? QueryIntent.Factual : QueryIntent.Unknown;
}

const CONJUNCTIONS = phrases([
  'and',
  'or',
  'but',
  'also',
  'as well as',
  'then',
  'pero',
  'también',
  'además',
  'luego',
  'o',
  'y',
]);
const ARABIC_CONJUNCTIONS = arabic(['او', 'ثم', 'لكن', 'ايضا', 'كذلك', 'بالاضافة']);

/**
 * Low, medium or high, from points: keyword count (4-7: 1, 8-11: 2, 12+: 3), conjunctions and
 * clause separators (1 or 2: 1, 3+: 2), several questions (1), an intent that asks for
 * synthesis (comparison, reasoning, summary: 1) and three or more entities (1).
 * 0-1 points is low, 2-3 medium, 4+ high.
 */
export function estimateComplexity(
  query: string,
  keywords: readonly string[],
  intent: QueryIntent,
  entities: readonly string[],
): QueryComplexity {
  let points = keywords.length >= 12 ? 3 : keywords.length >= 8 ? 2 : keywords.length >= 4 ? 1 : 0;
  const text = normalizeArabic(query);
  const global = (pattern: RegExp) => new RegExp(pattern.source, `${pattern.flags}g`);
  const clauses =
    (text.match(global(CONJUNCTIONS))?.length ?? 0) +
    (text.match(global(ARABIC_CONJUNCTIONS))?.length ?? 0) +
    (text.match(/[,;،؛]/gu)?.length ?? 0);
  points += clauses >= 3 ? 2 : clauses >= 1 ? 1 : 0;
  if ((query.match(/[?؟]/gu)?.length ?? 0) > 1) points += 1;
  if (
    intent === QueryIntent.Comparative ||
    intent === QueryIntent.Reasoning ||
    intent === QueryIntent.Summarize
  )
    points += 1;
  if (entities.length >= 3) points += 1;
  return points >= 4 ? QueryComplexity.High : points >= 2 ? QueryComplexity.Medium : QueryComplexity.Low;
}

const QUESTION_WORDS = new Set(
  'what which who whom whose when where why how is are do does did can could should would will explain describe tell show give list compare summarize summarise define find please cómo qué quién quiénes cuándo dónde cuál cuáles cuánto cuántos cuánta cuántas explica explique dime describe compara resume'.split(
    ' ',
  ),
);
const CONNECTORS = new Set([
  'of',
  'the',
  'and',
  'de',
  'del',
  'la',
  'las',
  'los',
  'el',
  'von',
  'van',
  'der',
  'di',
  'da',
  'du',
  'al',
  '&',
]);
const CODE_LABELS =
  'http|https|error|err|code|status|sku|model|part|iso|rfc|pep|cve|ticket|issue|bug|version|release|no\\.|nr\\.|#';

/**
 * Entities in order of appearance, without repeats: quoted phrases ("…", “…”, «…», '…', `…`),
 * codes (tokens mixing letters and digits such as ERR-1234, XJ-900, v2.3.1, CVE-2021-44228;
 * a capitalised word or a known label followed by a number, such as HTTP 404 or Error 500),
 * numbers not already part of a code, and spans of capitalised words (New York, Zerda; a single
 * capitalised word opening a sentence is left out unless it is an acronym or mixed case, since
 * it is capitalised by position, and leading function words are trimmed).
 */
export function extractEntities(query: string): string[] {
  const found: Array<{ start: number; end: number; text: string }> = [];
  // Which characters an entity already covers: a check costs the candidate's length, not the
  // number of entities found (which a long question full of numbers makes quadratic).
  const covered = new Uint8Array(query.length);
  const taken = (start: number, end: number) => {
    for (let i = start; i < end; i++) if (covered[i] === 1) return true;
    return false;
  };
  const take = (start: number, end: number, text: string) => {
    covered.fill(1, start, end);
    found.push({ start, end, text });
  };
  const add = (start: number, end: number, text: string) => {
    const trimmed = text.trim();
    if (trimmed.length > 0 && !taken(start, end)) take(start, end, trimmed);
  };
  const scan = (pattern: RegExp, group = 0) => {
    for (const match of query.matchAll(pattern)) {
      const text = match[group];
      if (text === undefined) continue;
      const offset = match.index + (group === 0 ? 0 : match[0].indexOf(text));
      add(offset, offset + text.length, text);
    }
  };
  // Quoted phrases (whole quote taken so nothing inside is counted twice).
  for (const match of query.matchAll(
    /"([^"\n]{1,200})"|“([^”\n]{1,200})”|«([^»\n]{1,200})»|`([^`\n]{1,200})`|(?<![\p{L}\p{N}])'([^'\n]{2,200})'(?![\p{L}\p{N}])/gu,
  )) {
    const inner = match.slice(1).find((group) => group !== undefined) ?? '';
    if (!taken(match.index, match.index + match[0].length)) {
      take(match.index, match.index + match[0].length, inner.trim());
    }
  }
  // Label + number: HTTP 404, Error 500, RFC 7231, SKU #12345 (an upper-case word or a known label).
  scan(new RegExp(`${B}\\p{Lu}{2,}\\s?#?\\s?\\d+(?:[-.]\\d+)*${E}`, 'gu'));
  scan(new RegExp(`${B}(?:${CODE_LABELS})\\s?#?\\s?\\d+(?:[-.]\\d+)*${E}`, 'giu'));
  // Mixed letters and digits: ERR-1234, XJ-900, v2.3.1, A1B2-C3, CVE-2021-44228. At most 256
  // characters: each place a code may start is looked at that far, not to the end of the run
  // (which made a long run of letters and dots quadratic).
  scan(
    /(?<![\p{L}\p{N}_])(?=[\p{L}\p{N}._\-/#]{0,255}\p{L})(?=[\p{L}\p{N}._\-/#]{0,255}\p{N})[\p{L}\p{N}](?:[\p{L}\p{N}._\-/#]{0,254}[\p{L}\p{N}])?(?![\p{L}\p{N}_])/gu,
  );
  // Numbers (Western and Arabic-Indic digits), with decimals, thousands separators and percent.
  scan(
    /(?<![\p{L}\p{N}_.,])[\d\u0660-\u0669\u06f0-\u06f9]+(?:[.,٫٬][\d\u0660-\u0669\u06f0-\u06f9]+)*%?(?![\p{L}\p{N}_])/gu,
  );
  // Capitalised spans.
  const words = [...query.matchAll(/[\p{L}\p{M}][\p{L}\p{M}\p{N}'’.-]*|&/gu)];
  let span: Array<{ word: string; start: number; end: number }> = [];
  const flush = () => {
    // Leading function words are skipped by index: shifting them one by one is quadratic.
    let from = 0;
    while (from < span.length && isFunctionWord((span[from] as { word: string }).word)) from++;
    while (
      span.length > from &&
      CONNECTORS.has((span[span.length - 1] as { word: string }).word.toLowerCase())
    )
      span.pop();
    if (span.length > from) {
      const first = span[from] as { word: string; start: number; end: number };
      const last = span[span.length - 1] as { end: number };
      const single = span.length - from === 1;
      const atSentenceStart = startsSentence(query, first.start);
      if (!(single && atSentenceStart && !isAcronymOrMixed(first.word))) {
        add(first.start, last.end, query.slice(first.start, last.end).replace(/[.’'-]+$/u, ''));
      }
    }
    span = [];
  };
  for (const match of words) {
    const word = match[0];
    const start = match.index;
    const gap = span.length > 0 ? query.slice((span[span.length - 1] as { end: number }).end, start) : ' ';
    const joined = /^[ \t]+$/u.test(gap);
    if (!joined) flush();
    if (isCapitalised(word)) span.push({ word, start, end: start + word.length });
    else if (span.length > 0 && CONNECTORS.has(word.toLowerCase()))
      span.push({ word, start, end: start + word.length });
    else flush();
  }
  flush();

  const seen = new Set<string>();
  return found
    .sort((a, b) => a.start - b.start)
    .map((f) => f.text)
    .filter((text) => {
      const key = text.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

function isCapitalised(word: string): boolean {
  return /^\p{Lu}/u.test(word);
}

/** BM25, NASA, iPhone, TypeError: capitalised for a reason other than position. */
function isAcronymOrMixed(word: string): boolean {
  return /^\p{Lu}[\p{Lu}\p{N}]+$/u.test(word) || /\p{Ll}\p{Lu}/u.test(word);
}

function isFunctionWord(word: string): boolean {
  const lower = word.toLowerCase();
  return QUESTION_WORDS.has(lower) || englishStopWords.has(lower) || spanishStopWords.has(lower);
}

/**
 * Rule-based query analysis: language, intent, complexity, keywords (the analyser's terms,
 * distinct, in order; Spanish stop words are dropped too for Spanish queries), entities, and the
 * context budget for the complexity.
 */
export class QueryAnalyzer {
  readonly budgets: Readonly<ComplexityBudgets>;
  readonly #analyzer: Analyzer;

  constructor(options: QueryAnalyzerOptions = {}) {
    this.#analyzer = options.analyzer ?? defaultAnalyzer;
    this.budgets = Object.freeze(resolveBudgets(options.budgets, DEFAULT_CHARACTER_BUDGETS));
  }

  /** The distinct analysed terms of a text. */
  keywords(text: string, language = detectLanguage(text)): string[] {
    let source = text;
    if (language === 'es') {
      source = tokenize(text)
        .filter(
          (token) => !spanishStopWords.has(token.toLowerCase()) && !QUESTION_WORDS.has(token.toLowerCase()),
        )
        .join(' ');
    }
    return [...new Set(this.#analyzer.analyze(source))];
  }

  analyze(query: string): QueryAnalysis {
    if (typeof query !== 'string') {
      throw new InvalidArgumentError({ argument: 'query', value: query, message: 'must be a string' });
    }
    const language = detectLanguage(query);
    const intent = detectIntent(query);
    const keywords = this.keywords(query, language);
    const entities = extractEntities(query);
    const complexity = estimateComplexity(query, keywords, intent, entities);
    return { query, language, intent, complexity, keywords, entities, budget: this.budgets[complexity] };
  }
}

/** Analyses a query with the default analyser and character budgets. */
export function analyzeQuery(query: string, options: QueryAnalyzerOptions = {}): QueryAnalysis {
  return new QueryAnalyzer(options).analyze(query);
}

export function resolveBudgets(
  given: Partial<ComplexityBudgets> | undefined,
  defaults: Readonly<ComplexityBudgets>,
): ComplexityBudgets {
  const budgets = { ...defaults };
  for (const level of [QueryComplexity.Low, QueryComplexity.Medium, QueryComplexity.High]) {
    const value = given?.[level];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value <= 0) {
      throw new InvalidArgumentError({
        argument: `budgets.${level}`,
        value,
        message: 'must be a positive number',
      });
    }
    budgets[level] = value;
  }
  return budgets;
}

/**
 * Whether `at` begins a sentence: only spaces, opening quotes and brackets lie between it and the
 * start of the text or a sentence end. Read backwards from `at` (a regular expression over the
 * text before it made long inputs quadratic).
 */
function startsSentence(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && OPENERS.test(text[i] as string)) i--;
  return i < 0 || SENTENCE_ENDS.has(text[i] as string);
}

const OPENERS = /^[\s¿¡"'“«(]$/u;
const SENTENCE_ENDS = new Set(['.', '!', '?', '؟', ':', ';']);
