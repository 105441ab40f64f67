/// <reference lib="dom" />
// The web page of `zerda demo --web`: the sample corpus indexed in the page itself (a collection
// over the in-memory store, no server work, no network), a question box, the filter, and keyword,
// vector and hybrid results side by side with their explanations. Text is shown with `dir="auto"`,
// so Arabic passages and questions read right to left.
import type { Collection, FilterInput, ScoredChunk, SearchResult } from '@zerda/core';
import { demoQueries } from '../sample/passages.js';
import { openDemoCollection } from './demo-app.js';

interface PageElements {
  form: HTMLFormElement;
  query: HTMLInputElement;
  filter: HTMLInputElement;
  status: HTMLElement;
  columns: Record<'keyword' | 'vector' | 'hybrid', HTMLElement>;
  examples: HTMLElement;
}

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderHit(hit: ScoredChunk): HTMLElement {
  const item = element('li', { class: 'hit', 'data-id': hit.chunk.id });
  const head = element('div', { class: 'head' });
  head.append(
    element('span', { class: 'rank' }, `#${hit.rank}`),
    element('code', {}, hit.chunk.id),
    element('span', { class: 'score' }, hit.score.toFixed(3)),
  );
  const text = element('p', { class: 'text', dir: 'auto' }, hit.chunk.text);
  const meta = element(
    'div',
    { class: 'meta' },
    Object.entries(hit.chunk.metadata ?? {})
      .map(([key, value]) => `${key}: ${String(value)}`)
      .join(' · '),
  );
  const signals = Object.entries(hit.ranks ?? {})
    .map(
      ([signal, rank]) =>
        `${signal} #${rank} (${(hit.scores?.[signal as keyof typeof hit.scores] ?? 0).toFixed(3)})`,
    )
    .join(', ');
  const why = element(
    'div',
    { class: 'why' },
    [signals, hit.explanation?.description].filter(Boolean).join(' — '),
  );
  item.append(head, text, meta, why);
  return item;
}

function renderColumn(column: HTMLElement, result: SearchResult | Error): void {
  const list = column.querySelector('ol') as HTMLOListElement;
  const notes = column.querySelector('.notes') as HTMLElement;
  list.replaceChildren();
  if (result instanceof Error) {
    notes.textContent = result.message;
    return;
  }
  list.append(...result.hits.map(renderHit));
  notes.textContent = `${result.hits.length} hits in ${result.latencyMs.toFixed(1)} ms${result.warnings.length ? ` · ${result.warnings.map((w) => w.message).join('; ')}` : ''}`;
}

async function search(collection: Collection, elements: PageElements): Promise<void> {
  const text = elements.query.value.trim();
  if (text === '') return;
  let filter: FilterInput | undefined;
  const filterText = elements.filter.value.trim();
  if (filterText !== '') {
    try {
      filter = JSON.parse(filterText) as FilterInput;
    } catch (error) {
      elements.status.textContent = `The filter is not JSON: ${(error as Error).message}`;
      return;
    }
  }
  elements.status.textContent = 'Searching…';
  const modes = ['keyword', 'vector', 'hybrid'] as const;
  const results = await Promise.all(
    modes.map((mode) =>
      collection
        .retrieve(text, { mode, k: 5, ...(filter ? { filter } : {}) })
        .catch((error: unknown) => error as Error),
    ),
  );
  modes.forEach((mode, index) => {
    renderColumn(elements.columns[mode], results[index] as SearchResult | Error);
  });
  elements.status.textContent = `“${text}”${filter ? ` with filter ${JSON.stringify(filter)}` : ''}`;
  document.body.dataset.searched = String(Number(document.body.dataset.searched ?? 0) + 1);
}

function build(): PageElements {
  const style = element(
    'style',
    {},
    `
    body { font: 15px/1.45 system-ui, 'Noto Sans', 'Noto Sans Arabic', sans-serif; margin: 24px; color: #1d232a; background: #fafaf7; }
    h1 { font-size: 22px; margin: 0 0 4px; } .lede { margin: 0 0 16px; color: #4a5560; }
    form { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 8px; }
    input { font: inherit; padding: 7px 9px; border: 1px solid #b9c2ca; border-radius: 6px; }
    #query { flex: 2 1 320px; } #filter { flex: 1 1 240px; font-family: ui-monospace, monospace; font-size: 13px; }
    button { font: inherit; padding: 7px 14px; border-radius: 6px; border: 1px solid #2f6f5e; background: #2f6f5e; color: #fff; cursor: pointer; }
    .examples button { background: #fff; color: #2f6f5e; margin: 0 6px 6px 0; }
    #status { color: #4a5560; margin: 6px 0 14px; min-height: 1.4em; }
    .columns { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 14px; }
    section { background: #fff; border: 1px solid #dde3e8; border-radius: 8px; padding: 10px 12px; }
    h2 { font-size: 16px; margin: 0 0 6px; } ol { list-style: none; padding: 0; margin: 0; }
    .hit { border-top: 1px solid #eef1f3; padding: 8px 0; } .head { display: flex; gap: 8px; align-items: baseline; }
    .rank { color: #2f6f5e; font-weight: 600; } .score { margin-inline-start: auto; font-variant-numeric: tabular-nums; }
    .text { margin: 4px 0; } .meta, .why, .notes { font-size: 12px; color: #5d6873; }
  `,
  );
  document.head.append(style);
  const form = element('form');
  const query = element('input', {
    id: 'query',
    dir: 'auto',
    placeholder: 'Ask a question (English or Arabic)…',
    autocomplete: 'off',
  });
  const filter = element('input', {
    id: 'filter',
    placeholder: 'Filter, e.g. {"lang": "ar"}',
    autocomplete: 'off',
  });
  form.append(query, filter, element('button', { type: 'submit' }, 'Search'));
  const examples = element('div', { class: 'examples' });
  const status = element('div', { id: 'status' }, 'Indexing the sample…');
  const grid = element('div', { class: 'columns' });
  const columns = Object.fromEntries(
    (['keyword', 'vector', 'hybrid'] as const).map((mode) => {
      const section = element('section', { id: mode });
      section.append(
        element(
          'h2',
          {},
          { keyword: 'Keyword (BM25)', vector: 'Vector (hash embedder)', hybrid: 'Hybrid (fused)' }[mode],
        ),
        element('div', { class: 'notes' }),
        element('ol'),
      );
      grid.append(section);
      return [mode, section];
    }),
  ) as PageElements['columns'];
  document.body.append(
    element('h1', {}, 'Zerda: hybrid retrieval in your browser'),
    element(
      'p',
      { class: 'lede' },
      'The bundled sample (English, Arabic, mixed) is indexed in this page: BM25, vectors and fusion run here, with no server and no network.',
    ),
    form,
    examples,
    status,
    grid,
  );
  return { form, query, filter, status, columns, examples };
}

async function main(): Promise<void> {
  const elements = build();
  const { collection } = await openDemoCollection();
  elements.status.textContent = `${await collection.count()} passages indexed. Type a question, or pick one:`;
  for (const example of demoQueries) {
    const button = element('button', { type: 'button', dir: 'auto' }, example.text);
    button.addEventListener('click', () => {
      elements.query.value = example.text;
      elements.filter.value = example.filter ? JSON.stringify(example.filter) : '';
      void search(collection, elements);
    });
    elements.examples.append(button);
  }
  elements.form.addEventListener('submit', (event) => {
    event.preventDefault();
    void search(collection, elements);
  });
  document.body.dataset.ready = 'true';
}

void main();
