// A Chroma server the soak run owns: started from the installed chromadb package (`chroma run`, as
// the Chroma tests start one), on a fixed port and data directory, so that after a SIGKILL it is
// started again over the same data and the same URL.
import { type ChildProcess, spawn } from 'node:child_process';
import { chromaCliPath } from '../../packages/chroma/src/test-utils/chroma-server.js';

export interface ChromaProcess {
  readonly url: string;
  /** True between a successful start and a kill or stop. */
  readonly running: boolean;
  start(): Promise<void>;
  /** SIGKILL, as a crash or an out-of-memory kill would. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
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

export function chromaProcess(path: string, port: number): ChromaProcess {
  const url = `http://127.0.0.1:${port}`;
  const cli = chromaCliPath();
  let child: ChildProcess | undefined;
  let running = false;

  async function startOnce(timeoutMs: number): Promise<void> {
    const started = spawn(
      process.execPath,
      [cli, 'run', '--path', path, '--port', String(port), '--host', '127.0.0.1'],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ANONYMIZED_TELEMETRY: 'False' } },
    );
    let output = '';
    const keep = (data: Buffer) => {
      output = (output + data.toString()).slice(-4_000);
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    child = started;
    const deadline = Date.now() + timeoutMs;
    while (!(await heartbeat(url))) {
      if (started.exitCode !== null || started.signalCode !== null) {
        throw new Error(`chroma run exited (${started.exitCode ?? started.signalCode}): ${output}`);
      }
      if (Date.now() > deadline) {
        started.kill('SIGKILL');
        await exited(started);
        throw new Error(`chroma run did not answer within ${timeoutMs} ms: ${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    running = true;
  }

  return {
    url,
    get running() {
      return running;
    },
    async start() {
      // The port may still be held for a moment after a kill: try again a few times.
      let lastError: unknown;
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          await startOnce(60_000);
          return;
        } catch (error) {
          lastError = error;
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
      throw lastError;
    },
    async kill() {
      running = false;
      if (child === undefined) return;
      child.kill('SIGKILL');
      await exited(child);
    },
    async stop() {
      running = false;
      if (child === undefined) return;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child?.kill('SIGKILL'), 5_000);
        await exited(child);
        clearTimeout(timer);
      }
    },
  };
}
