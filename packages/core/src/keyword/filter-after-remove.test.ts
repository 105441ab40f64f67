import { describe, expect, it } from 'vitest';
import { BM25Index } from './bm25-index.js';
import { KeywordRetriever } from './keyword-retriever.js';

// Found by the soak run (concurrent deletes and filtered queries): a removed document keeps its
// postings until compaction, and the filter callback was offered it with no id.
describe('a filtered keyword query after removals', () => {
  it('never offers a removed document to the filter, and finds the live ones', async () => {
    const retriever = new KeywordRetriever();
    retriever.add([
      { id: 'a', text: 'solar power', metadata: { w: 1 } },
      { id: 'b', text: 'solar wind', metadata: { w: 2 } },
    ]);
    retriever.remove(['a']);
    expect((await retriever.retrieve('solar', { filter: { w: 1 } })).hits).toEqual([]);
    expect(
      (await retriever.retrieve('solar', { filter: { w: { $ne: 1 } } })).hits.map((hit) => hit.chunk.id),
    ).toEqual(['b']);
    retriever.add([{ id: 'a', text: 'solar again', metadata: { w: 1 } }]);
    expect((await retriever.retrieve('solar', { filter: { w: 1 } })).hits.map((hit) => hit.chunk.id)).toEqual(
      ['a'],
    );
  });

  it('BM25Index.search calls accept with live ids only', () => {
    const index = new BM25Index();
    index.add([
      { id: 'a', text: 'solar power' },
      { id: 'b', text: 'solar wind' },
    ]);
    index.remove(['a']);
    const offered: unknown[] = [];
    index.search('solar', 5, {
      accept: (id) => {
        offered.push(id);
        return true;
      },
    });
    expect(offered).toEqual(['b']);
  });
});
