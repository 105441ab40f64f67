import type { CliIo } from '../../io.js';
import { ProgressBar } from '../../progress.js';
import { parseTuneArgs } from './tune-args.js';
import { formatTuneReport, tuneHelp } from './tune-format.js';
import { runTune } from './tune-run.js';

export { parseTuneArgs } from './tune-args.js';
export { describeFusionConfig, formatTuneReport, tuneHelp } from './tune-format.js';
export { runTune, TUNE_DEFAULTS, type TuneContext, type TuneOptions, type TuneReport } from './tune-run.js';

/** `zerda tune` from command-line arguments; returns the exit code. */
export async function tuneCommand(argv: string[], io: CliIo): Promise<number> {
  const parsed = parseTuneArgs(argv);
  if (parsed === undefined) {
    io.stdout(tuneHelp);
    return 0;
  }
  const bar = new ProgressBar(io);
  let lastPhase = '';
  let report: Awaited<ReturnType<typeof runTune>>;
  try {
    report = await runTune(parsed.options, {
      onProgress: (phase, done, total) => {
        if (!bar.enabled && phase !== lastPhase) {
          // Not a terminal: one plain line per phase.
          io.stderr(`zerda tune: ${phase} (${total})\n`);
        }
        lastPhase = phase;
        bar.update(phase, total > 0 ? done / total : undefined, `${done}/${total}`, done === total);
      },
    });
  } finally {
    bar.clear();
  }
  io.stdout(parsed.json ? `${JSON.stringify(report, null, 2)}\n` : formatTuneReport(report));
  return 0;
}
