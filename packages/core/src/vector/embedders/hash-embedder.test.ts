import { describe, expect, it } from 'vitest';
import { AbortedError, InvalidArgumentError } from '../../errors/index.js';
import type { Analyzer } from '../../text/index.js';
import { finish, hashRange, hashStart } from './hash.js';
import { HashEmbedder } from './index.js';

const cosine = (a: Float32Array, b: Float32Array): number => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
};
const norm = (a: Float32Array): number => Math.sqrt(cosine(a, a));

/** Independent of the text module: whitespace words. */
const whitespace: Analyzer = {
  name: 'ws',
  analyze: (text) => text.toLowerCase().split(/\s+/).filter(Boolean),
};

describe('hash', () => {
  it('is FNV-1a over code units (reference vectors for ASCII), then fmix32', () => {
    const fnv = (s: string) => hashRange(0x811c9dc5, s, 0, s.length) >>> 0;
    expect(fnv('')).toBe(0x811c9dc5);
    expect(fnv('a')).toBe(0xe40c292c);
    expect(fnv('foobar')).toBe(0xbf9cf968);
    expect(finish(0)).toBe(0);
    expect(finish(1)).toBe(0x514e28b7); // murmur3 fmix32(1)
  });
});

describe('HashEmbedder', () => {
  const embedder = new HashEmbedder();

  it('is deterministic: across instances, calls and batch sizes, and pinned to known values', async () => {
    const texts = ['the cat sat on the mat', 'Zerda finds passages', 'المكتبة الوطنية', ''];
    const a = await embedder.embed(texts);
    const b = await new HashEmbedder({ batchSize: 1 }).embed(texts);
    expect(b).toEqual(a);
    expect(await embedder.embedQuery(texts[0] as string)).toEqual(a[0]);
    // Pinned with an analyser that does not depend on the text module, so a change of the
    // hashing (which would invalidate every stored vector) cannot go unnoticed.
    const pinned = new HashEmbedder({ analyzer: whitespace, dimension: 16 }).embedSync('hello world');
    expect(Array.from(pinned, (x) => Math.round(x * 1e4) / 1e4)).toEqual([
      -0.1831, 0, -0.1273, -0.3104, -0.1273, 0.1273, 0, -0.5432, -0.1273, -0.1273, 0.5432, -0.1273, 0.1273, 0,
      -0.2885, -0.2885,
    ]);
  });

  it('depends on the seed', () => {
    const other = new HashEmbedder({ seed: 7 });
    const text = 'retrieval augmented generation with hybrid search';
    expect(Math.abs(cosine(embedder.embedSync(text), other.embedSync(text)))).toBeLessThan(0.3);
    expect(other.name).toContain('seed=7');
  });

  it('has the configured dimension and unit length', async () => {
    expect(embedder.dimension).toBe(384);
    const small = new HashEmbedder({ dimension: 32 });
    const texts = [
      'a cat',
      'The quick brown fox jumps over the lazy dog. '.repeat(50),
      'كتاب',
      '東京タワー',
      '42',
    ];
    for (const e of [embedder, small]) {
      for (const v of await e.embed(texts)) {
        expect(v).toBeInstanceOf(Float32Array);
        expect(v.length).toBe(e.dimension);
        expect(norm(v)).toBeCloseTo(1, 5);
      }
    }
  });

  it('gives the zero vector for a text without features', async () => {
    for (const text of ['', '   ', '?!…', 'the of and']) {
      const v = await embedder.embedQuery(text);
      expect(v.length).toBe(384);
      expect(v.every((x) => x === 0)).toBe(true);
    }
  });

  it('puts related texts closer than unrelated ones', () => {
    const [cat1, cat2, finance] = [
      'the cat sat on the mat',
      'a cat sitting on a mat',
      'quarterly financial report',
    ].map((t) => embedder.embedSync(t)) as [Float32Array, Float32Array, Float32Array];
    const related = cosine(cat1, cat2);
    expect(related).toBeGreaterThan(0.4);
    expect(Math.abs(cosine(cat1, finance))).toBeLessThan(0.15);
    expect(Math.abs(cosine(cat2, finance))).toBeLessThan(0.15);
    expect(cosine(embedder.embedSync('financial reports for the quarter'), finance)).toBeGreaterThan(0.5);
  });

  it('gives morphological variants a high cosine', () => {
    const connection = embedder.embedSync('connection');
    expect(cosine(connection, embedder.embedSync('connections'))).toBeGreaterThan(0.6);
    expect(cosine(connection, embedder.embedSync('connected'))).toBeGreaterThan(0.5);
    expect(Math.abs(cosine(connection, embedder.embedSync('banana')))).toBeLessThan(0.15);
  });

  it('works on Arabic: diacritics and spelling variants do not matter, related beats unrelated', () => {
    expect(cosine(embedder.embedSync('كِتَابٌ'), embedder.embedSync('كتاب'))).toBeGreaterThan(0.99);
    expect(cosine(embedder.embedSync('أحمد'), embedder.embedSync('احمد'))).toBeGreaterThan(0.99);
    const school1 = embedder.embedSync('ذهب الولد إلى المدرسة');
    const school2 = embedder.embedSync('الولد في المدرسة');
    const oil = embedder.embedSync('ارتفعت أسعار النفط');
    expect(norm(school1)).toBeCloseTo(1, 5);
    expect(cosine(school1, school2)).toBeGreaterThan(0.4);
    expect(Math.abs(cosine(school1, oil))).toBeLessThan(0.15);
  });

  it('handles characters outside the BMP without splitting surrogate pairs', () => {
    const v = new HashEmbedder({ analyzer: whitespace }).embedSync('𠀀𠀁𠀂 𝔘𝔫𝔦');
    expect(norm(v)).toBeCloseTo(1, 5);
  });

  it('can leave out bigrams and character n-grams', () => {
    const wordsOnly = new HashEmbedder({ charNGrams: false, bigrams: false });
    expect(wordsOnly.name).toContain('chars=off');
    // With words only, the order of words does not matter.
    expect(cosine(wordsOnly.embedSync('cat mat'), wordsOnly.embedSync('mat cat'))).toBeCloseTo(1, 5);
    // Bigrams make it matter.
    const withBigrams = new HashEmbedder({ charNGrams: false });
    expect(
      cosine(withBigrams.embedSync('red wine white house'), withBigrams.embedSync('white wine red house')),
    ).toBeLessThan(0.95);
  });

  it('names its configuration', () => {
    expect(embedder.name).toMatch(
      /^hash-v1\(dim=384;words=1;bigrams=0.5;chars=3-5:0.5;seed=0;analyzer=.+\)$/,
    );
  });

  it('rejects bad options and inputs', async () => {
    expect(() => new HashEmbedder({ dimension: 0 })).toThrow(InvalidArgumentError);
    expect(() => new HashEmbedder({ dimension: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => new HashEmbedder({ charNGrams: [4, 2] })).toThrow(/charNGrams/);
    expect(() => new HashEmbedder({ charNGrams: [0, 2] })).toThrow(InvalidArgumentError);
    expect(() => new HashEmbedder({ seed: 0.5 })).toThrow(/seed/);
    expect(() => new HashEmbedder({ weights: { words: -1 } })).toThrow(/weights.words/);
    expect(() => new HashEmbedder({ weights: { words: 0, charNGrams: 0 }, bigrams: false })).toThrow(
      /weights/,
    );
    expect(() => new HashEmbedder({ batchSize: 0 })).toThrow(/batchSize/);
    await expect(embedder.embed(['ok', 3 as never])).rejects.toThrow(/texts\[1\]/);
    await expect(embedder.embed('text' as never)).rejects.toThrow(InvalidArgumentError);
  });

  it('respects an AbortSignal between batches', async () => {
    let analysed = 0;
    const counting: Analyzer = {
      name: 'counting',
      analyze: (text) => {
        analysed++;
        return whitespace.analyze(text);
      },
    };
    const e = new HashEmbedder({ analyzer: counting, batchSize: 2, charNGrams: false });
    const before = new AbortController();
    before.abort(new Error('stop'));
    await expect(e.embed(['a', 'b'], { signal: before.signal })).rejects.toSatisfy(AbortedError.isInstance);
    await expect(e.embedQuery('a', { signal: before.signal })).rejects.toSatisfy(AbortedError.isInstance);
    expect(analysed).toBe(0);

    const during = new AbortController();
    const pending = e.embed(['a', 'b', 'c', 'd', 'e', 'f'], { signal: during.signal });
    // The first batch ran synchronously; the abort lands before the next batch.
    during.abort();
    await expect(pending).rejects.toSatisfy(AbortedError.isInstance);
    expect(analysed).toBe(2);
  });

  it('gives a long text the same vector whatever was embedded before (no state leaks)', () => {
    const words = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`);
    const long = words.join(' ');
    const fresh = new HashEmbedder().embedSync(long);
    const used = new HashEmbedder();
    used.embedSync(words.slice(100).reverse().join(' '));
    used.embedSync('short');
    expect(used.embedSync(long)).toEqual(fresh);
    expect(norm(fresh)).toBeCloseTo(1, 5);
    expect(cosine(fresh, embedder.embedSync(`${long} extra`))).toBeGreaterThan(0.95);
  });

  it('embeds many texts in order', async () => {
    const texts = Array.from({ length: 600 }, (_, i) => `document number ${i}`);
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(600);
    expect(vectors[599]).toEqual(embedder.embedSync('document number 599'));
  });
});

describe('hashStart', () => {
  it('separates seeds and kinds', () => {
    expect(hashStart(0, 1)).not.toBe(hashStart(0, 2));
    expect(hashStart(0, 1)).not.toBe(hashStart(1, 1));
  });
});
