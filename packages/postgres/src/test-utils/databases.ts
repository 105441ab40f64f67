import { createServer } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

/** An in-memory PGlite (a real Postgres in WebAssembly) with pgvector loaded. */
export async function createPGlite(): Promise<PGlite> {
  return PGlite.create({ extensions: { vector } });
}

/** A fresh table name, so every store of a shared database starts empty. */
export function freshTable(prefix = 'test'): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`;
}

/** A port on 127.0.0.1 that was free a moment ago (nothing listens on it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}
