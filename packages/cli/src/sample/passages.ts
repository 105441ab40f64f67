import type { Chunk, FilterInput } from '@zerda/core';

/** Metadata every sample passage carries. */
export interface SamplePassage extends Chunk {
  metadata: { category: string; year: number; lang: 'en' | 'ar' | 'mixed' };
}

/**
 * A small bundled corpus for `zerda demo`: short passages in English, in Arabic and in a mix of
 * both, with metadata to filter on (category, year, language).
 */
export const samplePassages: readonly SamplePassage[] = [
  {
    id: 'en-01',
    text: 'BM25 ranks documents by how often the query terms occur in them, discounted by document length and by how common each term is across the collection.',
    metadata: { category: 'search', year: 2019, lang: 'en' },
  },
  {
    id: 'en-02',
    text: 'An inverted index maps every term to the list of documents that contain it, so a search engine reads only the postings of the query terms.',
    metadata: { category: 'search', year: 2018, lang: 'en' },
  },
  {
    id: 'en-03',
    text: 'Stemming reduces words to a common root, so that "running", "runs" and "run" match the same index term.',
    metadata: { category: 'search', year: 2017, lang: 'en' },
  },
  {
    id: 'en-04',
    text: 'Stop words such as "the", "of" and "and" carry little meaning and are usually left out of a keyword index.',
    metadata: { category: 'search', year: 2016, lang: 'en' },
  },
  {
    id: 'en-05',
    text: 'A vector database stores embeddings and answers nearest-neighbour queries, finding passages that are close in meaning rather than in wording.',
    metadata: { category: 'databases', year: 2023, lang: 'en' },
  },
  {
    id: 'en-06',
    text: 'Hybrid retrieval combines keyword search with dense vector search, because each finds relevant passages that the other misses.',
    metadata: { category: 'search', year: 2024, lang: 'en' },
  },
  {
    id: 'en-07',
    text: 'Reciprocal rank fusion merges ranked lists by summing one over sixty plus the rank of each document in each list.',
    metadata: { category: 'search', year: 2022, lang: 'en' },
  },
  {
    id: 'en-08',
    text: 'Retrieval-augmented generation gives a language model passages from your own documents, so that its answers can cite real sources.',
    metadata: { category: 'ml', year: 2024, lang: 'en' },
  },
  {
    id: 'en-09',
    text: 'A reranker re-scores a short list of candidates with a slower but more accurate model before the final answer is assembled.',
    metadata: { category: 'ml', year: 2023, lang: 'en' },
  },
  {
    id: 'en-10',
    text: 'HNSW builds a layered graph over the vectors and searches it greedily, trading a little recall for a large gain in speed.',
    metadata: { category: 'databases', year: 2021, lang: 'en' },
  },
  {
    id: 'en-11',
    text: 'Metadata filters restrict a search to passages whose fields match, for example only documents published after 2020 in English.',
    metadata: { category: 'databases', year: 2022, lang: 'en' },
  },
  {
    id: 'en-12',
    text: 'nDCG at ten rewards a ranking for placing the most relevant documents at the top, discounting gains logarithmically by rank.',
    metadata: { category: 'search', year: 2020, lang: 'en' },
  },
  {
    id: 'en-13',
    text: 'Embeddings are dense vectors produced by a neural network; texts with similar meaning get vectors with a high cosine similarity.',
    metadata: { category: 'ml', year: 2021, lang: 'en' },
  },
  {
    id: 'en-14',
    text: 'The fennec fox, also called the zerda, is the smallest fox in the world and lives in the sand deserts of North Africa.',
    metadata: { category: 'nature', year: 2015, lang: 'en' },
  },
  {
    id: 'en-15',
    text: 'The fennec fox uses its very large ears to hear prey moving under the sand and to shed heat in the desert.',
    metadata: { category: 'nature', year: 2016, lang: 'en' },
  },
  {
    id: 'en-16',
    text: 'Camels store fat in their humps and can go for days without drinking water while crossing the desert.',
    metadata: { category: 'nature', year: 2017, lang: 'en' },
  },
  {
    id: 'en-17',
    text: 'Date palms grow in desert oases, and their sweet fruit has been a staple food of the region for thousands of years.',
    metadata: { category: 'nature', year: 2018, lang: 'en' },
  },
  {
    id: 'en-18',
    text: 'The Library of Alexandria was one of the largest libraries of the ancient world, collecting scrolls from every port of the Mediterranean.',
    metadata: { category: 'history', year: 2015, lang: 'en' },
  },
  {
    id: 'en-19',
    text: 'The House of Wisdom in Baghdad translated Greek works of mathematics, astronomy and medicine into Arabic.',
    metadata: { category: 'history', year: 2016, lang: 'en' },
  },
  {
    id: 'en-20',
    text: 'Al-Khwarizmi wrote a treatise on solving equations; the word algorithm comes from his name.',
    metadata: { category: 'history', year: 2019, lang: 'en' },
  },
  {
    id: 'en-21',
    text: 'The astrolabe let astronomers and sailors measure the altitude of stars and tell the time at night.',
    metadata: { category: 'astronomy', year: 2020, lang: 'en' },
  },
  {
    id: 'en-22',
    text: 'Many stars carry Arabic names, such as Aldebaran, Betelgeuse and Altair, from medieval star catalogues.',
    metadata: { category: 'astronomy', year: 2021, lang: 'en' },
  },
  {
    id: 'en-23',
    text: 'A solar eclipse happens when the Moon passes between the Sun and the Earth and hides the Sun for a few minutes.',
    metadata: { category: 'astronomy', year: 2024, lang: 'en' },
  },
  {
    id: 'en-24',
    text: 'To make hummus, blend cooked chickpeas with tahini, lemon juice, garlic and a little olive oil until smooth.',
    metadata: { category: 'cooking', year: 2019, lang: 'en' },
  },
  {
    id: 'en-25',
    text: 'Bread dough rises because yeast ferments sugars and releases carbon dioxide, which the gluten network traps.',
    metadata: { category: 'cooking', year: 2020, lang: 'en' },
  },
  {
    id: 'en-26',
    text: 'Cardamom gives Arabic coffee its distinctive aroma; the coffee is served in small cups without handles.',
    metadata: { category: 'cooking', year: 2022, lang: 'en' },
  },
  {
    id: 'en-27',
    text: 'Chunking splits long documents into passages of a few hundred words, so that each passage can be embedded and retrieved on its own.',
    metadata: { category: 'ml', year: 2023, lang: 'en' },
  },
  {
    id: 'en-28',
    text: 'Query expansion adds synonyms and related terms to a search query to find documents that use different words.',
    metadata: { category: 'search', year: 2018, lang: 'en' },
  },
  {
    id: 'en-29',
    text: 'A context window limits how much text a language model can read at once, so retrieved passages must fit a token budget.',
    metadata: { category: 'ml', year: 2024, lang: 'en' },
  },
  {
    id: 'en-30',
    text: 'Precision counts how many retrieved documents are relevant; recall counts how many relevant documents were retrieved.',
    metadata: { category: 'search', year: 2017, lang: 'en' },
  },
  {
    id: 'ar-01',
    text: 'استرجاع المعلومات هو علم البحث عن الوثائق ذات الصلة في مجموعات كبيرة من النصوص.',
    metadata: { category: 'search', year: 2019, lang: 'ar' },
  },
  {
    id: 'ar-02',
    text: 'تعتمد محركات البحث على الفهرس المقلوب لإيجاد الكلمات في ملايين الصفحات بسرعة.',
    metadata: { category: 'search', year: 2020, lang: 'ar' },
  },
  {
    id: 'ar-03',
    text: 'ثعلب الفنك، ويسمى أيضًا الزردة، هو أصغر الثعالب، يعيش في الصحراء الكبرى وله أذنان كبيرتان تساعدانه على تبريد جسمه.',
    metadata: { category: 'nature', year: 2016, lang: 'ar' },
  },
  {
    id: 'ar-04',
    text: 'تُقدَّم القهوة العربية مع التمر رمزًا للضيافة والكرم، وتُحضَّر بالهيل.',
    metadata: { category: 'cooking', year: 2021, lang: 'ar' },
  },
  {
    id: 'ar-05',
    text: 'تقع مدينة البتراء في جنوب الأردن، وقد نُحتت في الصخر الوردي قبل أكثر من ألفي عام.',
    metadata: { category: 'history', year: 2018, lang: 'ar' },
  },
  {
    id: 'ar-06',
    text: 'يستخدم التعلم الآلي البيانات لتدريب نماذج قادرة على التنبؤ وتصنيف النصوص.',
    metadata: { category: 'ml', year: 2022, lang: 'ar' },
  },
  {
    id: 'mx-01',
    text: 'نموذج BM25 هو دالة ترتيب تستخدمها محركات البحث مثل Lucene و Elasticsearch لترتيب الوثائق.',
    metadata: { category: 'search', year: 2021, lang: 'mixed' },
  },
  {
    id: 'mx-02',
    text: 'Retrieval-augmented generation أو RAG يجمع بين البحث في الوثائق ونموذج لغوي كبير لتوليد إجابات موثوقة.',
    metadata: { category: 'ml', year: 2024, lang: 'mixed' },
  },
  {
    id: 'mx-03',
    text: 'قاعدة البيانات المتجهية (vector database) تخزن الـ embeddings وتبحث عن أقرب الجيران بالمعنى.',
    metadata: { category: 'databases', year: 2023, lang: 'mixed' },
  },
  {
    id: 'mx-04',
    text: 'الـ tokenization للنصوص العربية يحتاج إلى تطبيع الألف والياء وإزالة التشكيل قبل الفهرسة.',
    metadata: { category: 'search', year: 2022, lang: 'mixed' },
  },
];

/** A demo query: its text, what kind of query it is, and a metadata filter where it has one. */
export interface DemoQuery {
  text: string;
  label?: string;
  filter?: FilterInput;
}

/** The queries `zerda demo` runs when it is given none: English, Arabic, mixed, and filtered. */
export const demoQueries: readonly DemoQuery[] = [
  { label: 'English', text: 'how does BM25 rank documents' },
  { label: 'Arabic', text: 'كيف تعمل محركات البحث' },
  { label: 'mixed', text: 'BM25 محركات البحث' },
  {
    label: 'English, filtered',
    text: 'vector search for retrieval',
    filter: { lang: 'en', year: { $gte: 2022 } },
  },
];

/** The texts of the demo queries. */
export const sampleQueries: readonly string[] = demoQueries.map((query) => query.text);
