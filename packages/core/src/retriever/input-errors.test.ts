import { describe, expect, it } from 'vitest';
import { ContextEngine } from '../context/index.js';
import {
  ChunkValidationError,
  FilterError,
  InvalidArgumentError,
  RetrievalError,
  ZerdaError,
} from '../errors/index.js';
import { parseFilter } from '../filter/index.js';
import { BM25Index, KeywordRetriever } from '../keyword/index.js';
import { type Chunk, normalizeChunks, type ScoredChunk } from '../model/index.js';
import { Reranker } from '../rerank/index.js';
import { defaultAnalyzer, tokenize } from '../text/index.js';
import { BaseRetriever, type RetrieveChunksOptions } from './base-retriever.js';
import { HybridRetriever } from './hybrid-retriever.js';
import { MetadataRetriever } from './metadata-retriever.js';

/*
 * Errors name the user's mistake: invalid input to any retriever is the same typed error whichever
 * retriever it is given to (a hybrid one included), raised before any branch runs; only real branch
 * failures become a RetrievalError or warnings.
 */

const chunks: Chunk[] = [
  { id: 'a', text: 'solar panels convert sunlight', metadata: { year: 2020, category: 'energy' } },
  { id: 'b', text: 'wind power and solar leases', metadata: { year: 2022, category: 'energy' } },
];

/** A branch that never reads the filter and counts its calls. */
class CountingRetriever extends BaseRetriever {
  readonly name = 'counting';
  calls = 0;
  protected async retrieveChunks(_query: string, _k: number, _options: RetrieveChunksOptions) {
    this.calls++;
    return [] as ScoredChunk[];
  }
}

/** A branch whose store refuses the filter (as a store in strict mode does). */
class RefusingRetriever extends BaseRetriever {
  readonly name = 'refusing';
  protected async retrieveChunks(): Promise<ScoredChunk[]> {
    throw new FilterError({
      path: 'year',
      reason: 'unsupported',
      message: 'this store cannot evaluate it (strict mode)',
    });
  }
}

function retrievers() {
  const keyword = new KeywordRetriever();
  keyword.add(chunks);
  const metadata = new MetadataRetriever({ source: keyword });
  const counting = new CountingRetriever();
  const hybrid = new HybridRetriever({
    keyword,
    metadata,
    branches: [{ name: 'counting', retriever: counting }],
  });
  return { keyword, metadata, hybrid, counting };
}

/** The error a call throws (or undefined). */
async function caught(run: () => unknown): Promise<unknown> {
  try {
    await run();
    return undefined;
  } catch (error) {
    return error;
  }
}

const badFilters: Array<[string, unknown, RegExp]> = [
  ['an unknown operator', { year: { $regex: '20' } }, /year\.\$regex/],
  ['a string', 'year=2020', /must be an object/],
  ['a null value', { year: null }, /at 'year'/],
  ['an empty $or', { $or: [] }, /non-empty list/],
];

describe('a bad filter is a FilterError from every retriever, before any branch runs', () => {
  for (const [what, filter, message] of badFilters) {
    it(`${what}`, async () => {
      const all = retrievers();
      for (const [name, retriever] of Object.entries({
        keyword: all.keyword,
        metadata: all.metadata,
        hybrid: all.hybrid,
      })) {
        const error = await caught(() => retriever.retrieve('solar', { filter: filter as never }));
        expect(FilterError.isInstance(error), `${name}: ${String(error)}`).toBe(true);
        expect(RetrievalError.isInstance(error)).toBe(false);
        expect((error as Error).message).toMatch(message);
        const batch = await caught(() =>
          retriever.batchRetrieve(['solar', 'wind'], { filter: filter as never }),
        );
        expect(FilterError.isInstance(batch), `${name} batch: ${String(batch)}`).toBe(true);
      }
      // No branch ran, not even one that ignores filters.
      expect(all.counting.calls).toBe(0);
    });
  }

  it('the context engine passes it on as it is', async () => {
    const engine = new ContextEngine({ retriever: retrievers().hybrid });
    const error = await caught(() =>
      engine.buildContext('solar?', { filter: { year: { $regex: '2' } } as never }),
    );
    expect(FilterError.isInstance(error), String(error)).toBe(true);
  });

  it('a filter a branch refuses is the FilterError too, not a branch failure', async () => {
    const keyword = new KeywordRetriever();
    keyword.add(chunks);
    const hybrid = new HybridRetriever({
      keyword,
      branches: [{ name: 'strict', retriever: new RefusingRetriever() }],
    });
    const error = await caught(() => hybrid.retrieve('solar', { filter: { year: 2020 } }));
    expect(FilterError.isInstance(error), String(error)).toBe(true);
  });

  it('a real branch failure is still a warning, and all failing a RetrievalError', async () => {
    class Failing extends BaseRetriever {
      readonly name = 'failing';
      protected async retrieveChunks(): Promise<ScoredChunk[]> {
        throw new Error('connection refused');
      }
    }
    const keyword = new KeywordRetriever();
    keyword.add(chunks);
    const partial = await new HybridRetriever({
      keyword,
      branches: [{ name: 'failing', retriever: new Failing() }],
    }).retrieve('solar', { filter: { category: 'energy' } });
    expect(partial.hits.length).toBeGreaterThan(0);
    expect(partial.warnings.map((warning) => warning.source)).toContain('failing');
    const none = await caught(() =>
      new HybridRetriever({ branches: [{ name: 'failing', retriever: new Failing() }] }).retrieve('solar'),
    );
    expect(RetrievalError.isInstance(none)).toBe(true);
  });

  it('parseFilter refuses a filter nested too deep, or one that refers to itself, without overflowing', () => {
    let deep: Record<string, unknown> = { year: 2020 };
    for (let i = 0; i < 20_000; i++) deep = { $not: deep };
    expect(() => parseFilter(deep)).toThrow(/more than 64 levels/);
    const cyclic: Record<string, unknown> = { year: 2020 };
    cyclic.$and = [cyclic];
    const error = (() => {
      try {
        parseFilter(cyclic);
      } catch (e) {
        return e;
      }
    })();
    expect(FilterError.isInstance(error), String(error)).toBe(true);
    // A deep but reasonable filter still parses.
    let fine: Record<string, unknown> = { year: 2020 };
    for (let i = 0; i < 30; i++) fine = { $not: fine };
    expect(parseFilter(fine).kind).toBe('not');
  });
});

describe('other mistakes are typed errors that name the argument', () => {
  const invalid = async (run: () => unknown, argument: string) => {
    const error = await caught(run);
    expect(InvalidArgumentError.isInstance(error), String(error)).toBe(true);
    expect((error as InvalidArgumentError).argument).toBe(argument);
  };

  it('retrieve and batchRetrieve', async () => {
    const { keyword, hybrid, counting } = retrievers();
    for (const retriever of [keyword, hybrid]) {
      await invalid(() => retriever.retrieve('solar', null as never), 'options');
      await invalid(() => retriever.batchRetrieve('solar' as never), 'queries');
      await invalid(() => retriever.batchRetrieve(['solar', 7] as never), 'queries[1]');
    }
    expect(counting.calls).toBe(0);
  });

  it('chunks that are not a list', async () => {
    const keyword = new KeywordRetriever();
    await invalid(() => keyword.add(undefined as never), 'chunks');
    await invalid(() => keyword.add({ id: 'a', text: 'x' } as never), 'chunks');
    await invalid(() => keyword.add('text' as never), 'chunks');
    await invalid(() => normalizeChunks(null as never), 'chunks');
    expect(ChunkValidationError.isInstance(await caught(() => keyword.add([null])))).toBe(true);
  });

  it('ids to remove that are not a list of strings (a string is not split into characters)', async () => {
    const keyword = new KeywordRetriever();
    keyword.add([
      { id: 'a', text: 'x' },
      { id: 'ab', text: 'y' },
    ]);
    await invalid(() => keyword.remove('ab' as never), 'ids');
    await invalid(() => keyword.remove(undefined as never), 'ids');
    await invalid(() => keyword.index.remove([42] as never), 'ids[0]');
    expect(keyword.size).toBe(2);
    expect(keyword.remove(['ab'])).toBe(1);
  });

  it('BM25Index.search, the analyser and the tokenizer take strings', async () => {
    await invalid(() => new BM25Index().search(null as never, 5), 'query');
    await invalid(() => defaultAnalyzer.analyze(null as never), 'text');
    await invalid(() => tokenize(42 as never), 'text');
  });

  it('Reranker.rerank', async () => {
    const reranker = new Reranker();
    const hit: ScoredChunk = { chunk: chunks[0]!, score: 1, rank: 1, retriever: 'x', scores: {}, ranks: {} };
    await invalid(() => reranker.rerank(undefined as never, []), 'query');
    await invalid(() => reranker.rerank('q', null as never), 'candidates');
    await invalid(() => reranker.rerank('q', [{}] as never), 'candidates[0]');
    await invalid(() => reranker.rerank('q', [hit], { k: -3 }), 'k');
    expect((await reranker.rerank('q', [hit], { k: 1 })).hits).toHaveLength(1);
  });

  it('every error above is a Zerda error', async () => {
    const errors = await Promise.all([
      caught(() => new KeywordRetriever().retrieve('x', { k: 0 })),
      caught(() => new KeywordRetriever().add(undefined as never)),
      caught(() => parseFilter([1])),
    ]);
    for (const error of errors) expect(ZerdaError.isInstance(error), String(error)).toBe(true);
  });
});
