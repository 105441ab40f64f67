import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A Chroma server started for the tests: `chroma run` from the installed `chromadb` package. */
export interface ChromaServer {
  readonly url: string;
  readonly port: number;
  /** The data directory (a fresh temporary directory, removed by `stop`). */
  readonly path: string;
  readonly pid: number | undefined;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its data directory. */
  stop(): Promise<void>;
  /** Kills the server at once (SIGKILL), as a crash would; the data directory stays until `stop`. */
  kill(): Promise<void>;
}

export interface StartChromaServerOptions {
  /** Longest wait for the heartbeat, in ms (default 60,000). */
  startTimeoutMs?: number;
}

/**
 * The `chroma` command of the installed chromadb package: its CLI script, run with this Node.js
 * (what `node_modules/.bin/chroma` runs). The server itself is the native binding the package
 * loads (on Debian 12, chromadb-js-bindings-linux-x64-gnu pinned to 1.0.1: newer builds need
 * glibc 2.39).
 */
export function chromaCliPath(): string {
  // The package as this package's node_modules holds it (its exports map hides package.json).
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(directory, 'node_modules', 'chromadb', 'package.json');
    if (existsSync(manifest)) {
      const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: string | Record<string, string> };
      const script = typeof bin === 'string' ? bin : bin?.chroma;
      if (script === undefined)
        throw new Error(`the chromadb package at ${manifest} declares no chroma command`);
      return join(dirname(manifest), script);
    }
    const parent = dirname(directory);
    if (parent === directory) throw new Error('the chromadb package is not installed (pnpm install)');
    directory = parent;
  }
}

/** A port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

async function heartbeat(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/api/v2/heartbeat`, { signal: AbortSignal.timeout(1_000) });
    return response.ok;
  } catch {
    return false;
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts `chroma run --path <temporary directory> --port <free port> --host 127.0.0.1` and waits
 * for its v2 heartbeat. Tries another port if the first was taken meanwhile. Offline: the server
 * needs no network.
 */
export async function startChromaServer(options: StartChromaServerOptions = {}): Promise<ChromaServer> {
  const cli = chromaCliPath();
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const path = await mkdtemp(join(tmpdir(), 'zerda-chroma-'));
    const port = await freePort();
    try {
      return await startOn(cli, path, port, options.startTimeoutMs ?? 60_000);
    } catch (error) {
      lastError = error;
      await rm(path, { recursive: true, force: true });
    }
  }
  throw lastError;
}

async function startOn(
  cli: string,
  path: string,
  port: number,
  startTimeoutMs: number,
): Promise<ChromaServer> {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [cli, 'run', '--path', path, '--port', String(port), '--host', '127.0.0.1'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ANONYMIZED_TELEMETRY: 'False' },
    },
  );
  let output = '';
  const keep = (data: Buffer) => {
    output = (output + data.toString()).slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exitedEarly = false;
  child.once('exit', () => {
    exitedEarly = true;
  });

  const deadline = Date.now() + startTimeoutMs;
  while (!(await heartbeat(url))) {
    if (exitedEarly) {
      throw new Error(
        `chroma run exited before answering (exit ${child.exitCode ?? child.signalCode}):\n${output}`,
      );
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited(child);
      throw new Error(
        `chroma run did not answer its heartbeat at ${url} within ${startTimeoutMs} ms:\n${output}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  let stopped = false;
  return {
    url,
    port,
    path,
    pid: child.pid,
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited(child);
        clearTimeout(timer);
      }
      await rm(path, { recursive: true, force: true });
    },
  };
}
