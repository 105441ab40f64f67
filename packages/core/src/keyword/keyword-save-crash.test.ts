import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleNodeScript } from '../test-utils/bundle-node-script.js';
import { saveKeywordRetriever } from './keyword-files.js';
import { buildVersion, loadedVersion, type SaveVersion } from './test-utils/save-versions.js';

/*
 * SIGKILL a process at 200 random points of saveKeywordRetriever and reopen the folder after each:
 * it must always load, as the version that was on disk before the save or the one being saved, whole.
 *
 * Starting Node with TypeScript through tsx costs about a second on a loaded machine, too much for
 * 200 processes, so the saving script is bundled once (with Vite, already a dev dependency) and made
 * into a V8 startup snapshot: a process then starts as fast as an empty Node. Lanes over separate
 * folders run side by side, and each starts its next process while the current one is killed and checked.
 */

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = 200;
const LANES = 5;
/** Every so many rounds, a process completes one save first, to measure how long saves take. */
const CALIBRATE_EVERY = 5;
/** Processes each lane keeps started ahead of the one it kills. */
const PREPARED = 3;

let work: string;
let snapshot: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'zerda-save-crash-'));
  const bundle = await bundleNodeScript(
    join(here, 'test-utils/keyword-save-loop.ts'),
    join(work, 'bundle'),
    'keyword-save-loop.cjs',
    'cjs',
  );
  snapshot = join(work, 'bundle', 'keyword-save-loop.blob');
  await promisify(execFile)(process.execPath, ['--snapshot-blob', snapshot, '--build-snapshot', bundle], {
    env: { ...process.env, NODE_OPTIONS: '' },
  });
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

/** A started saving process: its output lines so far, a wait for the next line that matches. */
interface Saver {
  child: ChildProcess;
  lines: string[];
  waitFor(predicate: (line: string) => boolean): Promise<void>;
  exited: Promise<void>;
}

function startSaver(directory: string): Saver {
  const child = spawn(process.execPath, ['--snapshot-blob', snapshot, directory], {
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  child.stdin!.on('error', () => undefined); // a write to a process that is already gone
  const lines: string[] = [];
  let pending = '';
  let stderr = '';
  const waiters: Array<{
    predicate: (line: string) => boolean;
    resolve: () => void;
    reject: (e: Error) => void;
  }> = [];
  let ended: Error | undefined;
  child.stdout!.on('data', (data: Buffer) => {
    const parts = (pending + data.toString()).split('\n');
    pending = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.predicate(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    }
  });
  child.stderr!.on('data', (data: Buffer) => {
    stderr += data.toString();
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      ended = new Error(`the saving process ended by itself (${code ?? signal}): ${stderr}`);
      for (const waiter of waiters.splice(0)) waiter.reject(ended);
      resolve();
    });
  });
  return {
    child,
    lines,
    exited,
    waitFor(predicate) {
      if (lines.some(predicate)) return Promise.resolve();
      if (ended) return Promise.reject(ended);
      return new Promise((resolve, reject) => waiters.push({ predicate, resolve, reject }));
    },
  };
}

/** Waits `microseconds`: a timer for the bulk, a busy wait for the last millisecond (timers are coarse). */
async function pause(microseconds: number): Promise<void> {
  const end = process.hrtime.bigint() + BigInt(Math.round(microseconds * 1000));
  const timerMs = Math.floor(microseconds / 1000) - 1;
  if (timerMs > 0) await new Promise((resolve) => setTimeout(resolve, timerMs));
  while (process.hrtime.bigint() < end) {
    // spin
  }
}

interface Outcomes {
  old: number;
  new: number;
  afterCompletedSaves: number;
  debrisLeft: number;
  longestSaveMs: number;
}

/**
 * One lane: `rounds` processes, one after the other, each loading the folder its predecessor was
 * killed in (and saying what it found), then saving until it is killed in turn.
 */
async function killLane(directory: string, rounds: number, saveMicroseconds: number, outcomes: Outcomes) {
  // How long a save takes in the saving processes, as this process sees it (a loaded machine slows
  // them down): measured on a whole save now and then, so the kills keep spreading across the save.
  let span = saveMicroseconds;
  await saveKeywordRetriever(buildVersion('A'), directory);
  let allowed: SaveVersion[] = ['A'];
  let onDisk: SaveVersion = 'A';
  let debrisBefore = 0;
  let previousOutput = 'the first save, in the test process';
  // The next processes start while this one works (starting a process is the slow part).
  const started = Array.from({ length: Math.min(PREPARED, rounds) }, () => startSaver(directory));
  for (let round = 0; round <= rounds; round++) {
    const saver = round < rounds ? started.shift()! : undefined;
    if (round + started.length + 1 < rounds) started.push(startSaver(directory));
    let found: SaveVersion;
    if (saver === undefined) {
      found = await loadedVersion(directory); // after the last kill, the test process checks
    } else {
      await saver.waitFor((line) => line === 'ready');
      saver.child.stdin!.write('go\n');
      await saver.waitFor((line) => line.startsWith('found ') || line.startsWith('broken '));
      const report = saver.lines.find((line) => line.startsWith('found ') || line.startsWith('broken '))!;
      expect(report, `${directory} after round ${round - 1} (${previousOutput})`).toMatch(/^found [AB]$/);
      found = report.slice(6) as SaveVersion;
    }
    expect(allowed, `${directory} after round ${round - 1} (${previousOutput})`).toContain(found);
    if (round > 0) {
      if (found === onDisk) outcomes.old++;
      else outcomes.new++;
    }
    onDisk = found;
    if (saver === undefined) break;

    let killedSave = 1;
    if (round % CALIBRATE_EVERY === 0) {
      await saver.waitFor((line) => line.startsWith('saving 1 '));
      const from = performance.now();
      await saver.waitFor((line) => line.startsWith('saved 1 '));
      span = 0.5 * span + 0.5 * (performance.now() - from) * 1000;
      outcomes.longestSaveMs = Math.max(outcomes.longestSaveMs, performance.now() - from);
      killedSave = 2;
    }
    await saver.waitFor((line) => line.startsWith(`saving ${killedSave} `));
    // Anywhere from before the first write to a little after the save would have completed.
    await pause(Math.random() * span * 1.2);
    saver.child.kill('SIGKILL');
    await saver.exited;

    const lines = saver.lines;
    const last = lines.at(-1)!;
    const saved = lines.filter((line) => line.startsWith('saved '));
    const lastSaved = saved.length === 0 ? onDisk : (saved.at(-1)!.split(' ')[2] as SaveVersion);
    if (saved.length > 0) outcomes.afterCompletedSaves++;
    // If the last line says a save returned, that save is on disk; if it says one started, the
    // folder holds the previous one or that one.
    allowed = last.startsWith('saved ') ? [lastSaved] : [lastSaved, last.split(' ')[2] as SaveVersion];
    previousOutput = lines.slice(-2).join(' / ');
    const debris = (await readdir(directory)).length - 3;
    if (debris > debrisBefore) outcomes.debrisLeft++;
    debrisBefore = debris;
  }
}

describe('saveKeywordRetriever under SIGKILL', () => {
  it(`a process killed at ${ROUNDS} random points of a save leaves the old save or the new one, whole`, async () => {
    // How long a save takes here, to spread the kills across it.
    const versions = { A: buildVersion('A'), B: buildVersion('B') };
    const timings: number[] = [];
    for (const version of ['B', 'A', 'B', 'A'] as const) {
      const started = performance.now();
      await saveKeywordRetriever(versions[version], join(work, 'timing'));
      timings.push(performance.now() - started);
    }
    const saveMicroseconds = [...timings].sort((a, b) => a - b)[1]! * 1000;

    const outcomes: Outcomes = { old: 0, new: 0, afterCompletedSaves: 0, debrisLeft: 0, longestSaveMs: 0 };
    const started = performance.now();
    await Promise.all(
      Array.from({ length: LANES }, (_, lane) =>
        killLane(join(work, `lane-${lane}`), ROUNDS / LANES, saveMicroseconds, outcomes),
      ),
    );
    // Every kill was followed by a load, and the kills landed on both sides of the commit.
    expect(outcomes.old + outcomes.new).toBe(ROUNDS);
    expect(outcomes.old).toBeGreaterThan(0);
    expect(outcomes.new).toBeGreaterThan(0);
    console.info(
      `save crash test: ${ROUNDS} kills in ${((performance.now() - started) / 1000).toFixed(1)} s, median save ` +
        `${(saveMicroseconds / 1000).toFixed(1)} ms; the folder loaded as the old save ${outcomes.old} times, as ` +
        `the new one ${outcomes.new} times; ${outcomes.debrisLeft} kills left files of an unfinished save; ` +
        `${outcomes.afterCompletedSaves} came after at least one save had returned (the longest save seen took ` +
        `${outcomes.longestSaveMs.toFixed(0)} ms)`,
    );
  }, 240_000);
});
