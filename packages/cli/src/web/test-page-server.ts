/**
 * Test helper: serves a bundled browser application on 127.0.0.1 (a page at each of `pages`, which
 * loads `/app.js` as a module), and reads the outcome the page leaves on `globalThis.__zerda`.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PageServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  close(): Promise<void>;
}

export async function servePage(options: {
  /** The bundled module, served as `/app.js`. */
  script: string;
  title: string;
  /** Paths that answer with the page (default `/`). */
  pages?: readonly string[];
  /** Extra response headers for a path (the page's or the script's). */
  headers?: (path: string) => Record<string, string>;
}): Promise<PageServer> {
  const { script, title, pages = ['/'], headers = () => ({}) } = options;
  const page = `<!doctype html><meta charset="utf-8"><title>${title}</title><link rel="icon" href="data:,"><script type="module" src="/app.js"></script>`;
  const server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/app.js') {
      response.writeHead(200, { 'content-type': 'text/javascript', ...headers(path) });
      response.end(await readFile(script));
    } else if (pages.includes(path)) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers(path) });
      response.end(page);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What the page left on `globalThis.__zerda` (awaited); a page that failed throws its error. */
export async function pageOutcome<T>(evaluate: <V>(expression: string) => Promise<V>): Promise<T> {
  const outcome = await evaluate<{ ok: boolean; result?: T; error?: string }>('globalThis.__zerda');
  if (!outcome.ok) throw new Error(`the page failed: ${outcome.error}`);
  return outcome.result as T;
}
