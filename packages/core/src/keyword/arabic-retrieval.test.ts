import { describe, expect, it } from 'vitest';
import { KeywordRetriever } from './keyword-retriever.js';

// Default analyser: English and Arabic in the same index, no configuration.
const retriever = new KeywordRetriever();
retriever.add([
  { id: 'diacritics', text: 'إِنَّ المَكْتَبَةَ الإِسْلَامِيَّةَ فِي القَاهِرَةِ تَضُمُّ مَخْطُوطَاتٍ نَادِرَةً' },
  { id: 'bare', text: 'المستشفي الجامعي في الاسكندريه يستقبل المرضي' },
  { id: 'mixed', text: 'The national library of Egypt (دار الكتب المصرية) holds rare manuscripts and maps.' },
  { id: 'english', text: 'Hospitals in Alexandria receive patients from the whole region.' },
  { id: 'other', text: 'سوق الذهب في دبي يجذب السياح' },
]);

const top = async (query: string) =>
  (await retriever.retrieve(query, { k: 3 })).hits.map((hit) => hit.chunk.id);

describe('Arabic and mixed-language retrieval with the default analyser', () => {
  it('finds a document written with diacritics and hamza forms from a bare query', async () => {
    expect((await top('المكتبه الاسلاميه'))[0]).toBe('diacritics');
    expect((await top('مخطوطات القاهرة'))[0]).toBe('diacritics');
  });

  it('finds a bare document from a query written with diacritics, hamza and alef maqsura', async () => {
    expect((await top('المُسْتَشْفَى الجَامِعِيّ'))[0]).toBe('bare');
    expect((await top('الإسكندرية'))[0]).toBe('bare');
  });

  it('finds a mixed Arabic and English document by a query in either language', async () => {
    expect((await top('دار الكتب'))[0]).toBe('mixed');
    expect((await top('rare manuscripts maps'))[0]).toBe('mixed');
    expect(await top('library Egypt')).toEqual(['mixed']);
  });

  it('returns no hits for an all-stop-word query in either language', async () => {
    expect(await top('the of and')).toEqual([]);
    expect(await top('في من هذه التي')).toEqual([]);
    expect(await top('')).toEqual([]);
  });
});
