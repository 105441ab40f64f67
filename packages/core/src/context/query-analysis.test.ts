import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { QueryComplexity, QueryIntent } from '../model/index.js';
import { detectLanguage } from './language.js';
import { analyzeQuery, detectIntent, extractEntities, QueryAnalyzer } from './query-analysis.js';

describe('detectLanguage', () => {
  it('tells Arabic, English and Spanish apart (and a few scripts more)', () => {
    expect(detectLanguage('What is hybrid retrieval?')).toBe('en');
    expect(detectLanguage('ما هو البحث الهجين؟')).toBe('ar');
    expect(detectLanguage('¿Qué es la recuperación híbrida?')).toBe('es');
    expect(detectLanguage('Cómo funciona el índice de los documentos')).toBe('es');
    expect(detectLanguage('Was ist die Antwort und warum ist das so')).toBe('de');
    expect(detectLanguage('Что такое гибридный поиск?')).toBe('ru');
    expect(detectLanguage('ハイブリッド検索とは')).toBe('ja');
    expect(detectLanguage('bm25 parameters')).toBe('en');
    expect(detectLanguage('12345 ?')).toBe('unknown');
    // Mixed: the dominant script wins.
    expect(detectLanguage('كيف أستخدم Zerda مع قاعدة البيانات؟')).toBe('ar');
  });
});

describe('detectIntent', () => {
  const cases: Array<[string, QueryIntent]> = [
    ['What is BM25?', QueryIntent.Factual],
    ['Who wrote the Porter stemmer?', QueryIntent.Factual],
    ['Why does fusion change the ranking?', QueryIntent.Reasoning],
    ['How does the reranker work?', QueryIntent.Reasoning],
    ['Compare Chroma and Pinecone', QueryIntent.Comparative],
    ['BM25 vs dense retrieval', QueryIntent.Comparative],
    ['How do I install Zerda?', QueryIntent.Procedural],
    ['Steps to configure the FAISS backend', QueryIntent.Procedural],
    ['Summarize the design document', QueryIntent.Summarize],
    ['TypeError: store.search() is not a function', QueryIntent.Code],
    ['write a python function to chunk text', QueryIntent.Code],
    ['ما هو البحث الهجين؟', QueryIntent.Factual],
    ['لماذا تتغير النتائج؟', QueryIntent.Reasoning],
    ['ما الفرق بين البحث الدلالي والبحث بالكلمات؟', QueryIntent.Comparative],
    ['كيف أثبت المكتبة؟', QueryIntent.Procedural],
    ['لخص هذا المستند', QueryIntent.Summarize],
    ['¿Qué es la recuperación híbrida?', QueryIntent.Factual],
    ['¿Por qué cambia el orden?', QueryIntent.Reasoning],
    ['¿Cómo instalo el paquete?', QueryIntent.Procedural],
    ['diferencias entre Chroma y FAISS', QueryIntent.Comparative],
    ['resumen del informe', QueryIntent.Summarize],
    ['hybrid retrieval', QueryIntent.Unknown],
    ['hybrid retrieval?', QueryIntent.Factual],
  ];
  it.each(cases)('%s -> %s', (query, intent) => {
    expect(detectIntent(query)).toBe(intent);
  });
});

describe('extractEntities', () => {
  it('finds capitalised spans, quoted phrases, numbers and codes', () => {
    expect(extractEntities('Why does HTTP 404 appear after ERR-1234 in New York?')).toEqual([
      'HTTP 404',
      'ERR-1234',
      'New York',
    ]);
    expect(extractEntities('Is the "context engine" in v2.3.1 faster than XJ-900 by 12.5%?')).toEqual([
      'context engine',
      'v2.3.1',
      'XJ-900',
      '12.5%',
    ]);
    expect(extractEntities('Tell me about the Bank of America report for SKU #12345 and error 500')).toEqual([
      'Bank of America',
      'SKU #12345',
      'error 500',
    ]);
    expect(extractEntities('What does the reranker do?')).toEqual([]);
    // An acronym or mixed-case word at the start is still an entity; a capitalised common word is not.
    expect(extractEntities('BM25 or TypeError?')).toEqual(['BM25', 'TypeError']);
    expect(extractEntities('Explain fusion')).toEqual([]);
    expect(extractEntities('ما هو الخطأ ERR-42 في «محرك السياق» عام ٢٠٢٤؟')).toEqual([
      'ERR-42',
      'محرك السياق',
      '٢٠٢٤',
    ]);
    expect(extractEntities('¿Dónde está la Universidad de Granada?')).toEqual(['Universidad de Granada']);
  });
});

describe('QueryAnalyzer', () => {
  it('reports language, intent, complexity, keywords, entities and the budget for the complexity', () => {
    const simple = analyzeQuery('What is Zerda?');
    expect(simple).toEqual({
      query: 'What is Zerda?',
      language: 'en',
      intent: QueryIntent.Factual,
      complexity: QueryComplexity.Low,
      keywords: ['zerda'],
      entities: ['Zerda'],
      budget: 2000,
    });
    const complex = analyzeQuery(
      'Compare BM25 and dense retrieval for Arabic queries, and explain which is better for short questions, with examples',
    );
    expect(complex.intent).toBe(QueryIntent.Comparative);
    expect(complex.complexity).toBe(QueryComplexity.High);
    expect(complex.budget).toBe(8000);
    expect(analyzeQuery('Why is the Arabic stemmer light, and when should I use it?').complexity).toBe(
      QueryComplexity.Medium,
    );
    const arabic = analyzeQuery('ما هو الفرق بين البحث الدلالي والبحث بالكلمات المفتاحية؟');
    expect(arabic.language).toBe('ar');
    expect(arabic.keywords).toEqual(['فرق', 'بحث', 'دلال', 'كلم', 'مفتاح']);
    // Spanish stop words and question words are not keywords.
    expect(analyzeQuery('¿Cómo instalo el reordenador en el servidor?').keywords).toEqual([
      'instalo',
      'reordenador',
      'servidor',
    ]);
  });

  it('takes budgets per complexity and rejects bad ones', () => {
    const analyzer = new QueryAnalyzer({ budgets: { low: 100 } });
    expect(analyzer.analyze('What is Zerda?').budget).toBe(100);
    expect(analyzer.budgets).toEqual({ low: 100, medium: 4000, high: 8000 });
    expect(() => new QueryAnalyzer({ budgets: { high: -1 } })).toThrow(InvalidArgumentError);
    expect(() => analyzeQuery(42 as never)).toThrow(InvalidArgumentError);
  });
});
