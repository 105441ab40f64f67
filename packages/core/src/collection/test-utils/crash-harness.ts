// The collection's crash harness: SIGKILL a process writing to a file-backed collection at random
// points, reopen after each kill, and check the rule: every id in both sides or neither, every
// acknowledged add present and every acknowledged delete absent. Run by the tests at a small size;
// `pnpm crash-harness --runs 50 --chunks 10000` runs it at a large one.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HashEmbedder, InMemoryVectorStore, openCollection } from '../../index.js';
import { createFileStorage } from '../../node.js';
import { crashChunkOf } from './crash-chunks.js';

export interface CrashHarnessOptions {
  runs: number;
  /** Chunks each writing process tries to add. */
  chunks: number;
  batchSize?: number;
  /**
   * When to kill: after a random number of acknowledged writes in [0, maxAcks], then a random wait
   * in [0, jitterMs] ms, so the kill lands mid-write however fast the machine is (defaults 40, 20).
   */
  maxAcks?: number;
  jitterMs?: number;
  seed?: number;
  log?: (line: string) => void;
}

export interface CrashHarnessReport {
  runs: number;
  killed: number;
  acknowledgedAdds: number;
  acknowledgedDeletes: number;
  /** Acknowledged adds missing, or acknowledged deletes present, after a reopen (must be 0). */
  lost: number;
  /** Ids in one side only after a reopen (must be 0). */
  oneSided: number;
  /** Chunks whose text or metadata after a reopen is not what was written (must be 0). */
  damaged: number;
  /** Chunks in the collection at the end. */
  finalCount: number;
  openMsMax: number;
}

const here = dirname(fileURLToPath(import.meta.url));

export async function runCrashHarness(options: CrashHarnessOptions): Promise<CrashHarnessReport> {
  const { runs, chunks, batchSize = 100, maxAcks = 40, jitterMs = 20, log } = options;
  let seed = options.seed ?? 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const directory = await mkdtemp(join(tmpdir(), 'zerda-crash-'));
  const present = new Set<string>();
  const absent = new Set<string>();
  const unsettled = new Set<string>();
  const report: CrashHarnessReport = {
    runs,
    killed: 0,
    acknowledgedAdds: 0,
    acknowledgedDeletes: 0,
    lost: 0,
    oneSided: 0,
    damaged: 0,
    finalCount: 0,
    openMsMax: 0,
  };
  try {
    for (let run = 0; run < runs; run++) {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '--conditions=@zerda/source',
          join(here, 'collection-writer.ts'),
          directory,
          String(run),
          String(chunks),
          String(batchSize),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let buffer = '';
      let acks = 0;
      const target = Math.floor(random() * (maxAcks + 1));
      const jitter = random() * jitterMs;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const killSoon = () => {
        timer ??= setTimeout(() => {
          if (child.exitCode === null && child.kill('SIGKILL')) report.killed++;
        }, jitter);
      };
      let ready: () => void = () => {};
      const isReady = new Promise<void>((resolve) => {
        ready = resolve;
      });
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (text: string) => {
        buffer += text;
        let newline = buffer.indexOf('\n');
        while (newline >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          const [kind, ...ids] = line.split(' ');
          if (kind === 'add' || kind === 'del') acks++;
          if (acks >= target && (kind === 'ready' || kind === 'add' || kind === 'del')) killSoon();
          if (kind === 'ready') ready();
          else if (kind === 'adding' || kind === 'deleting') for (const id of ids) unsettled.add(id);
          else if (kind === 'add') {
            for (const id of ids) unsettled.delete(id);
            for (const id of ids) present.add(id);
            report.acknowledgedAdds += ids.length;
          } else if (kind === 'del') {
            for (const id of ids) {
              unsettled.delete(id);
              present.delete(id);
              absent.add(id);
            }
            report.acknowledgedDeletes += ids.length;
          }
          newline = buffer.indexOf('\n');
        }
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      await Promise.race([isReady, exited]);
      const code = await exited;
      clearTimeout(timer);
      if (code !== null && code !== 0)
        throw new Error(`the writer of run ${run} failed with exit code ${code}`);

      const started = performance.now();
      const collection = await openCollection({
        store: new InMemoryVectorStore({ embedder: new HashEmbedder({ dimension: 32 }) }),
        storage: createFileStorage(directory),
      });
      report.openMsMax = Math.max(report.openMsMax, performance.now() - started);
      const keyword = new Set<string>();
      let damaged = 0;
      for await (const page of collection.list()) {
        for (const chunk of page) {
          keyword.add(chunk.id);
          // Every text read back (from the snapshot's texts blob or the log), as written.
          const written = crashChunkOf(chunk.id);
          if (
            written === undefined ||
            chunk.text !== written.text ||
            JSON.stringify(chunk.metadata) !== JSON.stringify(written.metadata)
          )
            damaged++;
        }
      }
      const vector = new Set<string>();
      for await (const page of collection.store.list!()) for (const chunk of page) vector.add(chunk.id);
      let oneSided = 0;
      for (const id of keyword) if (!vector.has(id)) oneSided++;
      for (const id of vector) if (!keyword.has(id)) oneSided++;
      // A write the process had started but not acknowledged may have happened or not: either is
      // allowed (both sides agree either way), and the reopened state says which.
      for (const id of unsettled) {
        if (keyword.has(id)) {
          present.add(id);
          absent.delete(id);
        } else {
          present.delete(id);
          absent.add(id);
        }
      }
      unsettled.clear();
      const lostIds: string[] = [];
      for (const id of present) if (!keyword.has(id)) lostIds.push(`+${id}`);
      for (const id of absent) if (keyword.has(id)) lostIds.push(`-${id}`);
      const lost = lostIds.length;
      report.oneSided += oneSided;
      report.damaged += damaged;
      report.lost += lost;
      report.finalCount = keyword.size;
      await collection.close();
      log?.(
        `run ${run + 1}/${runs}: killed after ${acks} acknowledged writes, ${keyword.size} chunks, lost ${lost}${lost > 0 ? ` (${lostIds.slice(0, 6).join(' ')})` : ''}, one-sided ${oneSided}, damaged ${damaged}`,
      );
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
  return report;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const value = (name: string, fallback: number) => {
    const at = process.argv.indexOf(`--${name}`);
    return at > 0 ? Number(process.argv[at + 1]) : fallback;
  };
  const report = await runCrashHarness({
    runs: value('runs', 50),
    chunks: value('chunks', 10_000),
    batchSize: value('batch', 100),
    maxAcks: value('max-acks', 60),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  if (report.lost > 0 || report.oneSided > 0 || report.damaged > 0) process.exitCode = 1;
}
