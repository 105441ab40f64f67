import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { BM25SparseEncoder, HashEmbedder, openCollection } from '@zerda/core';
import { createFileStorage } from '@zerda/core/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from './postgres-store.js';
import { createPGlite, freshTable } from './test-utils/databases.js';

const writer = join(dirname(fileURLToPath(import.meta.url)), 'test-utils/database-collection-writer.ts');

let db: PGlite;
let server: PGLiteSocketServer;
let url: string;
beforeAll(async () => {
  db = await createPGlite();
  // The database lives in this process, so it outlives the writers killed below.
  server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  url = `postgres://postgres@${server.getServerConn()}/postgres`;
});
afterAll(async () => {
  await server?.stop();
  await db?.close();
});

/** Runs a writer and SIGKILLs it after `acks` acknowledged writes plus `jitterMs`; returns what it acknowledged. */
async function killWriter(directory: string, table: string, run: number, acks: number, jitterMs: number) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=@zerda/source', writer, url, directory, table, String(run)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const added = new Set<string>();
  const deleted = new Set<string>();
  const unsettled = new Set<string>();
  let seen = 0;
  let buffer = '';
  let killed = false;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => {
    buffer += text;
    for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
      const [kind, ...ids] = buffer.slice(0, newline).split(' ');
      buffer = buffer.slice(newline + 1);
      if (kind === 'adding' || kind === 'deleting') for (const id of ids) unsettled.add(id);
      if (kind === 'add' || kind === 'del') {
        seen++;
        for (const id of ids) {
          unsettled.delete(id);
          (kind === 'add' ? added : deleted).add(id);
          if (kind === 'del') added.delete(id);
        }
        if (seen >= acks && !killed) {
          killed = true;
          setTimeout(() => child.kill('SIGKILL'), jitterMs);
        }
      }
    }
  });
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.on('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  );
  expect(signal, `the writer of run ${run} exited with code ${code} instead of being killed`).toBe('SIGKILL');
  // The server rolls back the dead connection's transaction when it sees the socket close.
  for (let wait = 0; db.isInTransaction() && wait < 50; wait++) await new Promise((r) => setTimeout(r, 100));
  return { added, deleted, unsettled };
}

describe('a collection with its keyword side in Postgres survives SIGKILL at random points', () => {
  it('keeps every acknowledged write and statistics equal to the database after each kill', {
    timeout: 300_000,
  }, async () => {
    const directory = await mkdtemp(join(tmpdir(), 'zerda-db-crash-'));
    const table = freshTable('crash');
    let seed = 11;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const present = new Set<string>();
    const absent = new Set<string>();
    try {
      for (let run = 0; run < 5; run++) {
        const { added, deleted, unsettled } = await killWriter(
          directory,
          table,
          run,
          1 + Math.floor(random() * 12),
          random() * 30,
        );
        for (const id of added) present.add(id);
        for (const id of deleted) {
          present.delete(id);
          absent.add(id);
        }
        const collection = await openCollection({
          store: createPostgresStore({
            pglite: db,
            table,
            embedder: new HashEmbedder({ dimension: 16 }),
            index: 'exact',
            sparse: true,
          }),
          storage: createFileStorage(directory),
          keyword: 'database',
        });
        const held = new Set<string>();
        const recount = new BM25SparseEncoder();
        for await (const page of collection.list()) {
          for (const chunk of page) held.add(chunk.id);
          recount.add(page.map((chunk) => chunk.text));
        }
        // A write that was in flight may have happened or not; the database says which.
        for (const id of unsettled) {
          if (held.has(id)) present.add(id);
          else present.delete(id);
        }
        const lost = [...present].filter((id) => !held.has(id));
        const resurrected = [...absent].filter((id) => held.has(id));
        expect(lost, `run ${run}: acknowledged adds missing`).toEqual([]);
        expect(resurrected, `run ${run}: acknowledged deletes present`).toEqual([]);
        expect(collection.encoder.stats.documentCount, `run ${run}: statistics count`).toBe(held.size);
        expect(collection.encoder.save(), `run ${run}: statistics equal a recount of the database`).toEqual(
          recount.save(),
        );
        const { hits } = await collection.retrieve('wind turbine', { mode: 'keyword', k: 3 });
        expect(hits.length).toBeGreaterThan(0);
        await collection.close();
      }
      expect(present.size).toBeGreaterThan(0);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
