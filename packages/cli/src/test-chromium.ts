/**
 * Test helper: drives a real headless Chromium over the Chrome DevTools Protocol on a pipe
 * (`--remote-debugging-pipe`: commands on file descriptor 3, replies on 4, NUL-separated JSON),
 * so no WebSocket client or browser-automation package is needed. It opens a page, collects
 * console errors, uncaught exceptions, browser log errors (CSP violations, failed loads) and
 * every network request, and evaluates expressions in the page.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** The Chromium binary: CHROMIUM_PATH, else `chromium` (Debian's package) or a known name on PATH. */
export function findChromium(): string | undefined {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return existsSync(configured) ? configured : undefined;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    try {
      const path = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (path) return path;
    } catch {
      // not this one
    }
  }
  return undefined;
}

export interface PageReport {
  /** Console errors and assertion failures, uncaught exceptions, browser log errors. */
  errors: string[];
  /** Every URL the page requested. */
  requests: string[];
}

export interface BrowserPage {
  /** Opens `url` and waits for its load event. */
  open(url: string): Promise<void>;
  /** Evaluates an expression in the page and returns its value (JSON-serialisable). */
  evaluate<T>(expression: string): Promise<T>;
  /** What the page did since it was opened. */
  report(): PageReport;
  /** Sends a DevTools Protocol command for the page (for example `Storage.overrideQuotaForOrigin`). */
  command(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** A PNG screenshot of the page as it is now. */
  screenshot(): Promise<Buffer>;
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

/** Starts Chromium, runs `use` with a page, and always stops Chromium and removes its profile. */
export async function withChromium<T>(
  use: (page: BrowserPage) => Promise<T>,
  options: { timeoutMs?: number } = {},
): Promise<T> {
  const binary = findChromium();
  if (binary === undefined) {
    throw new Error(
      'Chromium was not found: install it (Debian: apt-get install chromium; scripts/ci.sh does) or set CHROMIUM_PATH',
    );
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  const profile = await mkdtemp(join(tmpdir(), 'zerda-chromium-'));
  const child: ChildProcess = spawn(
    binary,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-extensions',
      '--disable-default-apps',
      '--no-first-run',
      '--no-default-browser-check',
      '--mute-audio',
      `--user-data-dir=${profile}`,
      '--remote-debugging-pipe',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-4000);
  });
  const input = child.stdio[3] as Writable;
  const output = child.stdio[4] as Readable;

  let nextId = 1;
  const pending = new Map<
    number,
    { resolve: (value: Record<string, unknown>) => void; reject: (e: Error) => void }
  >();
  const listeners: Array<(message: Message) => void> = [];
  let exited: Error | undefined;
  const failAll = (error: Error) => {
    exited = error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  child.on('exit', (code, signal) =>
    failAll(new Error(`Chromium exited (code ${code}, signal ${signal}): ${stderr.trim().slice(-1500)}`)),
  );
  child.on('error', (error) => failAll(error));

  let buffer = Buffer.alloc(0);
  output.on('data', (data: Buffer) => {
    buffer = Buffer.concat([buffer, data]);
    let end = buffer.indexOf(0);
    while (end >= 0) {
      const message = JSON.parse(buffer.subarray(0, end).toString('utf8')) as Message;
      buffer = buffer.subarray(end + 1);
      end = buffer.indexOf(0);
      if (message.id !== undefined) {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) waiter?.reject(new Error(`CDP: ${message.error.message}`));
        else waiter?.resolve(message.result ?? {});
      } else {
        for (const listener of listeners) listener(message);
      }
    }
  });

  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      if (exited) {
        reject(exited);
        return;
      }
      const id = nextId++;
      pending.set(id, { resolve, reject });
      input.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  const withTimeout = <V>(promise: Promise<V>, what: string): Promise<V> =>
    new Promise<V>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out after ${timeoutMs} ms: ${what}`)),
        timeoutMs,
      );
      promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });

  try {
    const { targetId } = await withTimeout(
      send('Target.createTarget', { url: 'about:blank' }),
      'create a page',
    );
    const { sessionId } = (await withTimeout(
      send('Target.attachToTarget', { targetId, flatten: true }),
      'attach to the page',
    )) as { sessionId: string };
    const errors: string[] = [];
    const requests: string[] = [];
    let loaded: (() => void) | undefined;
    listeners.push((message) => {
      if (message.sessionId !== sessionId || !message.params) return;
      const params = message.params;
      switch (message.method) {
        case 'Runtime.consoleAPICalled': {
          const type = String(params.type);
          if (type === 'error' || type === 'assert') {
            const args = (params.args as Array<{ value?: unknown; description?: string }>) ?? [];
            errors.push(`console.${type}: ${args.map((a) => String(a.value ?? a.description)).join(' ')}`);
          }
          return;
        }
        case 'Runtime.exceptionThrown': {
          const details = params.exceptionDetails as { text?: string; exception?: { description?: string } };
          errors.push(`exception: ${details.exception?.description ?? details.text}`);
          return;
        }
        case 'Log.entryAdded': {
          const entry = params.entry as { level?: string; text?: string; source?: string; url?: string };
          if (entry.level === 'error')
            errors.push(`log (${entry.source}): ${entry.text}${entry.url ? ` ${entry.url}` : ''}`);
          return;
        }
        case 'Network.requestWillBeSent':
          requests.push(String((params.request as { url?: string }).url));
          return;
        case 'Network.loadingFailed':
          errors.push(`failed to load: ${String(params.errorText)}`);
          return;
        case 'Page.loadEventFired':
          loaded?.();
          return;
      }
    });
    for (const domain of ['Runtime', 'Log', 'Page', 'Network']) {
      await withTimeout(send(`${domain}.enable`, {}, sessionId), `enable ${domain}`);
    }
    const page: BrowserPage = {
      async open(url) {
        errors.length = 0;
        requests.length = 0;
        const load = new Promise<void>((resolve) => {
          loaded = resolve;
        });
        const result = await withTimeout(send('Page.navigate', { url }, sessionId), `open ${url}`);
        if (typeof result.errorText === 'string') throw new Error(`cannot open ${url}: ${result.errorText}`);
        await withTimeout(load, `load ${url}`);
      },
      async evaluate<V>(expression: string) {
        const result = (await withTimeout(
          send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId),
          'evaluate',
        )) as { result?: { value?: unknown }; exceptionDetails?: { text?: string } };
        if (result.exceptionDetails) throw new Error(`evaluate: ${result.exceptionDetails.text}`);
        return result.result?.value as V;
      },
      report: () => ({ errors: [...errors], requests: [...requests] }),
      command: (method, params = {}) => withTimeout(send(method, params, sessionId), method),
      async screenshot() {
        const { data } = (await withTimeout(
          send('Page.captureScreenshot', { format: 'png' }, sessionId),
          'screenshot',
        )) as { data: string };
        return Buffer.from(data, 'base64');
      },
    };
    return await use(page);
  } finally {
    if (!exited) {
      await Promise.race([
        send('Browser.close').catch(() => undefined),
        new Promise((r) => setTimeout(r, 2000)),
      ]);
    }
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(profile, { recursive: true, force: true }).catch(() => undefined);
  }
}
