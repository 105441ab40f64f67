// Run in a new process by the crash test (keyword-save-crash.test.ts), which SIGKILLs it part-way
// through a save. Prints "ready"; on a line on stdin, loads <directory> as a restarted application
// would and prints "found <version>" (or "broken <reason>"), then saves the other version, then the
// first, and so on, printing "saving <n> <version>" before each save and "saved <n> <version>" once
// it has returned. Usage: keyword-save-loop.ts <directory>
//
// The test starts 200 of these, so it bundles this file and builds a V8 startup snapshot of it
// (`node --build-snapshot`): the versions are built once, in the snapshot, and a process starts
// about as fast as an empty Node. Run directly (through tsx), it works the same.
import { startupSnapshot } from 'node:v8';
import { saveKeywordRetriever } from '../keyword-files.js';
import type { KeywordRetriever } from '../keyword-retriever.js';
import { buildVersion, loadedVersion, otherVersion, type SaveVersion } from './save-versions.js';

const retrievers: Record<SaveVersion, KeywordRetriever> = { A: buildVersion('A'), B: buildVersion('B') };

async function main(directory: string): Promise<void> {
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => {
    let input = '';
    process.stdin.on('data', (data: Buffer) => {
      input += data.toString();
      if (input.includes('\n')) resolve();
    });
  });
  process.stdin.pause();
  let version: SaveVersion;
  try {
    const found = await loadedVersion(directory);
    process.stdout.write(`found ${found}\n`);
    version = otherVersion(found);
  } catch (error) {
    process.stdout.write(`broken ${String(error).replaceAll('\n', ' ')}\n`);
    return;
  }
  for (let n = 1; ; n++) {
    process.stdout.write(`saving ${n} ${version}\n`);
    await saveKeywordRetriever(retrievers[version], directory);
    process.stdout.write(`saved ${n} ${version}\n`);
    version = otherVersion(version);
  }
}

if (startupSnapshot.isBuildingSnapshot()) {
  // Started from the snapshot, the script's arguments begin at argv[1].
  startupSnapshot.setDeserializeMainFunction(() => void main(process.argv[1] as string));
} else {
  void main(process.argv[2] as string);
}
