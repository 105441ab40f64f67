import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IndexFormatError, InvalidArgumentError } from '../errors/index.js';
import { gaussian, seededRandom } from './__tests__/clustered-data.js';
import { InMemoryVectorStore } from './in-memory-vector-store.js';
import { loadInMemoryVectorStore, MANIFEST_FILE, saveInMemoryVectorStore } from './store-files.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'zerda-vectors-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const dimension = 13;

async function filledStore(
  metric: 'cosine' | 'dot' | 'l2' = 'cosine',
  count = 120,
): Promise<InMemoryVectorStore> {
  const normal = gaussian(seededRandom(count));
  const store = new InMemoryVectorStore({ metric });
  await store.add(
    Array.from({ length: count }, (_, index) => ({
      id: `c${index}`,
      text: `chunk ${index}`,
      ...(index % 2 === 0 ? { docId: `d${index % 5}` } : {}),
      metadata: { index, kind: index % 3 === 0 ? 'a' : 'b', tags: ['t', `t${index % 4}`], flag: index > 50 },
    })),
    { embeddings: Array.from({ length: count }, () => Array.from({ length: dimension }, normal)) },
  );
  return store;
}

const queries = Array.from({ length: 5 }, (_, seed) => {
  const normal = gaussian(seededRandom(1000 + seed));
  return Float32Array.from({ length: dimension }, normal);
});

async function results(store: InMemoryVectorStore) {
  return Promise.all(
    queries.map((query) =>
      store.search(query, { topK: 7, filter: { kind: 'b', flag: true } }).then((r) => r.hits),
    ),
  );
}

async function filesIn(path: string): Promise<string[]> {
  return (await readdir(path)).sort();
}

async function vectorsFile(): Promise<string> {
  const files = await filesIn(directory);
  return join(directory, files.find((file) => file.endsWith('.bin'))!);
}

async function expectRefused(message: RegExp, settings = {}) {
  const error = await loadInMemoryVectorStore(directory, settings).catch((e: unknown) => e);
  expect(IndexFormatError.isInstance(error)).toBe(true);
  expect((error as Error).message).toMatch(message);
}

describe('InMemoryVectorStore save and load', () => {
  it.each(['cosine', 'dot', 'l2'] as const)(
    'round-trips a %s store: chunks, vectors, metric',
    async (metric) => {
      const store = await filledStore(metric);
      await store.delete(['c3', 'c40']);
      await saveInMemoryVectorStore(store, directory);
      const loaded = await loadInMemoryVectorStore(directory);
      expect(loaded.capabilities.metric).toBe(metric);
      expect(loaded.dimension).toBe(dimension);
      expect(await loaded.count()).toBe(118);
      expect(await results(loaded)).toEqual(await results(store));
      // Loading may choose another quantisation; results stay exact after re-scoring.
      const quantized = await loadInMemoryVectorStore(directory, { quantization: 'int8' });
      expect(await results(quantized)).toEqual(await results(store));
      // The loaded store is a normal store: it takes writes.
      await loaded.add([{ id: 'new', text: 'n' }], { embeddings: [queries[0]!] });
      expect((await loaded.search(queries[0]!, { topK: 1 })).hits[0]!.chunk.id).toBe('new');
    },
  );

  it('writes two files and replaces an earlier save, leaving nothing behind', async () => {
    const store = await filledStore();
    await saveInMemoryVectorStore(store, directory);
    const first = await filesIn(directory);
    expect(first).toHaveLength(2);
    expect(first).toContain(MANIFEST_FILE);
    await store.delete(['c0']);
    await saveInMemoryVectorStore(store, directory);
    const second = await filesIn(directory);
    expect(second).toHaveLength(2);
    expect(second).not.toEqual(first);
    expect(await (await loadInMemoryVectorStore(directory)).count()).toBe(119);
  });

  it('saves an empty store of known dimension, and refuses one of unknown dimension', async () => {
    await saveInMemoryVectorStore(new InMemoryVectorStore({ dimension: 4 }), directory);
    const loaded = await loadInMemoryVectorStore(directory);
    expect(await loaded.count()).toBe(0);
    expect(loaded.dimension).toBe(4);
    await expect(saveInMemoryVectorStore(new InMemoryVectorStore(), join(directory, 'x'))).rejects.toSatisfy(
      InvalidArgumentError.isInstance,
    );
  });

  describe('refuses with IndexFormatError', () => {
    beforeEach(async () => {
      await saveInMemoryVectorStore(await filledStore(), directory);
    });

    it('a directory without a save', async () => {
      await expect(loadInMemoryVectorStore(join(directory, 'nothing'))).rejects.toSatisfy(
        IndexFormatError.isInstance,
      );
    });

    it('a changed byte in the vectors', async () => {
      const path = await vectorsFile();
      const bytes = await readFile(path);
      bytes[100] = bytes[100]! ^ 0xff;
      await writeFile(path, bytes);
      await expectRefused(/does not match the manifest/);
    });

    it('a truncated vectors file', async () => {
      const path = await vectorsFile();
      await truncate(path, 50);
      await expectRefused(/does not match the manifest/);
    });

    it('a missing vectors file', async () => {
      await rm(await vectorsFile());
      await expectRefused(/missing/);
    });

    it('a manifest that is not JSON, or of another format or version', async () => {
      const path = join(directory, MANIFEST_FILE);
      const manifest = JSON.parse(await readFile(path, 'utf8'));
      await writeFile(path, '{"format": ');
      await expectRefused(/not valid JSON/);
      await writeFile(path, JSON.stringify({ ...manifest, format: 'something-else' }));
      await expectRefused(/Not a Zerda/);
      await writeFile(path, JSON.stringify({ ...manifest, version: 2 }));
      await expectRefused(/version 2 is not supported/);
    });

    it('a manifest whose numbers or chunks do not match the vectors', async () => {
      const path = join(directory, MANIFEST_FILE);
      const manifest = JSON.parse(await readFile(path, 'utf8'));
      await writeFile(path, JSON.stringify({ ...manifest, count: 119, chunks: manifest.chunks.slice(1) }));
      await expectRefused(/header does not match/);
      await writeFile(path, JSON.stringify({ ...manifest, chunks: manifest.chunks.slice(1) }));
      await expectRefused(/should hold 120 chunks/);
      await writeFile(path, JSON.stringify({ ...manifest, dimension: 12 }));
      await expectRefused(/header does not match/);
      await writeFile(path, JSON.stringify({ ...manifest, metric: 'l2' }));
      await expectRefused(/metric does not match/);
      const duplicated = [...manifest.chunks.slice(0, 119), manifest.chunks[0]];
      await writeFile(path, JSON.stringify({ ...manifest, chunks: duplicated }));
      await expectRefused(/saved chunks are invalid.*duplicate id/);
    });

    it('a consistent vectors file with a bad header or values', async () => {
      const path = await vectorsFile();
      const original = await readFile(path);
      const manifestPath = join(directory, MANIFEST_FILE);
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
      // Rewrites the vectors and their checksum, so only the content checks can catch it.
      const rewrite = async (change: (bytes: Buffer) => void) => {
        const bytes = Buffer.from(original);
        change(bytes);
        await writeFile(path, bytes);
        manifest.vectors.sha256 = createHash('sha256').update(bytes).digest('hex');
        await writeFile(manifestPath, JSON.stringify(manifest));
      };
      await rewrite((bytes) => bytes.write('NOTZERDA', 0, 'latin1'));
      await expectRefused(/bad magic number/);
      await rewrite((bytes) => bytes.writeUInt32LE(7, 8));
      await expectRefused(/Unsupported vectors file version 7/);
      await rewrite((bytes) => bytes.writeFloatLE(Number.NaN, 24 + 4 * dimension * 3));
      await expectRefused(/Vector 3 holds a value that is not finite/);
    });

    it('a vectors file named outside the directory', async () => {
      const path = join(directory, MANIFEST_FILE);
      const manifest = JSON.parse(await readFile(path, 'utf8'));
      manifest.vectors.file = '../elsewhere.bin';
      await writeFile(path, JSON.stringify(manifest));
      await expectRefused(/valid vectors file/);
    });

    it('settings that contradict the save', async () => {
      await expectRefused(/cosine metric, the settings ask for dot/, { metric: 'dot' });
      await expectRefused(/dimension 13, the settings or embedder 12/, { dimension: 12 });
      await expectRefused(/dimension 13/, {
        embedder: { dimension: 8, embed: () => Promise.resolve([]) },
      });
    });
  });
});
