// `pnpm soak [--minutes N]`: a bounded, self-stopping soak run (default 10 minutes; not part of the
// test command). Concurrent writers and readers work over a HybridRetriever (KeywordRetriever + a
// Chroma store from @zerda/chroma) against a real Chroma server that this script starts, and SIGKILLs
// and restarts over the same data at random intervals. At the end it checks that every acknowledged
// write is in the store and every acknowledged delete is not, that no query failed other than with a
// typed, expected error, and that memory and open handles stayed flat after warm-up (under 10%
// growth). It prints a summary table and writes a JSON report; the exit code is 0 when every check
// passes, 1 otherwise.
//
// Options: --minutes N (default 10), --writers N (3), --readers N (3), --ids N (ids per writer, 300),
// --pace-ms N (pause between one worker's operations, 10), --kill-every S..S (seconds between
// server kills, default 20..90, shortened for short runs), --out <file> (default
// bench/results/soak-<time>.json), --seed N.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createChromaStore } from '../../packages/chroma/src/index.js';
import { freePort } from '../../packages/chroma/src/test-utils/chroma-server.js';
import {
  type Chunk,
  compileFilter,
  type FilterInput,
  HashEmbedder,
  HybridRetriever,
  KeywordRetriever,
  parseFilter,
  VectorRetriever,
  ZerdaError,
} from '../../packages/core/src/index.js';
import { chromaProcess } from './chroma-process.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    writers: { type: 'string', default: '3' },
    readers: { type: 'string', default: '3' },
    ids: { type: 'string', default: '300' },
    'pace-ms': { type: 'string', default: '10' },
    'kill-every': { type: 'string' },
    out: { type: 'string' },
    seed: { type: 'string' },
  },
});

function positive(name: string, value: string | undefined, integer = true): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || (integer && !Number.isInteger(number))) {
    console.error(`soak: --${name} must be a positive ${integer ? 'integer' : 'number'}, got '${value}'`);
    process.exit(2);
  }
  return number;
}

const minutes = positive('minutes', values.minutes, false);
const writerCount = positive('writers', values.writers);
const readerCount = positive('readers', values.readers);
const idsPerWriter = positive('ids', values.ids);
const paceMs = Number(values['pace-ms']);
const durationMs = minutes * 60_000;
const [killMin, killMax] = (
  values['kill-every'] ?? `${Math.min(20, minutes * 6)}..${Math.min(90, minutes * 18)}`
)
  .split('..')
  .map((part) => positive('kill-every', part, false) * 1000) as [number, number];
const warmUpMs = Math.min(durationMs * 0.25, Math.max(60_000, durationMs * 0.2));
const SAMPLE_EVERY_MS = 10_000;

// A small seeded generator, so a run can be repeated (--seed).
let seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const runSeed = seed;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

const topics = ['solar', 'wind', 'river', 'court', 'battery', 'grid', 'coffee', 'harbour', 'forest', 'storm'];
const words = [
  'power',
  'energy',
  'water',
  'contract',
  'storage',
  'market',
  'cup',
  'ship',
  'tree',
  'rain',
  'heat',
];

function makeChunk(writer: number, n: number, version: number): Chunk {
  const topic = topics[(n * 7 + version) % topics.length] as string;
  const text = `document ${writer}-${n} version ${version} about ${topic} ${pick(words)} ${pick(words)} ${pick(words)}`;
  return { id: `w${writer}-${n}`, text, metadata: { writer, n, version, topic } };
}

const filters: Array<FilterInput | undefined> = [
  undefined,
  { writer: 0 },
  { version: { $gte: 2 } },
  { topic: { $in: ['solar', 'wind', 'grid'] } },
  { $or: [{ writer: 1 }, { version: 1 }] },
  { $not: { topic: 'river' } },
  { writer: { $ne: 2 }, n: { $lt: 100 } },
];

// ------------------------------------------------------------------------------------------------
// State: what each id should be, from the acknowledged operations only.

type Expected = { state: 'present'; version: number } | { state: 'absent' } | { state: 'uncertain' };
const expected = new Map<string, Expected>();
const versions = new Map<string, number>();

const counts = {
  writesAcknowledged: 0,
  addsAcknowledged: 0,
  upsertsAcknowledged: 0,
  deletesAcknowledged: 0,
  writesFailed: 0,
  queries: 0,
  queryErrorsExpected: 0,
  queryErrorsUnexpected: 0,
  filterViolations: 0,
  warnings: 0,
  restarts: 0,
  unhandled: 0,
};
const warningsBySource = new Map<string, number>();
const warningExamples = new Map<string, string>();
const errorsByName = new Map<string, number>();
const errorExamples = new Map<string, string>();
const unexpectedErrors: string[] = [];
const samples: Array<Record<string, number>> = [];
const filterViolationExamples: unknown[] = [];
const downtimesMs: number[] = [];

function countError(name: string, error: unknown) {
  errorsByName.set(name, (errorsByName.get(name) ?? 0) + 1);
  if (!errorExamples.has(name))
    errorExamples.set(name, String((error as Error)?.message ?? error).slice(0, 500));
}

process.on('unhandledRejection', (reason) => {
  counts.unhandled++;
  unexpectedErrors.push(`unhandled rejection: ${String(reason)}`);
});

// ------------------------------------------------------------------------------------------------

const dataDir = await mkdtemp(join(tmpdir(), 'zerda-soak-chroma-'));
const port = await freePort();
const server = chromaProcess(dataDir, port);
await server.start();

const embedder = new HashEmbedder({ dimension: 64 });
const store = createChromaStore({ url: server.url, collection: 'soak', embedder, timeoutMs: 20_000 });
const keyword = new KeywordRetriever();
const vector = new VectorRetriever({ store });
// A branch that has not answered in 5 s is abandoned with a warning (the server may be down).
const hybrid = new HybridRetriever({ keyword, vector, branchTimeoutMs: 5_000 });

const stop = new AbortController();
const started = performance.now();
const elapsed = () => performance.now() - started;

async function writer(index: number): Promise<void> {
  while (!stop.signal.aborted) {
    const batch = random() < 0.1 ? 5 : 1;
    const ns = Array.from({ length: batch }, () => Math.floor(random() * idsPerWriter));
    const ids = [...new Set(ns.map((n) => `w${index}-${n}`))];
    const present = ids.every((id) => expected.get(id)?.state === 'present');
    const operation = present && random() < 0.4 ? 'delete' : 'add';
    try {
      if (operation === 'delete') {
        await store.delete!(ids);
        keyword.remove(ids);
        for (const id of ids) expected.set(id, { state: 'absent' });
        counts.deletesAcknowledged += ids.length;
      } else {
        const chunks = ids.map((id) => {
          const version = (versions.get(id) ?? 0) + 1;
          versions.set(id, version);
          return makeChunk(index, Number(id.split('-')[1]), version);
        });
        await store.add(chunks);
        keyword.add(chunks);
        for (const chunk of chunks) {
          const before = expected.get(chunk.id);
          if (before?.state === 'present') counts.upsertsAcknowledged++;
          else counts.addsAcknowledged++;
          expected.set(chunk.id, { state: 'present', version: chunk.metadata!.version as number });
        }
      }
      counts.writesAcknowledged += ids.length;
    } catch (error) {
      // Not acknowledged: the server may or may not have applied it.
      counts.writesFailed += ids.length;
      for (const id of ids) expected.set(id, { state: 'uncertain' });
      countError(`write: ${(error as Error)?.name ?? typeof error}`, error);
      if (!ZerdaError.isInstance(error)) unexpectedErrors.push(`write: ${String(error)}`);
    }
    await sleep(paceMs);
  }
}

async function reader(): Promise<void> {
  while (!stop.signal.aborted) {
    const filter = pick(filters);
    const query = `${pick(topics)} ${pick(words)}`;
    try {
      const result = await hybrid.retrieve(query, { k: 10, ...(filter === undefined ? {} : { filter }) });
      counts.queries++;
      counts.warnings += result.warnings.length;
      for (const warning of result.warnings) {
        const key = `${warning.source ?? '-'}: ${warning.type}`;
        warningsBySource.set(key, (warningsBySource.get(key) ?? 0) + 1);
        if (!warningExamples.has(key)) warningExamples.set(key, warning.message);
      }
      if (filter !== undefined) {
        const matches = compileFilter(parseFilter(filter));
        for (const hit of result.hits.filter((found) => !matches(found.chunk))) {
          counts.filterViolations++;
          if (filterViolationExamples.length < 20) {
            filterViolationExamples.push({
              filter,
              id: hit.chunk.id,
              metadata: hit.chunk.metadata,
              foundBy: Object.keys(hit.scores ?? {}),
              expected: expected.get(hit.chunk.id),
              seconds: Math.round(elapsed() / 1000),
            });
          }
        }
      }
    } catch (error) {
      counts.queries++;
      const name = (error as Error)?.name ?? typeof error;
      countError(`query: ${name}`, error);
      if (ZerdaError.isInstance(error) && ['RetrievalError', 'BackendError', 'AbortedError'].includes(name)) {
        counts.queryErrorsExpected++;
      } else {
        counts.queryErrorsUnexpected++;
        unexpectedErrors.push(`query: ${String(error)}`);
      }
    }
    await sleep(paceMs);
  }
}

async function chaos(): Promise<void> {
  while (!stop.signal.aborted) {
    await sleep(killMin + random() * (killMax - killMin), stop.signal);
    if (stop.signal.aborted || elapsed() > durationMs - 15_000) break;
    await server.kill();
    const down = 500 + random() * 4_500;
    await sleep(down);
    const restarting = performance.now();
    await server.start();
    downtimesMs.push(down + (performance.now() - restarting));
    counts.restarts++;
  }
}

function sample(): void {
  (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  const resources = process.getActiveResourcesInfo();
  samples.push({
    seconds: Math.round(elapsed() / 1000),
    rssMB: memory.rss / 2 ** 20,
    heapUsedMB: memory.heapUsed / 2 ** 20,
    externalMB: memory.external / 2 ** 20,
    handles: resources.length,
    timers: resources.filter((name) => name === 'Timeout').length,
    sockets: resources.filter((name) => name === 'TCPSocketWrap').length,
    liveIds: [...expected.values()].filter((entry) => entry.state === 'present').length,
    keywordSize: keyword.size,
    writes: counts.writesAcknowledged,
    queries: counts.queries,
  });
  const last = samples.at(-1)!;
  process.stdout.write(
    `soak ${String(last.seconds).padStart(5)} s  rss ${last.rssMB!.toFixed(0)} MB  heap ${last.heapUsedMB!.toFixed(1)} MB  ` +
      `handles ${last.handles}  writes ${last.writes}  queries ${last.queries}  restarts ${counts.restarts}\n`,
  );
}

console.log(
  `soak: ${minutes} min, ${writerCount} writers x ${idsPerWriter} ids, ${readerCount} readers, Chroma at ${server.url} ` +
    `(data ${dataDir}), kills every ${killMin / 1000}-${killMax / 1000} s, warm-up ${(warmUpMs / 1000).toFixed(0)} s, seed ${runSeed}`,
);
sample();
const sampler = setInterval(sample, SAMPLE_EVERY_MS);
const workers = [
  ...Array.from({ length: writerCount }, (_, index) => writer(index)),
  ...Array.from({ length: readerCount }, () => reader()),
];
const chaosDone = chaos();
await sleep(durationMs);
stop.abort();
await Promise.all(workers);
// The last sample and the rates cover the load only (a restart under way still finishes below).
clearInterval(sampler);
sample();
const loadSeconds = elapsed() / 1000;
await chaosDone;

// ------------------------------------------------------------------------------------------------
// The checks.

if (!server.running) await server.start();
const lost: string[] = [];
const stale: string[] = [];
const resurrected: string[] = [];
let uncertain = 0;
const ids = [...expected.keys()];
const found = new Map<string, Chunk>();
for (let i = 0; i < ids.length; i += 200) {
  for (const chunk of await store.get(ids.slice(i, i + 200))) found.set(chunk.id, chunk);
}
for (const [id, entry] of expected) {
  const chunk = found.get(id);
  if (entry.state === 'uncertain') uncertain++;
  else if (entry.state === 'present') {
    if (chunk === undefined) lost.push(id);
    else if (chunk.metadata?.version !== entry.version)
      stale.push(`${id} v${String(chunk.metadata?.version)}≠v${entry.version}`);
    const local = keyword.get(id);
    if (local === undefined || local.metadata?.version !== entry.version) stale.push(`${id} (keyword side)`);
  } else if (chunk !== undefined) resurrected.push(id);
  else if (keyword.get(id) !== undefined) resurrected.push(`${id} (keyword side)`);
}
const presentExpected = [...expected.values()].filter((entry) => entry.state === 'present').length;
const storeCount = await store.count();
const countConsistent = storeCount >= presentExpected && storeCount <= presentExpected + uncertain;

function growth(key: string): { baseline: number; final: number; growth: number } {
  const afterWarmUp = samples.filter((entry) => entry.seconds! * 1000 >= warmUpMs);
  const median = (list: number[]) =>
    [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? Number.NaN;
  const baseline = median(afterWarmUp.slice(0, 3).map((entry) => entry[key]!));
  const final = median(afterWarmUp.slice(-3).map((entry) => entry[key]!));
  return { baseline, final, growth: (final - baseline) / baseline };
}
const memory = { rssMB: growth('rssMB'), heapUsedMB: growth('heapUsedMB'), handles: growth('handles') };

const checks = {
  'acknowledged writes lost': { value: lost.length, pass: lost.length === 0 },
  'acknowledged upserts stale': { value: stale.length, pass: stale.length === 0 },
  'acknowledged deletes present': { value: resurrected.length, pass: resurrected.length === 0 },
  'count within expected range': {
    value: `${storeCount} in [${presentExpected}, ${presentExpected + uncertain}]`,
    pass: countConsistent,
  },
  'unexpected query errors': {
    value: counts.queryErrorsUnexpected,
    pass: counts.queryErrorsUnexpected === 0,
  },
  'hits not matching their filter': { value: counts.filterViolations, pass: counts.filterViolations === 0 },
  'unhandled rejections': { value: counts.unhandled, pass: counts.unhandled === 0 },
  'RSS growth after warm-up': {
    value: `${(memory.rssMB.growth * 100).toFixed(1)}%`,
    pass: memory.rssMB.growth < 0.1,
  },
  'heap growth after warm-up': {
    value: `${(memory.heapUsedMB.growth * 100).toFixed(1)}%`,
    pass: memory.heapUsedMB.growth < 0.1,
  },
  'handle growth after warm-up': {
    value: `${memory.handles.baseline} -> ${memory.handles.final}`,
    pass: memory.handles.final <= memory.handles.baseline * 1.1 + 2,
  },
  'server restarts survived': { value: counts.restarts, pass: counts.restarts > 0 || minutes < 1 },
};
const passed = Object.values(checks).every((check) => check.pass);

const report = {
  kind: 'zerda.soak',
  version: 1,
  startedAt: new Date(Date.now() - elapsed()).toISOString(),
  settings: {
    minutes,
    writers: writerCount,
    readers: readerCount,
    idsPerWriter,
    paceMs,
    killEverySeconds: [killMin / 1000, killMax / 1000],
    warmUpSeconds: warmUpMs / 1000,
    seed: runSeed,
  },
  environment: {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: (await import('node:os')).cpus().length,
  },
  throughput: {
    loadSeconds,
    writesPerSecond: counts.writesAcknowledged / loadSeconds,
    queriesPerSecond: counts.queries / loadSeconds,
  },
  counts: { ...counts, uncertainIds: uncertain, storeCount, presentExpected },
  downtimesMs,
  warnings: Object.fromEntries(warningsBySource),
  warningExamples: Object.fromEntries(warningExamples),
  errors: Object.fromEntries(errorsByName),
  errorExamples: Object.fromEntries(errorExamples),
  unexpectedErrors: unexpectedErrors.slice(0, 50),
  problems: { lost: lost.slice(0, 50), stale: stale.slice(0, 50), resurrected: resurrected.slice(0, 50) },
  filterViolationExamples,
  memory,
  checks,
  passed,
  samples,
};
const out =
  values.out ?? join(root, 'bench', 'results', `soak-${new Date().toISOString().replaceAll(':', '-')}.json`);
await mkdir(dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);

const rows: Array<[string, string]> = [
  ['duration of load', `${loadSeconds.toFixed(0)} s`],
  [
    'writes acknowledged (adds / upserts / deletes)',
    `${counts.writesAcknowledged} (${counts.addsAcknowledged} / ${counts.upsertsAcknowledged} / ${counts.deletesAcknowledged})`,
  ],
  ['writes sustained', `${report.throughput.writesPerSecond.toFixed(1)} /s`],
  ['writes not acknowledged (typed errors)', String(counts.writesFailed)],
  ['queries (filtered hybrid)', `${counts.queries} (${report.throughput.queriesPerSecond.toFixed(1)} /s)`],
  ['query errors, expected typed', String(counts.queryErrorsExpected)],
  ['warnings on results', String(counts.warnings)],
  [
    'Chroma kills and restarts',
    `${counts.restarts} (downtime median ${downtimesMs.length ? [...downtimesMs].sort((a, b) => a - b)[Math.floor(downtimesMs.length / 2)]!.toFixed(0) : '-'} ms)`,
  ],
  ['RSS after warm-up', `${memory.rssMB.baseline.toFixed(1)} -> ${memory.rssMB.final.toFixed(1)} MB`],
  [
    'heap after warm-up',
    `${memory.heapUsedMB.baseline.toFixed(1)} -> ${memory.heapUsedMB.final.toFixed(1)} MB`,
  ],
  ...Object.entries(checks).map(([name, check]): [string, string] => [
    `${check.pass ? 'PASS' : 'FAIL'} ${name}`,
    String(check.value),
  ]),
];
const width = Math.max(...rows.map(([name]) => name.length));
console.log(`\n${rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n')}`);
console.log(`\nreport: ${out}\n${passed ? 'soak passed' : 'soak FAILED'}`);

await server.stop();
await rm(dataDir, { recursive: true, force: true });
process.exit(passed ? 0 : 1);
