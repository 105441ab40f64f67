import {
  HashEmbedder,
  HybridRetriever,
  InMemoryVectorStore,
  KeywordRetriever,
  VectorRetriever,
} from '@zerda/core';
import { describe, expect, it } from 'vitest';
import { runDemo } from './commands/demo/index.js';
import { runConversationDemo } from './commands/demo-conversation.js';
import { main } from './main.js';
import { demoQueries, samplePassages, sampleQueries } from './sample/passages.js';
import { captureIo } from './test-helpers.js';

const arabicScript = /[\u0600-\u06ff]/u;
const latinScript = /[a-z]/iu;

describe('sample corpus', () => {
  it('has English, Arabic and mixed passages with unique ids and metadata', () => {
    const ids = new Set(samplePassages.map((p) => p.id));
    expect(ids.size).toBe(samplePassages.length);
    const byLang = (lang: string) => samplePassages.filter((p) => p.metadata.lang === lang).length;
    expect(byLang('en')).toBeGreaterThanOrEqual(30);
    expect(byLang('ar')).toBeGreaterThanOrEqual(3);
    expect(byLang('mixed')).toBeGreaterThanOrEqual(3);
  });

  it('has an English, an Arabic, a mixed and a filtered sample query', () => {
    expect(sampleQueries).toHaveLength(4);
    const [english, arabic, mixed] = sampleQueries as [string, string, string];
    expect(arabicScript.test(english) || !latinScript.test(english)).toBe(false);
    expect(latinScript.test(arabic) || !arabicScript.test(arabic)).toBe(false);
    expect(arabicScript.test(mixed) && latinScript.test(mixed)).toBe(true);
    expect(demoQueries[3]?.filter).toEqual({ lang: 'en', year: { $gte: 2022 } });
  });
});

describe('zerda demo', () => {
  it('answers each sample query with keyword, vector and hybrid results', async () => {
    const report = await runDemo();
    expect(report.results).toHaveLength(4);
    expect(report.fusion).toBe('weighted');
    for (const result of report.results) {
      for (const list of [result.keyword, result.vector, result.hybrid]) {
        expect(list.hits.length).toBeGreaterThan(0);
        expect(list.hits.length).toBeLessThanOrEqual(3);
        expect(list.warnings).toEqual([]);
      }
      // Every hybrid hit says which branches found it, at what rank, and how it was fused.
      for (const hit of result.hybrid.hits) {
        expect(Object.keys(hit.ranks).length).toBeGreaterThan(0);
        expect(hit.explanation?.method).toBe('weighted');
      }
    }
    const [english, arabic, mixed, filtered] = report.results as [
      (typeof report.results)[number],
      (typeof report.results)[number],
      (typeof report.results)[number],
      (typeof report.results)[number],
    ];
    expect(english.hybrid.hits[0]?.chunk.id).toBe('en-01');
    expect(english.keyword.hits[0]?.chunk.id).toBe('en-01');

    // The Arabic query finds Arabic passages first, in every retriever.
    const lang = (hit: { chunk: { metadata?: Record<string, unknown> } } | undefined) =>
      hit?.chunk.metadata?.lang;
    expect(lang(arabic.hybrid.hits[0])).toBe('ar');
    expect(lang(arabic.vector.hits[0])).toBe('ar');
    expect(arabic.hybrid.hits[0]?.ranks).toEqual({ keyword: 1, vector: 1 });

    // The mixed query finds passages about BM25 in search engines, in both languages.
    expect(mixed.hybrid.hits[0]?.chunk.id).toBe('mx-01');
    expect(mixed.hybrid.hits.map((h) => lang(h))).toContain('ar');

    // The filtered query returns only recent English passages, from every retriever,
    // though without the filter older or non-English passages would rank among the top.
    for (const list of [filtered.keyword, filtered.vector, filtered.hybrid]) {
      for (const hit of list.hits) {
        expect(hit.chunk.metadata?.lang).toBe('en');
        expect(hit.chunk.metadata?.year).toBeGreaterThanOrEqual(2022);
      }
    }
    const unfiltered = await runDemo({ queries: [filtered.query] });
    const all = unfiltered.results[0];
    const outside = [
      ...(all?.keyword.hits ?? []),
      ...(all?.vector.hits ?? []),
      ...(all?.hybrid.hits ?? []),
    ].filter((hit) => hit.chunk.metadata?.lang !== 'en' || (hit.chunk.metadata?.year as number) < 2022);
    expect(outside.length).toBeGreaterThan(0);
  });

  it('builds contexts with the context engine, enriching the follow-up from the recorded answer', async () => {
    const report = await runDemo();
    const [first, followUp] = report.conversation;
    expect(first?.result.followUp).toBe(false);
    expect(first?.result.context).toContain('(source: en-14)');
    expect(first?.result.size).toBeLessThanOrEqual(first?.result.budget ?? 0);
    expect(followUp?.result.followUp).toBe(true);
    expect(followUp?.result.enrichment).toContain('fennec');
    // The follow-up says only "its ears": the ears passage is found through the recorded answer.
    expect(followUp?.result.chunks.map((hit) => hit.chunk.id)).toContain('en-15');
  });

  it('leaves filler out of the fennec fox context: no astrolabe, whatever the fusion', async () => {
    const astrolabe = samplePassages.find((passage) => passage.text.includes('astrolabe'))?.id;
    expect(astrolabe).toBe('en-21');
    const keyword = new KeywordRetriever();
    keyword.add(samplePassages);
    const embedder = new HashEmbedder({ dimension: 256 });
    const store = new InMemoryVectorStore({ embedder, metric: 'cosine' });
    await store.add(samplePassages);
    const vector = new VectorRetriever({ store, embedder });
    const fusions = [
      undefined,
      'rrf',
      { version: 1, method: 'weighted+rrf', normalization: 'minmax', guard: false },
    ] as const;
    for (const fusion of fusions) {
      const hybrid = new HybridRetriever({ keyword, vector, ...(fusion === undefined ? {} : { fusion }) });
      const [first] = await runConversationDemo(hybrid);
      const ids = first?.result.chunks.map((hit) => hit.chunk.id) ?? [];
      expect(ids, JSON.stringify(fusion)).toContain('en-14');
      expect(ids, JSON.stringify(fusion)).not.toContain(astrolabe);
      expect(first?.result.context).not.toMatch(/astrolabe/);
    }
  });

  it('prints a table per query with each hybrid hit explained', async () => {
    const io = captureIo();
    expect(await main(['demo'], io)).toBe(0);
    expect(io.out).toMatch(/keyword \(BM25\)\s+vector \(cosine\)\s+hybrid \(weighted\)/);
    expect(io.out).toMatch(/2\. \[Arabic\] "كيف تعمل محركات البحث"/);
    expect(io.out).toMatch(/filter \{"lang":"en","year":\{"\$gte":2022\}\}/);
    expect(io.out).toMatch(
      / {3}1 {2}en-01 1\.000 +en-01 0\.\d{3} +en-01 1\.000 +keyword #1 1\.000, vector #1 0\.\d{3}\n/,
    );
  });

  it('runs given queries with a filter and a fusion', async () => {
    const io = captureIo();
    expect(
      await main(['demo', '-k', '2', '--fusion', 'rrf', '--filter', '{"lang":"ar"}', 'البحث عن الوثائق'], io),
    ).toBe(0);
    expect(io.out).toMatch(/hybrid \(rrf\)/);
    expect(io.out).toMatch(/reciprocal rank fusion/);
    const rows = io.out.split('\n').filter((line) => /^ {3}\d {2}/u.test(line));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).not.toMatch(/en-|mx-/);

    const json = captureIo();
    expect(await main(['demo', '--json', 'reciprocal rank fusion'], json)).toBe(0);
    const report = JSON.parse(json.out) as {
      results: Array<{ hybrid: { hits: Array<{ chunk: { id: string } }> } }>;
    };
    expect(report.results[0]?.hybrid.hits[0]?.chunk.id).toBe('en-07');
  });

  it('refuses a bad filter, fusion or k with exit code 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['q', '--filter', '{lang: en}'], /--filter is not valid JSON/],
      [['q', '--filter', '{"year": {"$near": 3}}'], /--filter: .*\$near/],
      [['--filter', '{"lang": "en"}'], /--filter applies to the queries given/],
      [['q', '--fusion', 'max'], /unknown fusion 'max'/],
      [['q', '-k', '0'], /-k must be an integer >= 1|--k must be an integer >= 1/],
    ];
    for (const [argv, message] of cases) {
      const io = captureIo();
      expect(await main(['demo', ...argv], io)).toBe(2);
      expect(io.err).toMatch(message);
    }
  });
});
