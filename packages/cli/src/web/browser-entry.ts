// The browser side of the runtime test: runs the demo scenario in the page (persisting in IndexedDB
// when the URL asks) and leaves the outcome on `globalThis.__zerda` for the test to read. `?idle`
// runs nothing; `globalThis.__zerdaGrow()` then tries to add far more than the origin's quota allows.
import { BackendError, createIndexedDbStorage } from '@zerda/core';
import { openDemoCollection, runScenario, WEB_DEMO_DIMENSION } from './demo-app.js';

const DATABASE = 'zerda-runtime-test';
const params = new URLSearchParams((globalThis as { location?: { search: string } }).location?.search ?? '');

async function grow(): Promise<unknown> {
  const { collection } = await openDemoCollection(createIndexedDbStorage(DATABASE));
  const before = await collection.count();
  // Random words, so that the browser's compression of stored values cannot shrink them.
  const text = () => {
    const bytes = new Uint8Array(100_000);
    for (let at = 0; at < bytes.length; at += 65_536) crypto.getRandomValues(bytes.subarray(at, at + 65_536));
    return Array.from(bytes, (byte) => String.fromCharCode(97 + (byte % 26)))
      .join('')
      .replace(/(.{7})/g, '$1 ');
  };
  try {
    const chunks = Array.from({ length: 10 }, (_, i) => ({ id: `big-${i}`, text: text() }));
    // Vectors given, so the time goes to storing, not to embedding random text.
    const embeddings = chunks.map((_, i) =>
      Float32Array.from({ length: WEB_DEMO_DIMENSION }, (_, j) => Math.sin(i + j)),
    );
    await collection.add(chunks, { embeddings });
    await collection.checkpoint();
    return { before, refused: undefined };
  } catch (error) {
    return {
      before,
      refused: {
        name: (error as Error).name,
        typed: BackendError.isInstance(error),
        message: (error as Error).message,
      },
    };
  } finally {
    await collection.close().catch(() => undefined);
  }
}

(globalThis as { __zerdaGrow?: unknown }).__zerdaGrow = grow;
const work = params.has('idle')
  ? Promise.resolve(undefined)
  : runScenario(params.has('persist') ? createIndexedDbStorage(DATABASE) : undefined);
(globalThis as { __zerda?: unknown }).__zerda = work.then(
  (result) => ({ ok: true, result }),
  (error: unknown) => ({
    ok: false,
    error: error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error),
  }),
);
