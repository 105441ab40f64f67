// `zerda demo --web`: serves the demo page on a loopback port. The page's script is the built
// bundle (dist/web/demo-page.js in a published package) or, from a clone, bundled from the sources
// with Vite at start-up. Everything runs in the page; the server only hands out two files.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export const DEMO_PAGE_HTML = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'unsafe-inline'; img-src data:">
<title>Zerda demo</title>
<link rel="icon" href="data:,">
<body>
<script type="module" src="/demo-page.js"></script>
</body>
</html>
`;

/** The page's script: the built bundle where there is one, else bundled now from the sources. */
async function pageScript(): Promise<string> {
  const built = join(here, 'web', 'demo-page.js');
  if (existsSync(built)) return readFile(built, 'utf8');
  const source = join(here, 'demo-page.ts');
  if (!existsSync(source))
    throw new Error('the demo page is neither built (dist/web/demo-page.js) nor available as source');
  const { bundleForBrowser } = await import('./bundle.js');
  const outDir = await mkdtemp(join(tmpdir(), 'zerda-demo-page-'));
  try {
    return await readFile(await bundleForBrowser({ entry: source, outDir, name: 'demo-page' }), 'utf8');
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/** Starts the demo server on 127.0.0.1 (`port` 0 picks a free one); resolves with its URL. */
export async function serveDemo(port = 0): Promise<{ url: string; server: Server }> {
  const script = await pageScript();
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(DEMO_PAGE_HTML);
    } else if (path === '/demo-page.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}
