/*
 * `zerda demo` (what `pnpm demo` runs): the README's first example over the bundled sample corpus.
 * Split by concern: demo-args.ts reads the command line and holds the help, demo-run.ts runs the
 * demo on a collection, demo-format.ts formats it; the web page lives in ../../web/.
 */
import type { CliIo } from '../../io.js';
import { demoHelp, parseDemoArgs } from './demo-args.js';
import { formatDemoReport } from './demo-format.js';
import { runDemo } from './demo-run.js';

export { type DemoArgs, demoHelp, parseDemoArgs } from './demo-args.js';
export { explainHit, formatDemoReport } from './demo-format.js';
export {
  DEMO_DIMENSION,
  type DemoOptions,
  type DemoQueryResult,
  type DemoReport,
  runDemo,
} from './demo-run.js';

/** `zerda demo` from command-line arguments; returns the exit code. */
export async function demoCommand(argv: string[], io: CliIo): Promise<number> {
  const parsed = parseDemoArgs(argv);
  if (parsed.kind === 'help') {
    io.stdout(demoHelp);
    return 0;
  }
  if (parsed.kind === 'web') {
    const { serveDemo } = await import('../../web/serve-demo.js');
    const { url, server } = await serveDemo(parsed.port);
    io.stdout(`Zerda demo page: ${url}\n(everything runs in the page; Ctrl-C stops the server)\n`);
    await new Promise<void>((resolve) => {
      const stop = () => server.close(() => resolve());
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return 0;
  }
  const report = await runDemo(parsed.options);
  io.stdout(parsed.json ? `${JSON.stringify(report, null, 2)}\n` : formatDemoReport(report));
  return 0;
}
