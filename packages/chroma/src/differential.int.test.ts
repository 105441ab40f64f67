import {
  type Chunk,
  type Embedder,
  evaluateFilter,
  type FilterNode,
  type FilterRecord,
  type NativeFilter,
  resolveFilter,
  serializeFilter,
  VectorRetriever,
} from '@zerda/core';
import { filterNodeArbitraryWith, filterRecordArbitrary } from '@zerda/core/testing';
import { seededUnitVectors } from '@zerda/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ChromaWhere } from './chroma-filter.js';
import { createChromaStore } from './chroma-store.js';

const RECORDS = 80;
const PUSHED_FILTERS = 500;

/** Runs `task` over `items`, `concurrency` at a time. */
async function forEachConcurrently<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

const ids = (records: readonly FilterRecord[]) => records.map((record) => record.id).sort();

function chunkOf(record: FilterRecord): Chunk {
  const chunk: Chunk = { id: record.id, text: `record ${record.id}` };
  if (record.docId !== undefined) chunk.docId = record.docId;
  if (record.metadata !== undefined) chunk.metadata = { ...record.metadata } as Chunk['metadata'];
  return chunk;
}

/**
 * Random filters against a real Chroma server: each filter's Chroma `where` (from the chroma
 * convention) must select exactly the records core's reference evaluator selects. The records
 * mix ints and fractions (around chroma-core/chroma#7491), booleans, strings, missing fields, a
 * docId in either place and records without metadata.
 */
describe('Chroma where vs the reference evaluator (differential)', () => {
  const store = createChromaStore({
    url: inject('chromaUrl'),
    collection: `differential-${crypto.randomUUID()}`,
    dimension: 8,
  });
  const records: FilterRecord[] = fc
    .sample(filterRecordArbitrary({ arrays: false }), { numRuns: RECORDS, seed: 7 })
    .map((record, i) => ({ ...record, id: `r${i}` }));
  const [query, ...vectors] = seededUnitVectors(8, RECORDS + 1, 8) as [number[], ...number[][]];

  beforeAll(async () => {
    await store.add(records.map(chunkOf), { embeddings: vectors });
  });
  afterAll(async () => {
    await store.deleteCollection();
  });

  it(`selects the same ids for ${PUSHED_FILTERS} random filters pushed whole to Chroma`, {
    timeout: 120_000,
  }, async () => {
    // The language minus what Chroma cannot take ($exists, the id pseudo-field), nested with
    // $and, $or and $not; a $not around a range stays client-side, so such filters are skipped.
    const arbitrary = filterNodeArbitraryWith({
      fields: ['a', 'b', 'c', 'docId'],
      leaves: ['eq', 'ne', 'range', 'in', 'nin'],
    });
    const pushable: FilterNode[] = [];
    for (const node of fc.sample(arbitrary, { numRuns: 3 * PUSHED_FILTERS, seed: 11 })) {
      const resolved = resolveFilter(store, node);
      if (resolved.pushed !== undefined && resolved.residual === undefined) pushable.push(node);
      if (pushable.length === PUSHED_FILTERS) break;
    }
    expect(pushable).toHaveLength(PUSHED_FILTERS);

    const mismatches: string[] = [];
    let nonTrivial = 0;
    await forEachConcurrently(pushable, 8, async (node) => {
      const expected = ids(records.filter((record) => evaluateFilter(node, record)));
      if (expected.length > 0 && expected.length < RECORDS) nonTrivial++;
      const { native } = resolveFilter(store, node);
      const { hits } = await store.search(query, {
        topK: RECORDS,
        nativeFilter: native as NativeFilter<ChromaWhere> | undefined,
      });
      const got = hits.map((hit) => hit.chunk.id).sort();
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        mismatches.push(
          `${JSON.stringify(serializeFilter(node))} -> where ${JSON.stringify(native?.filter)}: expected ${expected.length} ids, got ${got.length}`,
        );
      }
    });
    expect(mismatches, mismatches.slice(0, 10).join('\n')).toEqual([]);
    // The filters really discriminate (not all "everything" or "nothing").
    expect(nonTrivial).toBeGreaterThan(PUSHED_FILTERS / 2);
  });

  it('selects the same ids for 300 random filters over the whole language, through VectorRetriever', {
    timeout: 120_000,
  }, async () => {
    const embedder: Embedder = {
      dimension: 8,
      embed: async (texts) => texts.map(() => Float32Array.from(query)),
    };
    const retriever = new VectorRetriever({ store, embedder });
    const mismatches: string[] = [];
    let residual = 0;
    const nodes = fc.sample(filterNodeArbitraryWith(), { numRuns: 300, seed: 13 });
    await forEachConcurrently(nodes, 8, async (node) => {
      const filter = serializeFilter(node);
      if (resolveFilter(store, filter).residual !== undefined) residual++;
      const expected = ids(records.filter((record) => evaluateFilter(node, record)));
      const result = await retriever.retrieve('query', { k: RECORDS, filter });
      const got = result.hits.map((hit) => hit.chunk.id).sort();
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        mismatches.push(`${JSON.stringify(filter)}: expected ${expected.length} ids, got ${got.length}`);
      }
    });
    expect(mismatches, mismatches.slice(0, 10).join('\n')).toEqual([]);
    // Part of them went through the residual path ($exists, id, $not around ranges).
    expect(residual).toBeGreaterThan(30);
  });
});
