import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { type Analyzer, BM25Index, BM25SparseEncoder, type SparseVector } from '@zerda/core';
import { createPostgresStore, type PostgresStore } from '@zerda/postgres';
import { SyntheticCorpus, type SyntheticDocument } from '../corpus/synthetic.js';
import { collectGarbage, formatBytes, meanOverlap, measureBuild, runQueries } from '../lib/measure.js';
import type { BenchRow, BenchSuite, BenchSuiteOptions } from '../report.js';

/*
 * BM25 run by Postgres (pgvector `sparsevec`, through @zerda/postgres on PGlite in-process)
 * beside the in-process BM25Index, on the synthetic Zipf corpus with the keyword suite's
 * whitespace tokens, in the same run:
 * - keyword query latency (top 10, p50/p99): BM25Index; Postgres exact with the default term-id
 *   prefilter (`WHERE terms && q's ids`, a GIN index: only rows sharing a term are scored) and
 *   without it (`sparse: { prefilter: false }`, a scan of the table), and p50 per query kind (by
 *   the document frequency of the query's most frequent term; each kind's queries run on their
 *   own, within a third of the budget, since head terms are in most queries), with the
 *   EXPLAIN ANALYZE of the driver's statement for a rare and a frequent query in the log; Postgres
 *   with an HNSW index on the sparse column (approximate; `--skip postgres-hnsw` leaves it out);
 * - size: the table (pg_total_relation_size, heap + TOAST + indexes) with and without the sparse
 *   column and the term ids (+ GIN), beside the index's retained memory;
 * - write throughput of store.add (500 rows per INSERT): dense only, with sparse vectors, with
 *   sparse vectors and term ids (the default).
 * The tables are ANALYZEd after writing (what autovacuum does on a server; PGlite has none), so the
 * planner knows how common each term id is.
 * `quality.top10Overlap` is measured against BM25Index's exhaustive top 10. Each chunk also has
 * a 16-dimensional dense vector (no dense index), so the writes compare the sparse column alone.
 * PGlite is single-threaded WebAssembly: a Postgres server is faster, the ratios are the point.
 */

const TOP_K = 10;
const DENSE_DIMENSION = 16;
const QUERY_BUDGET_MS = 30_000;
/** Largest size at which the HNSW index on the sparse column is built (192 s at 10,000 on PGlite here). */
const HNSW_MAX_SIZE = 10_000;
const whitespaceAnalyzer: Analyzer = { name: 'whitespace', analyze: (text) => text.split(' ') };
/** Query kinds by the fraction of documents holding the query's most frequent term. */
const QUERY_KINDS = [
  { name: 'rare', below: 0.01 },
  { name: 'mid', below: 0.1 },
  { name: 'frequent', below: Number.POSITIVE_INFINITY },
] as const;

/** Each query's kind: the largest fraction of documents one of its terms is in. */
function queryKinds(documents: SyntheticDocument[], queries: string[]): string[] {
  const frequency = new Map<string, number>();
  for (const document of documents) {
    for (const term of new Set(document.text.split(' '))) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  }
  return queries.map((query) => {
    const top = Math.max(...query.split(' ').map((term) => frequency.get(term) ?? 0)) / documents.length;
    return QUERY_KINDS.find((kind) => top < kind.below)?.name as string;
  });
}

/** p50 per query kind: each kind's queries run on their own, within a third of the query budget. */
async function p50ByKind(
  queries: string[],
  kinds: string[],
  search: (query: string) => Promise<string[]>,
): Promise<Record<string, number>> {
  const byKind: Record<string, number> = {};
  for (const { name } of QUERY_KINDS) {
    const own = queries.filter((_, i) => kinds[i] === name);
    if (own.length === 0) continue;
    const { p50, timed } = await runQueries(own, search, { budgetMs: QUERY_BUDGET_MS / 3 });
    byKind[`p50Ms ${name} (${timed} of ${own.length})`] = p50;
  }
  return byKind;
}

/** The driver's own statement for one keyword query, run again under EXPLAIN (ANALYZE): its plan lines. */
async function explainSearch(db: PGlite, table: string, query: SparseVector): Promise<string> {
  let statement = { sql: '', params: [] as unknown[] };
  const probe = createPostgresStore({
    query: (sql, params) => {
      statement = { sql, params };
      return db.query(sql, params);
    },
    ...{ table, dimension: DENSE_DIMENSION, index: 'exact', sparse: true },
  });
  await probe.searchSparse(query, { topK: TOP_K });
  const plan = await db.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE) ${statement.sql}`,
    statement.params,
  );
  return plan.rows.map((row) => `    ${row['QUERY PLAN']}`).join('\n');
}

/** A deterministic dense vector per document (its content plays no part in keyword search). */
function denseVectors(count: number): Float32Array[] {
  const vectors: Float32Array[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const v = new Float32Array(DENSE_DIMENSION);
    for (let d = 0; d < DENSE_DIMENSION; d++) v[d] = Math.sin(i * 0.37 + d * 1.3) + 1.5;
    vectors[i] = v;
  }
  return vectors;
}

async function tableBytes(db: PGlite, store: PostgresStore): Promise<number> {
  const { rows } = await db.query<{ bytes: number }>('SELECT pg_total_relation_size($1)::float8 AS bytes', [
    store.driver.table,
  ]);
  return Number(rows[0]?.bytes);
}

/** Writes every chunk through store.add, timed; returns chunks per second. */
async function timedWrite(
  store: PostgresStore,
  documents: SyntheticDocument[],
  embeddings: Float32Array[],
  sparseVectors?: SparseVector[],
): Promise<{ ms: number; perSecond: number }> {
  const started = performance.now();
  await store.add(documents, sparseVectors ? { embeddings, sparseVectors } : { embeddings });
  const ms = performance.now() - started;
  return { ms, perSecond: documents.length / (ms / 1000) };
}

async function runSize(
  size: number,
  options: BenchSuiteOptions,
  corpus: SyntheticCorpus,
): Promise<BenchRow[]> {
  const { log } = options;
  const rows: BenchRow[] = [];
  const documents = corpus.documents(size);
  const queries = corpus.queries(options.queries);

  // In-process: the reference (exhaustive) and the default (MaxScore-pruned) search.
  const built = await measureBuild(() => {
    const index = new BM25Index({ analyzer: whitespaceAnalyzer });
    index.add(documents);
    return index;
  });
  const index = built.value;
  const reference = await runQueries(queries, (q) =>
    index.search(q, TOP_K, { exhaustive: true }).map((h) => h.id),
  );
  const inProcess = await runQueries(queries, (q) => index.search(q, TOP_K).map((h) => h.id), {
    budgetMs: QUERY_BUDGET_MS,
  });
  rows.push({
    suite: 'sparse',
    system: 'bm25 in-process',
    size,
    buildMs: built.ms,
    memoryBytes: built.bytes,
    p50Ms: inProcess.p50,
    p99Ms: inProcess.p99,
    qps: inProcess.qps,
    quality: { top10Overlap: meanOverlap(inProcess.results, reference.results) },
    notes: `BM25Index (MaxScore-pruned exact top 10), whitespace analyser; typed arrays ${formatBytes(index.stats().arrayBytes)}`,
  });
  log(
    `  bm25 in-process: built in ${(built.ms / 1000).toFixed(2)} s, ${formatBytes(built.bytes)}, p50 ${inProcess.p50.toFixed(3)} ms`,
  );

  const encodeStarted = performance.now();
  const encoder = new BM25SparseEncoder({ analyzer: whitespaceAnalyzer });
  const sparseVectors = encoder.addAndEncode(documents.map((document) => document.text));
  const encodeMs = performance.now() - encodeStarted;
  let nonZeros = 0;
  for (const sparse of sparseVectors) nonZeros += sparse.indices.length;
  const embeddings = denseVectors(size);
  log(
    `  encoded ${size} documents in ${(encodeMs / 1000).toFixed(2)} s (${(nonZeros / size).toFixed(1)} non-zeros each)`,
  );

  const db = await PGlite.create({ extensions: { vector } });
  try {
    // Writes: the same chunks and dense vectors, without then with sparse vectors.
    const dense = createPostgresStore({
      pglite: db,
      table: 'dense_only',
      dimension: DENSE_DIMENSION,
      index: 'exact',
    });
    const denseWrite = await timedWrite(dense, documents, embeddings);
    const denseBytes = await tableBytes(db, dense);
    const plain = createPostgresStore({
      pglite: db,
      table: 'with_sparse_only',
      dimension: DENSE_DIMENSION,
      index: 'exact',
      sparse: { prefilter: false },
    });
    const plainWrite = await timedWrite(plain, documents, embeddings, sparseVectors);
    const plainBytes = await tableBytes(db, plain);
    await db.query(`ANALYZE ${plain.driver.table}`);
    const sparse = createPostgresStore({
      pglite: db,
      table: 'with_sparse',
      dimension: DENSE_DIMENSION,
      index: 'exact',
      sparse: true,
    });
    const sparseWrite = await timedWrite(sparse, documents, embeddings, sparseVectors);
    const sparseBytes = await tableBytes(db, sparse);
    await db.query(`ANALYZE ${sparse.driver.table}`);
    log(
      `  writes: ${denseWrite.perSecond.toFixed(0)} chunks/s dense only, ${plainWrite.perSecond.toFixed(0)} with sparse, ${sparseWrite.perSecond.toFixed(0)} with sparse + term ids; table ${formatBytes(denseBytes)} → ${formatBytes(plainBytes)} → ${formatBytes(sparseBytes)}`,
    );
    rows.push({
      suite: 'sparse',
      system: 'postgres write dense only',
      size,
      buildMs: denseWrite.ms,
      memoryBytes: denseBytes,
      qps: denseWrite.perSecond,
      notes: `store.add, ${DENSE_DIMENSION}-d dense vectors, no index; qps = chunks written per second; memoryBytes = pg_total_relation_size`,
    });
    rows.push({
      suite: 'sparse',
      system: 'postgres write with sparse',
      size,
      buildMs: plainWrite.ms,
      memoryBytes: plainBytes,
      qps: plainWrite.perSecond,
      quality: { writeThroughputVsDense: plainWrite.perSecond / denseWrite.perSecond },
      notes: `the same plus sparsevec, sparse: { prefilter: false } (${(nonZeros / size).toFixed(1)} non-zeros per chunk; encoding took ${(encodeMs / 1000).toFixed(2)} s, not counted); memoryBytes = pg_total_relation_size`,
    });
    rows.push({
      suite: 'sparse',
      system: 'postgres write with sparse + term ids',
      size,
      buildMs: sparseWrite.ms,
      memoryBytes: sparseBytes,
      qps: sparseWrite.perSecond,
      quality: {
        writeThroughputVsDense: sparseWrite.perSecond / denseWrite.perSecond,
        writeThroughputVsSparse: sparseWrite.perSecond / plainWrite.perSecond,
      },
      notes:
        'the default: sparsevec plus terms integer[] with its GIN index; memoryBytes = pg_total_relation_size',
    });
    await db.query(`DROP TABLE ${dense.driver.table}`);

    const kinds = queryKinds(documents, queries);
    for (const [store, system, how, bytes] of [
      [
        plain,
        'postgres sparsevec exact, no prefilter',
        'ORDER BY sparse <#> q: a scan of the table without term ids (before the prefilter)',
        plainBytes,
      ],
      [sparse, 'postgres sparsevec exact', 'WHERE terms && q ids (GIN) ORDER BY sparse <#> q', sparseBytes],
    ] as const) {
      const search = (q: string) =>
        store
          .searchSparse(encoder.encodeQuery(q), { topK: TOP_K })
          .then(({ hits }) => hits.map((h) => h.chunk.id));
      const exact = await runQueries(queries, search, { budgetMs: QUERY_BUDGET_MS });
      const byKind = await p50ByKind(queries, kinds, search);
      const kindsText = Object.entries(byKind)
        .map(([kind, p50]) => `${kind} ${p50.toFixed(2)}`)
        .join(', ');
      log(`  ${system}: p50 ${exact.p50.toFixed(2)} ms over ${exact.timed} queries; ${kindsText}`);
      rows.push({
        suite: 'sparse',
        system,
        size,
        memoryBytes: bytes,
        p50Ms: exact.p50,
        p99Ms: exact.p99,
        qps: exact.qps,
        quality: {
          top10Overlap: meanOverlap(exact.results, reference.results),
          p50VsInProcess: exact.p50 / inProcess.p50,
          ...byKind,
        },
        notes: `PGlite 0.5.14 (pgvector 0.8.7), ${how}; kinds by the query's most frequent term (rare < 1% of documents, mid < 10%); memoryBytes = table size${budgetNote(exact, queries.length)}`,
      });
    }
    for (const kind of ['rare', 'frequent']) {
      const query = queries.find((_, i) => kinds[i] === kind);
      if (query === undefined) continue;
      const plan = await explainSearch(db, 'with_sparse', encoder.encodeQuery(query));
      log(`  EXPLAIN (ANALYZE) of a ${kind} query (${query}):\n${plan}`);
    }
    await db.query(`DROP TABLE ${plain.driver.table}`);

    if (size <= HNSW_MAX_SIZE && !options.skip.includes('postgres-hnsw')) {
      const indexStarted = performance.now();
      // The driver creates the missing HNSW index on the existing table when it opens it.
      const hnsw = createPostgresStore({
        pglite: db,
        table: 'with_sparse',
        dimension: DENSE_DIMENSION,
        index: 'exact',
        // Without the prefilter, so that the HNSW index ranks (as measured before the prefilter).
        sparse: { index: 'hnsw', prefilter: false },
      });
      await hnsw.count();
      const indexMs = performance.now() - indexStarted;
      const hnswBytes = await tableBytes(db, hnsw);
      const approximate = await runQueries(
        queries,
        (q) =>
          hnsw
            .searchSparse(encoder.encodeQuery(q), { topK: TOP_K })
            .then(({ hits }) => hits.map((h) => h.chunk.id)),
        { budgetMs: QUERY_BUDGET_MS },
      );
      log(`  postgres hnsw: index in ${(indexMs / 1000).toFixed(1)} s, p50 ${approximate.p50.toFixed(2)} ms`);
      rows.push({
        suite: 'sparse',
        system: 'postgres sparsevec hnsw',
        size,
        buildMs: indexMs,
        memoryBytes: hnswBytes,
        p50Ms: approximate.p50,
        p99Ms: approximate.p99,
        qps: approximate.qps,
        quality: { top10Overlap: meanOverlap(approximate.results, reference.results) },
        notes: `HNSW (sparsevec_ip_ops, m 16, ef_construction 64; ef_search 40, strict iterative scan); buildMs = CREATE INDEX; memoryBytes = table with both indexes${budgetNote(approximate, queries.length)}`,
      });
    }
  } finally {
    await db.close();
  }
  return rows;
}

function budgetNote(result: { timed: number; truncated: boolean }, total: number): string {
  return result.truncated
    ? ` [timed ${result.timed} of ${total} queries: ${QUERY_BUDGET_MS / 1000} s budget]`
    : '';
}

/** Keyword search run by Postgres sparsevec beside the in-process BM25 index (issue 15's numbers). */
export const sparseSuite: BenchSuite = {
  name: 'sparse',
  defaultSizes: [10_000, 100_000],
  async run(options) {
    const corpus = new SyntheticCorpus();
    const rows: BenchRow[] = [];
    for (const size of options.sizes) {
      options.log(`sparse: ${size.toLocaleString('en-US')} documents, ${options.queries} queries`);
      rows.push(...(await runSize(size, options, corpus)));
      collectGarbage();
    }
    return rows;
  },
};
