import { mkdtemp, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEBRIS_AGE_MS, readDataFile, writeManifestSaveFiles } from './manifest-save.js';

const save = (directory: string, text: string) =>
  writeManifestSaveFiles({
    directory,
    manifestFile: 'test.json',
    files: [
      { prefix: 'test-a', extension: '.bin', data: new TextEncoder().encode(text) },
      { prefix: 'test-b', extension: '.txt', data: text.toUpperCase() },
    ],
    manifest: (files) => ({ files }),
    dataFilesOf: (manifest) =>
      ((manifest as { files: Array<{ file: string }> }).files ?? []).map((f) => f.file),
  });

describe('writeManifestSaveFiles', () => {
  it('commits several files under one manifest and leaves only the current save', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'zerda-manifest-'));
    await save(directory, 'first');
    await save(directory, 'second');
    const names = (await readdir(directory)).sort();
    expect(names).toHaveLength(3);
    const { files } = JSON.parse(await readFile(join(directory, 'test.json'), 'utf8'));
    expect(names).toEqual(['test.json', ...files.map((file: { file: string }) => file.file)].sort());
    expect(new TextDecoder().decode(await readDataFile(directory, files[0], 'data file'))).toBe('second');
    expect(new TextDecoder().decode(await readDataFile(directory, files[1], 'data file'))).toBe('SECOND');
  });

  it('removes debris of saves that never committed once it is old, and nothing else', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'zerda-manifest-'));
    await save(directory, 'first');
    const old = new Date(Date.now() - DEBRIS_AGE_MS - 60_000);
    const debris = [
      'test-a-0123456789abcdef.bin',
      'test-b-0123456789abcdef.txt',
      'test.json.0123456789abcdef.tmp',
    ];
    for (const name of debris) {
      await writeFile(join(directory, name), 'half');
      await utimes(join(directory, name), old, old);
    }
    // Fresh debris could be a save in progress elsewhere; a file of another kind is not ours.
    await writeFile(join(directory, 'test-a-fedcba9876543210.bin'), 'in progress');
    await writeFile(join(directory, 'notes.txt'), 'the user’s');
    await utimes(join(directory, 'notes.txt'), old, old);
    await save(directory, 'second');
    const names = await readdir(directory);
    for (const name of debris) expect(names).not.toContain(name);
    expect(names).toContain('test-a-fedcba9876543210.bin');
    expect(names).toContain('notes.txt');
    expect(names.filter((name) => /^test-[ab]-[0-9a-f]{16}/.test(name))).toHaveLength(3);
  });
});
