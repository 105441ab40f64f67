import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { DatasetError } from './dataset-error.js';

/** One line of a text file with its 1-based number. */
export interface NumberedLine {
  line: number;
  text: string;
}

/**
 * Streams the lines of a UTF-8 text file (LF or CRLF) with their 1-based numbers, without a
 * leading byte-order mark. Blank lines are skipped. A missing file is a DatasetError.
 */
export async function* readLines(path: string): AsyncGenerator<NumberedLine> {
  await assertFile(path);
  const stream = createReadStream(path, { encoding: 'utf8' });
  const reader = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  try {
    for await (const raw of reader) {
      line++;
      const text = line === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
      if (text.trim().length === 0) continue;
      yield { line, text };
    }
  } catch (error) {
    throw new DatasetError({ message: `could not be read: ${describe(error)}`, path, cause: error });
  } finally {
    reader.close();
    stream.destroy();
  }
}

/** Throws a DatasetError unless `path` is an existing regular file. */
export async function assertFile(path: string): Promise<void> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new DatasetError({ message: 'is not a file', path });
  } catch (error) {
    if (DatasetError.isInstance(error)) throw error;
    throw new DatasetError({ message: `file not found (${describe(error)})`, path, cause: error });
  }
}

function describe(error: unknown): string {
  if (error instanceof Error)
    return 'code' in error && typeof error.code === 'string' ? error.code : error.message;
  return String(error);
}
