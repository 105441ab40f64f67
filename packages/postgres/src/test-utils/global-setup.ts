import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { TestProject } from 'vitest/node';
import { createPGlite } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A connection string of the Postgres server (with pgvector) the wire tests run against. */
    postgresUrl: string;
  }
}

/**
 * Serves one PGlite database (with pgvector) over Postgres's wire protocol on a free loopback
 * port, so the tests run the real `pg` client against it; or uses ZERDA_TEST_POSTGRES_URL, for
 * example a Postgres server with pgvector in a container.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.ZERDA_TEST_POSTGRES_URL;
  if (external) {
    project.provide('postgresUrl', external);
    return async () => {};
  }
  const db = await createPGlite();
  // PGlite is one session: one connection at a time (the tests' pool has one).
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  project.provide('postgresUrl', `postgres://postgres@${server.getServerConn()}/postgres`);
  return async () => {
    await server.stop();
    await db.close();
  };
}
