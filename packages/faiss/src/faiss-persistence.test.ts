import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  BackendError,
  type DistanceMetric,
  IndexFormatError,
  nativeFilter,
  type VectorHit,
} from '@zerda/core';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MANIFEST_FILE } from './faiss-files.js';
import { faissFilterConvention } from './faiss-filter.js';
import { HNSW_DEFAULTS } from './faiss-settings.js';
import { createFaissStore, type FaissIndexType, loadFaissStore } from './faiss-store.js';
import { clusteredVectors, testChunks } from './test-utils/data.js';
import { faissSkipped, requireFaiss } from './test-utils/faiss-available.js';

// Lets a test make the commit of a save (the manifest's rename) fail, as a crash there would.
const failures = vi.hoisted(() => ({ rename: false }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    rename: async (...args: Parameters<typeof actual.rename>) => {
      if (failures.rename)
        throw Object.assign(new Error('simulated crash before the commit'), { code: 'EIO' });
      return actual.rename(...args);
    },
  };
});

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, '..');
const run = promisify(execFile);
const ids = (hits: VectorHit[]) => hits.map((hit) => hit.chunk.id);
const directories: string[] = [];
const children: ChildProcess[] = [];

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'zerda-faiss-'));
  directories.push(directory);
  return directory;
}

/** Runs a test-utils script in a new Node process (TypeScript through tsx, sources through the source condition). */
function nodeArguments(script: string, ...args: string[]): string[] {
  return ['--import', 'tsx', '--conditions=@zerda/source', join(here, 'test-utils', script), ...args];
}

async function filledStore(indexType: FaissIndexType, metric: DistanceMetric) {
  const store = createFaissStore({ indexType, metric, compactRatio: 0.9 });
  const chunks = testChunks(800);
  await store.add(chunks, { embeddings: clusteredVectors(800, 16) });
  // Deleted and replaced entries: removed from a flat index, tombstones in an HNSW one.
  await store.delete(['c1', 'c2', 'c300']);
  await store.add([{ id: 'c5', text: 'replaced', docId: 'docX', metadata: { category: 'legal' } }], {
    embeddings: clusteredVectors(1, 16, 42),
  });
  return store;
}

const configurations: [FaissIndexType, DistanceMetric][] = [
  ['flat', 'cosine'],
  ['flat', 'l2'],
  ['hnsw', 'cosine'],
  ['hnsw', 'dot'],
];

describe.skipIf(faissSkipped)('saving and loading a FAISS store', () => {
  beforeAll(async () => {
    await requireFaiss();
  });

  afterEach(async () => {
    failures.rename = false;
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
  });

  it.each(configurations)(
    '%s %s: load gives the same hits, and the store goes on working',
    async (indexType, metric) => {
      const store = await filledStore(indexType, metric);
      const directory = await temporaryDirectory();
      await store.save(directory);
      const loaded = await loadFaissStore(directory);
      expect(loaded.stats()).toEqual(store.stats());
      expect(loaded.capabilities).toEqual(store.capabilities);
      const allowed = nativeFilter(faissFilterConvention, { docIdFilter: ['docX', 'doc3'] });
      for (const query of clusteredVectors(8, 16, 9)) {
        expect((await loaded.search(query, { topK: 20 })).hits).toEqual(
          (await store.search(query, { topK: 20 })).hits,
        );
        expect((await loaded.search(query, { topK: 5, nativeFilter: allowed })).hits).toEqual(
          (await store.search(query, { topK: 5, nativeFilter: allowed })).hits,
        );
      }
      await loaded.add([{ id: 'new', text: 'new' }], { embeddings: [new Float32Array(16).fill(1)] });
      await loaded.delete(['c10']);
      expect(await loaded.count()).toBe(797);
    },
  );

  // One test per configuration: each starts a process, which takes seconds on a busy machine.
  for (const [indexType, metric] of configurations) {
    it(`save, load in a new process, search: the same hits (${indexType}, ${metric})`, async () => {
      const store = await filledStore(indexType, metric);
      const directory = await temporaryDirectory();
      await store.save(directory);
      const queries = clusteredVectors(5, 16, 9).map((query) => Array.from(query));
      const queriesFile = join(directory, 'queries.json');
      await writeFile(queriesFile, JSON.stringify(queries));
      const { stdout } = await run(
        process.execPath,
        nodeArguments('search-saved-store.ts', directory, queriesFile, '15'),
        {
          cwd: packageRoot,
          env: { ...process.env, NODE_OPTIONS: '' },
        },
      );
      const other = JSON.parse(stdout) as {
        count: number;
        results: { id: string; score: number; chunk: unknown }[][];
      };
      expect(other.count).toBe(await store.count());
      for (const [index, query] of queries.entries()) {
        const here = (await store.search(query, { topK: 15 })).hits;
        expect(other.results[index]!.map((hit) => hit.id)).toEqual(ids(here));
        expect(other.results[index]!.map((hit) => hit.chunk)).toEqual(here.map((hit) => hit.chunk));
        other.results[index]!.forEach((hit, position) => {
          expect(hit.score).toBe(here[position]!.score);
        });
      }
    });
  }

  it('a save that fails before its commit leaves the previous save readable, and no stray files', async () => {
    const directory = await temporaryDirectory();
    const store = await filledStore('hnsw', 'cosine');
    await store.save(directory);
    const before = (await readdir(directory)).sort();
    await store.add([{ id: 'later', text: 'later' }], { embeddings: [new Float32Array(16).fill(2)] });
    failures.rename = true;
    await expect(store.save(directory)).rejects.toThrow(/simulated crash/);
    failures.rename = false;
    expect((await readdir(directory)).sort()).toEqual(before);
    const loaded = await loadFaissStore(directory);
    expect(await loaded.count()).toBe(797);
    await store.save(directory);
    expect(await (await loadFaissStore(directory)).count()).toBe(798);
    expect(await readdir(directory)).toHaveLength(2);
  });

  it('a process killed part-way through saves leaves a readable save, the previous one or the new one', async () => {
    const directory = await temporaryDirectory();
    let lastSaved = 0;
    let version = 1;
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, nodeArguments('save-loop.ts', directory, String(version)), {
        cwd: packageRoot,
        env: { ...process.env, NODE_OPTIONS: '' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      const lines: string[] = [];
      let pending = '';
      // Wait for a save to be under way (after a first one completed), then kill it mid-way.
      await new Promise<void>((resolve, reject) => {
        child.on('error', reject);
        child.on('exit', (code) => reject(new Error(`save-loop exited early (${code})`)));
        child.stdout!.on('data', (data: Buffer) => {
          const text = pending + data.toString();
          const complete = text.split('\n');
          pending = complete.pop()!;
          lines.push(...complete);
          const saved = lines.filter((line) => line.startsWith('saved ')).length;
          if (saved >= 1 && lines.at(-1)?.startsWith('saving ')) resolve();
        });
      });
      await new Promise((resolve) => setTimeout(resolve, round * 10));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const saved = lines.filter((line) => line.startsWith('saved ')).map((line) => Number(line.slice(6)));
      lastSaved = Math.max(lastSaved, ...saved);
      const started = Number(
        lines
          .filter((line) => line.startsWith('saving '))
          .at(-1)!
          .slice(7),
      );
      const loaded = await loadFaissStore(directory);
      expect(await loaded.count()).toBe(20_000);
      const hit = (await loaded.search(new Array(64).fill(0.1), { topK: 1 })).hits[0]!;
      const loadedVersion = hit.chunk.metadata!.version as number;
      // Either the last completed save, or the one that was being written when the process died.
      expect([lastSaved, started]).toContain(loadedVersion);
      lastSaved = loadedVersion;
      version = started + 1;
    }
  }, 120_000);

  it('debris of a crashed save (a half-written index file and manifest) does not hide the previous save', async () => {
    const directory = await temporaryDirectory();
    const store = await filledStore('flat', 'cosine');
    await store.save(directory);
    await writeFile(join(directory, 'zerda-faiss-0123456789abcdef.index'), Buffer.from('IxFI\u0010\u0000'));
    await writeFile(join(directory, `${MANIFEST_FILE}.0123456789abcdef.tmp`), '{"format":"zerda.faiss-st');
    expect(await (await loadFaissStore(directory)).count()).toBe(797);
  });

  describe('a corrupt or mismatched save is an IndexFormatError, and never reaches FAISS', () => {
    async function saved(indexType: FaissIndexType = 'hnsw') {
      const directory = await temporaryDirectory();
      const store = await filledStore(indexType, 'cosine');
      await store.save(directory);
      const manifestPath = join(directory, MANIFEST_FILE);
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
      const indexPath = join(directory, manifest.index.file);
      return { directory, manifestPath, manifest, indexPath };
    }
    const refused = async (promise: Promise<unknown>, message: RegExp) => {
      const error = await promise.catch((caught: unknown) => caught);
      expect(IndexFormatError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(message);
    };
    /** Rewrites the index file and the manifest's checksum of it, so only the layout check can tell. */
    async function rewriteIndex(save: Awaited<ReturnType<typeof saved>>, bytes: Buffer) {
      await writeFile(save.indexPath, bytes);
      save.manifest.index.bytes = bytes.byteLength;
      save.manifest.index.sha256 = createHash('sha256').update(bytes).digest('hex');
      await writeFile(save.manifestPath, JSON.stringify(save.manifest));
    }

    it('nothing saved there', async () => {
      await refused(loadFaissStore(join(await temporaryDirectory(), 'missing')), /No saved FAISS store/);
    });

    it('a flipped byte in the index file', async () => {
      const { directory, indexPath } = await saved();
      const bytes = await readFile(indexPath);
      bytes[Math.floor(bytes.length / 2)]! ^= 0x40;
      await writeFile(indexPath, bytes);
      await refused(loadFaissStore(directory), /does not match the manifest/);
    });

    it('a truncated or missing index file', async () => {
      const { directory, indexPath } = await saved('flat');
      await truncate(indexPath, 100);
      await refused(loadFaissStore(directory), /truncated, corrupt/);
      await rm(indexPath);
      await refused(loadFaissStore(directory), /missing/);
    });

    it('the index file of another save', async () => {
      const first = await saved();
      const second = await saved();
      await writeFile(first.indexPath, await readFile(second.indexPath));
      await refused(loadFaissStore(first.directory), /does not match the manifest/);
    });

    it('a manifest that is not JSON, of another format or version, or inconsistent', async () => {
      const { directory, manifestPath, manifest } = await saved();
      await writeFile(manifestPath, '{"format": "zerda.faiss-store", "vers');
      await refused(loadFaissStore(directory), /not valid JSON/);
      await writeFile(manifestPath, JSON.stringify({ ...manifest, format: 'zerda.in-memory-vector-store' }));
      await refused(loadFaissStore(directory), /Not a Zerda FAISS store/);
      await writeFile(manifestPath, JSON.stringify({ ...manifest, version: 2 }));
      await refused(loadFaissStore(directory), /Format version 2 is not supported/);
      await writeFile(manifestPath, JSON.stringify({ ...manifest, count: manifest.count + 1 }));
      await refused(loadFaissStore(directory), /should hold/);
      await writeFile(
        manifestPath,
        JSON.stringify({ ...manifest, labels: manifest.labels.slice(1), count: manifest.count - 1 }),
      );
      await refused(loadFaissStore(directory), /vectors, the manifest has/);
      const duplicated = [...manifest.labels];
      duplicated[10] = duplicated[11];
      await writeFile(manifestPath, JSON.stringify({ ...manifest, labels: duplicated }));
      await refused(loadFaissStore(directory), /saved chunks are invalid.*duplicate/);
    });

    it('an index file whose FAISS layout contradicts the manifest', async () => {
      const save = await saved('hnsw');
      const bytes = await readFile(save.indexPath);
      await writeFile(save.manifestPath, JSON.stringify({ ...save.manifest, metric: 'l2' }));
      await refused(loadFaissStore(save.directory), /metric ip, the manifest's l2 needs l2/);
      const flat = await saved('flat');
      await writeFile(
        flat.manifestPath,
        JSON.stringify({
          ...flat.manifest,
          indexType: 'hnsw',
          hnsw: { m: 32, efConstruction: 40, efSearch: 64 },
        }),
      );
      await refused(loadFaissStore(flat.directory), /a flat index, the manifest says hnsw/);
      await writeFile(save.manifestPath, JSON.stringify({ ...save.manifest, dimension: 8 }));
      await refused(loadFaissStore(save.directory), /dimension 16, the manifest says 8/);
      // Cut inside the graph, or with bytes after it: found by reading the layout, checksum or not.
      await rewriteIndex(save, bytes.subarray(0, 5000));
      await refused(loadFaissStore(save.directory), /cannot be read: the index data ends inside/);
      await rewriteIndex(save, Buffer.concat([bytes, Buffer.from([0])]));
      await refused(loadFaissStore(save.directory), /1 unexpected bytes after the index/);
      await rewriteIndex(save, Buffer.from('IVFPQ index of some other kind'));
      await refused(loadFaissStore(save.directory), /unsupported index type 'IVFP'/);
    });

    it('settings that contradict the save', async () => {
      const { directory } = await saved('hnsw');
      await refused(loadFaissStore(directory, { metric: 'l2' }), /uses the cosine metric/);
      await refused(loadFaissStore(directory, { indexType: 'flat' }), /is a hnsw index/);
      await refused(loadFaissStore(directory, { dimension: 32 }), /has dimension 16/);
      await refused(loadFaissStore(directory, { hnsw: { m: 16 } }), /has M 32/);
      // efSearch is a search-time setting: it may change.
      const loaded = await loadFaissStore(directory, { hnsw: { efSearch: 200 } });
      expect(loaded.stats().hnsw).toEqual({ ...HNSW_DEFAULTS, efSearch: 200 });
    });
  });

  it('the save is a snapshot taken at the call', async () => {
    const directory = await temporaryDirectory();
    const store = await filledStore('flat', 'l2');
    const saving = store.save(directory);
    await store.add([{ id: 'after', text: 'after' }], { embeddings: [new Float32Array(16)] });
    await saving;
    expect(await (await loadFaissStore(directory)).count()).toBe(797);
    expect(await store.count()).toBe(798);
  });
});

describe.skipIf(faissSkipped)('indexes go to FAISS and back through a temporary file', () => {
  beforeAll(async () => {
    await requireFaiss();
  });

  // Every save, load and HNSW removal serialises the index; faiss-node's own buffer functions
  // would keep a copy of it in native memory each time, which at a million vectors is gigabytes.
  it('writes an index out and reads it back hundreds of times in constant memory', async () => {
    const growth = async (through: 'file' | 'buffer') => {
      const { stdout } = await run(
        process.execPath,
        ['--expose-gc', ...nodeArguments('serialise-loop.ts', through)],
        { cwd: packageRoot, env: { ...process.env, NODE_OPTIONS: '' } },
      );
      return JSON.parse(stdout) as { size: number; rounds: number; growth: number };
    };
    const file = await growth('file');
    expect(file.growth).toBeLessThan(file.rounds * file.size * 0.25);
    // The measurement sees a leak: faiss-node's toBuffer and fromBuffer keep two copies a round.
    const buffer = await growth('buffer');
    expect(buffer.growth).toBeGreaterThan(buffer.rounds * buffer.size);
  });

  // An index file is as large as the index (gigabytes at a million vectors). On Linux it has no
  // name (O_TMPFILE), so the system frees it with the process, however the process ends.
  it.runIf(process.platform === 'linux')(
    'a process killed while an index goes through its temporary file leaves nothing in the temporary folder',
    async () => {
      const folder = await mkdtemp(join(tmpdir(), 'zerda-faiss-kill-'));
      try {
        for (let round = 0; round < 5; round++) {
          const child = spawn(process.execPath, nodeArguments('serialise-loop.ts', 'forever'), {
            cwd: packageRoot,
            env: { ...process.env, NODE_OPTIONS: '', TMPDIR: folder },
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          children.push(child);
          // The loop spends nearly all its time writing or reading the file: killed at any moment
          // after it starts, it is almost surely in the middle of one.
          await new Promise<void>((resolve, reject) => {
            child.on('error', reject);
            child.on('exit', (code) => reject(new Error(`serialise-loop exited early (${code})`)));
            child.stdout!.on('data', (data: Buffer) => {
              if (data.toString().includes('looping')) resolve();
            });
          });
          await new Promise((resolve) => setTimeout(resolve, 20 + round * 15));
          child.removeAllListeners('exit');
          child.kill('SIGKILL');
          await new Promise((resolve) => child.once('exit', resolve));
          // (tsx keeps its cache there too.)
          const left = (await readdir(folder)).filter((name) => !name.startsWith('tsx-'));
          expect(left).toEqual([]);
        }
      } finally {
        for (const child of children.splice(0)) child.kill('SIGKILL');
        await rm(folder, { recursive: true, force: true });
      }
    },
    60_000,
  );

  it('refuses to save or load where no temporary file can be made, with a BackendError naming the folder', async () => {
    const store = await filledStore('hnsw', 'cosine');
    const directory = await temporaryDirectory();
    await store.save(directory);
    const elsewhere = await temporaryDirectory();
    const previous = process.env.TMPDIR;
    // A folder inside a file: it cannot be made, even by root.
    const unusable = join(directory, MANIFEST_FILE, 'tmp');
    process.env.TMPDIR = unusable;
    try {
      for (const attempt of [() => store.save(elsewhere), () => loadFaissStore(directory)]) {
        const error = await attempt().catch((caught: unknown) => caught);
        expect(BackendError.isInstance(error), String(error)).toBe(true);
        expect((error as Error).message).toContain(unusable);
      }
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
    }
    expect(await (await loadFaissStore(directory)).count()).toBe(await store.count());
  });
});
