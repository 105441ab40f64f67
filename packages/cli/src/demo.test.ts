import { describe, expect, it } from 'vitest';
import { runDemo } from './commands/demo.js';
import { main } from './main.js';
import { samplePassages, sampleQueries } from './sample/passages.js';
import { captureIo } from './test-helpers.js';

describe('sample corpus', () => {
  it('has English, Arabic and mixed passages with unique ids and metadata', () => {
    const ids = new Set(samplePassages.map((p) => p.id));
    expect(ids.size).toBe(samplePassages.length);
    const byLang = (lang: string) => samplePassages.filter((p) => p.metadata.lang === lang).length;
    expect(byLang('en')).toBeGreaterThanOrEqual(30);
    expect(byLang('ar')).toBeGreaterThanOrEqual(3);
    expect(byLang('mixed')).toBeGreaterThanOrEqual(3);
    expect(sampleQueries.some((q) => /[\u0600-\u06ff]/u.test(q))).toBe(true);
  });
});

describe('zerda demo', () => {
  it('ranks sample passages for the sample queries, the Arabic one included', async () => {
    const report = await runDemo();
    expect(report.results).toHaveLength(3);
    const [bm25, fox, arabic] = report.results;
    expect(bm25?.hits[0]?.chunk.id).toBe('en-01');
    expect(fox?.hits.map((h) => h.chunk.id)).toContain('en-15');
    expect(arabic?.hits.map((h) => h.chunk.id)).toContain('ar-02');
  });

  it('prints ranked results', async () => {
    const io = captureIo();
    expect(await main(['demo', '-k', '2', 'reciprocal rank fusion'], io)).toBe(0);
    expect(io.out).toMatch(/> reciprocal rank fusion/);
    expect(io.out).toMatch(/1\. \[en-07\]/);
  });
});
