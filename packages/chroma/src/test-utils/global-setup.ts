import type { TestProject } from 'vitest/node';
import { type ChromaServer, startChromaServer } from './chroma-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL of the Chroma server the tests run against. */
    chromaUrl: string;
  }
}

/**
 * Starts one real Chroma server for the package's tests (or uses ZERDA_TEST_CHROMA_URL, for
 * example a server in a container) and gives its URL to the tests (`inject('chromaUrl')`).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.ZERDA_TEST_CHROMA_URL;
  if (external) {
    project.provide('chromaUrl', external);
    return async () => {};
  }
  const server: ChromaServer = await startChromaServer();
  project.provide('chromaUrl', server.url);
  return () => server.stop();
}
